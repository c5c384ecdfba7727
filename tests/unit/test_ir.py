"""Lowering to LLVM IR: every sample assembles, and the IR is the program.

Semantics are checked by execution: the same kernel is lowered for the host
(thread and block indices as arguments), JIT-compiled with MCJIT, run for
every (block, thread) of a small launch, and compared with the serial C
program compiled by gcc.
"""
from __future__ import annotations

import dataclasses
import shutil
from ctypes import c_int, c_uint
from pathlib import Path

import pytest

from parakern.frontend import analyze_file, analyze_source
from parakern.ir import GlobalMemory, HostKernel, argument_names, kernel_ptx, launch_dims, lower
from parakern.kernel import Kernel

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "samples").glob("*.c"))
PTXAS = shutil.which("ptxas")
GCC = shutil.which("gcc")
needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc is needed to run the serial C program")


def sample_kernel(name: str) -> Kernel:
    result = analyze_file(ROOT / "samples" / f"{name}.c")
    assert result.schedules, [d.format() for d in result.diagnostics]
    return Kernel.initial(result.schedules[0])


def source_kernel(text: str) -> Kernel:
    result = analyze_source(text, "case.c")
    assert result.schedules, [d.format() for d in result.diagnostics]
    return Kernel.initial(result.schedules[0])


def array(ctype, values):
    return (ctype * len(values))(*values)


def test_kernel_signature_and_metadata():
    kernel = sample_kernel("saxpy")
    text = str(lower(kernel))
    assert 'target triple = "nvptx64-nvidia-cuda"' in text
    assert '!"kernel", i32 1' in text and "!nvvm.annotations" in text
    # arrays (global pointers) first, then parameters by C type; the derived `blocks` is no argument
    assert argument_names(kernel.schedule) == ("y", "x", "n", "B", "alpha")
    assert ('define void @"saxpy_kernel0"(float addrspace(1)* %"y", float addrspace(1)* %"x", '
            'i32 %"n", i32 %"B", float %"alpha")') in text
    assert "llvm.nvvm.read.ptx.sreg.ctaid.x" in text and "llvm.nvvm.read.ptx.sreg.tid.x" in text


def test_grid_and_block_axes_map_to_ctaid_and_tid():
    text = str(lower(sample_kernel("matadd")))
    for register in ("ctaid.x", "ctaid.y", "tid.x", "tid.y"):
        assert f"llvm.nvvm.read.ptx.sreg.{register}" in text
    assert "ctaid.z" not in text and "tid.z" not in text
    assert launch_dims(sample_kernel("matadd").schedule, {"N": 16, "B0": 4, "B1": 2}) == ((4, 4, 1), (2, 4, 1))


def test_host_variant_takes_indices_as_arguments():
    text = str(lower(sample_kernel("saxpy"), host=True))
    assert "nvvm" not in text and "addrspace" not in text
    assert 'i32 %"ctaid_x", i32 %"ctaid_y", i32 %"ctaid_z", i32 %"tid_x", i32 %"tid_y", i32 %"tid_z")' in text


def test_levels_above_zero_mark_loops_nounroll():
    kernel = sample_kernel("matvec")
    assert '.pragma "nounroll"' in kernel_ptx(kernel, 1)
    assert "llvm.loop.unroll.disable" in str(lower(dataclasses.replace(kernel, ir_level=1)))
    assert "llvm.loop.unroll.disable" not in str(lower(kernel))


def test_kernel_ptx_is_cached_per_variant():
    kernel = sample_kernel("transpose")
    assert kernel_ptx(kernel) is kernel_ptx(dataclasses.replace(kernel, decisions=("(2)",)))
    assert kernel_ptx(kernel, 0) != kernel_ptx(kernel, 1)


def test_memory_hook_sees_every_access_and_body():
    class Recording(GlobalMemory):
        def __init__(self):
            self.arrays, self.bodies = [], 0

        def before_body(self, fn):
            self.bodies += 1

        def address(self, fn, array, subscripts):
            self.arrays.append((array.name, len(subscripts)))
            return super().address(fn, array, subscripts)

    memory = Recording()
    lower(sample_kernel("matmul"), memory=memory)
    assert memory.bodies == 1
    assert sorted(set(memory.arrays)) == [("a", 2), ("b", 2), ("c", 2)]
    assert len(memory.arrays) == 3  # `c[..] += ..` takes its address once, as C evaluates it once


