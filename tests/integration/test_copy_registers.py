"""Registers of the instances at PPCG's tile (issue 38, point 2), counted by ptxas: matmul with
cache(a, b) at B0=32 ub1=32 s=4 (4 x 4 outputs per thread, a and b staged per k), sm_90. With
the copies in the k loop unrolled by nvcc, case 2 took 80 registers and case 1 spilled 16 bytes;
not unrolled (codegen/memory.py), none spills and none needs more than 64 (4 blocks of 256
threads per SM, as PPCG's 56)."""
import re
import shutil
import subprocess

import pytest

from conftest import SAMPLES
from parakern.codegen import emit_file, kernel_source
from parakern.pipeline import Options, analyze
from unit.test_copy_unroll import _copy_loops

NVCC = shutil.which("nvcc")


def _ptxas(tmp_path, text: str, arch: str) -> dict:
    """{kernel: (registers, spill store bytes)} of ptxas -v on the file."""
    source = tmp_path / "k.cu"
    source.write_text(text)
    done = subprocess.run([NVCC, "-cubin", f"-arch={arch}", "-O3", "-Xptxas", "-v", str(source),
                           "-o", str(tmp_path / "k.cubin")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = {}
    for part in re.split(r"ptxas info\s*: Compiling entry function ", done.stderr)[1:]:
        name = part.split("'")[1]
        out[name] = (int(re.search(r"Used (\d+) registers", part).group(1)),
                     int(re.search(r"(\d+) bytes spill stores", part).group(1)))
    return out


@pytest.mark.skipif(NVCC is None, reason="registers are counted with nvcc and ptxas")
def test_the_instances_at_ppcgs_tile_fit_64_registers_without_spilling(tmp_path):
    text = (SAMPLES / "matmul.c").read_text().replace("meta_schedule {", "meta_schedule cache(a, b) {")
    analysis = analyze(text, "samples/matmul.c", Options(target="sm_90"))
    figures = _ptxas(tmp_path, emit_file(analysis, ({"B0": 32, "ub1": 32, "s": 4},)), "sm_90")
    instances = {k: v for k, v in figures.items() if "_B0_32_ub1_32_s_4" in k}
    assert len(instances) == len(analysis.results[0].tree.cases), sorted(figures)
    assert all(spilled == 0 for _, spilled in instances.values()), instances
    assert max(registers for registers, _ in instances.values()) <= 64, instances
    (four_by_four,) = (v for k, v in instances.items() if "matmul_0_case2_" in k)
    assert four_by_four[0] <= 64


LINEAR_IN_A_LOOP = """#include "metafork.h"

void blocks(int n, int B, int s, float a[n], float b[n])
{
    int dim = n / (B * s);
    meta_schedule cache(a) {
        meta_for (int i = 0; i < dim; i++)
            for (int k = 0; k < s; k++)
                meta_for (int j = 0; j < B; j++)
                    b[(i * s + k) * B + j] = 2 * a[(i * s + k) * B + j];
    }
}
"""


def test_a_linear_copy_in_a_loop_keeps_nvccs_unrolling():
    # (here: its analysis counts a new kernel's registers with ptxas) nvcc batches a linear copy's loads by 4 (tuning/latency.py's COPY_BATCH): left as it was
    (result,) = analyze(LINEAR_IN_A_LOOP, "blocks.c").results
    case = next(c for c in result.tree.cases if c.kernel.cached and c.kernel.ir_level == 0)
    source = kernel_source(case, result.tree.cases.index(case) + 1, fixed=(("B", 32), ("s", 4)))
    assert "const int B = 32;  /* fixed at compile time */" in source
    loops = _copy_loops(source)
    assert loops and not any(loops.values()), loops
    assert source.index("for (int k = 0; k < s; k++)") < source.index("/* load the B elements of a")