# ------------------------------------------------------------------ semantics
LEVELS_RUN = (0, 2)
# ------------------------------------------------------------------ C semantics
DIVISION = """
#include "metafork.h"
void divide(int n, int B, int d, unsigned e, int a[n], int q[n], int r[n], unsigned u[n], unsigned uq[n], unsigned ur[n])
{
    int blocks = n / B;
    meta_schedule {
        meta_for (int b = 0; b < blocks; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                q[i] = a[i] / d;
                r[i] = a[i] % d;
                uq[i] = u[i] / e;
                ur[i] = u[i] % e;
            }
    }
}
"""


def _c_div(a: int, d: int) -> tuple[int, int]:
    q = abs(a) // abs(d) * (1 if (a >= 0) == (d > 0) else -1)  # C truncates toward zero
    return q, a - q * d


@pytest.mark.parametrize("d", [3, -3, 7, -7])
def test_division_and_modulo_follow_c_on_negative_operands(d):
    n, B, e = 16, 4, 5
    a = [-9, -8, -7, -6, -5, -3, -1, 0, 1, 3, 5, 6, 7, 8, 9, -2147483647]
    u = [0xFFFFFFF0 - i for i in range(n)]  # would be negative as int: udiv differs from sdiv
    q, r, uq, ur = array(c_int, [0] * n), array(c_int, [0] * n), array(c_uint, [0] * n), array(c_uint, [0] * n)
    HostKernel(source_kernel(DIVISION)).launch(
        dict(n=n, B=B, d=d, e=e, a=array(c_int, a), q=q, r=r, u=array(c_uint, u), uq=uq, ur=ur))
    assert list(zip(q, r)) == [_c_div(x, d) for x in a]
    assert list(uq) == [x // e for x in u] and list(ur) == [x % e for x in u]


OPERATORS = r"""#include <math.h>
#include "metafork.h"
#define HALF 0.5f

void ops(int n, int B, int d, unsigned u, double w, int a[n], unsigned ua[n], float f[n], double g[n], int o[n][8], float fo[n][4], double go[n][2])
{
    int blocks = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < blocks; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n && a[i] != 0 || i == 0) {
                    int x = a[i];
                    unsigned y = ua[i];
                    o[i][0] = x / d + x % d;
                    o[i][1] = (int)(y / u + y % u) + (y > 3u ? 1 : -1);
                    o[i][2] = (x << 2) ^ (x >> 3) ^ (~x & 12) | 5;
                    o[i][3] = !x + -x + (x > 0 ? x : -x) * 3;
                    int acc = 0;
                    for (int k = 1; k < 9; k += 2) {
                        int x = k * 2;
                        acc += x;
                        acc -= k;
                    }
                    acc *= 3;
                    acc /= 2;
                    acc %= 7;
                    acc <<= 1;
                    acc |= x & 1;
                    o[i][4] = acc + x;
                    o[i][5] = (int)(f[i] * 10.0f) + (int)g[i] + (unsigned)(x & 255);
                    o[i][6] = blocks + (x < 0 && y > 10u) + (x >= 0 || y == 0u);
                    long long big = (long long)x * 1000000;
                    o[i][7] = (int)(big % 1000003);
                    fo[i][0] = f[i] * HALF + 1.25f;
                    fo[i][1] = sqrtf(fabsf(f[i])) + fminf(f[i], 0.5f) + fmaxf(f[i], -0.5f);
                    fo[i][2] = floorf(f[i]) + ceilf(f[i]) + (float)x / 3;
                    fo[i][3] = x > 2 ? f[i] : (float)w;
                    go[i][0] = sqrt(fabs(g[i])) + floor(g[i]) * w + 0.1;
                    double h = g[i];
                    h += f[i];
                    h *= 2;
                    h -= x;
                    h /= 3;
                    go[i][1] = h + fmin(h, w) + fmax(h, -w) + ceil(h);
                }
            }
    }
}
"""

