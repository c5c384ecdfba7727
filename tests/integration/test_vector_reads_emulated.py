"""Vector reads of a register tile's operands on the CPU emulation (g++): the tiled kernels that
read their operands as float4 (analysis/vector_layout.py) compute what the serial C does,
parametric and as compile-time instances, traced for the race check (PARAKERN_AT_SHARED4) and
not; and the check can fail: the same kernel with two lanes of its vector reads swapped does
not match."""
from __future__ import annotations

import re

import pytest

from conftest import SAMPLES
from parakern.pipeline import Options
from parakern.strategies.decisions import strategy_codes
from parakern.strategies.register_tiles import TILES

MATMUL = (SAMPLES / "matmul.c").read_text().replace("meta_schedule {", "meta_schedule cache(a, b) {")
GEMM = (SAMPLES / "polybench" / "gemm.c").read_text().replace(
    '#include "../metafork.h"', '#include "metafork.h"').replace("meta_schedule {", "meta_schedule cache(A, B) {")


def _run(text: str, name: str, values: dict, registers=(1 << 16,), emit=None, races: bool = True):
    """[(point, case)] at `values` on devices of each register count, and the CUDA compiled."""
    from parakern.verify import Session
    from parakern.verify.points import TREE, device
    with Session(text, name, emit=emit, races=races, options=Options(strategies=strategy_codes())) as session:
        cases = session.analysis.results[0].tree.cases
        runs = []
        for r in registers:
            point = session.run(f"{name.split('.')[0]}:0", values, device(r, 1 << 16, 1024), rule=TREE)
            runs.append((point, cases[point.expected - 1] if point.expected else None))
        return runs, session.cu_text


@pytest.mark.parametrize("races", [True, False])
def test_each_tile_reads_b_as_float4_and_computes_matmul(races):
    values = dict(n=64, B0=4, ub1=4, s=2)        # 16 x 8 blocks: whole 8 x 8 tiles
    runs, cu = _run(MATMUL, "matmul.c", values, (1 << 16, 1 << 14), races=races)
    for point, _ in runs:
        assert point.ok and not point.mismatches, (point.error, point.mismatches)
        kernel = re.search(rf"void matmul_0_case{point.expected}\(.*?\n\}}", cu, re.S).group(0)
        assert ("PARAKERN_AT_SHARED4(" if races else "reinterpret_cast<const float4 *>(b_shared)") in kernel
    assert [case.kernel.tile for _, case in runs] == list(TILES)


def test_gemm_with_its_operands_staged_reads_B_as_float4_and_computes_gemm():
    values = dict(ni=64, nj=64, nk=9, B0=4, B1=4, alpha=1.5, beta=0.5)
    runs, cu = _run(GEMM, "gemm.c", values, (1 << 16, 1 << 14))
    for point, _ in runs:
        assert point.ok and not point.mismatches, (point.error, point.mismatches)
    assert [case.kernel.tile for _, case in runs] == list(TILES) and "PARAKERN_AT_SHARED4(" in cu


def test_an_instance_reads_a_and_b_as_float4_and_a_lane_swapped_fails():
    from parakern.codegen import emit_file
    values = dict(n=64, B0=4, ub1=4, s=1)

    def emitted(analysis, swap: bool):
        text = emit_file(analysis, (values,))
        if swap:     # lanes x and y of every vector read exchanged: the wrong columns of b
            text = re.sub(r"(float4 \*>\(b_shared\)\[[^\]]*\])\.([xy])",
                          lambda m: m.group(1) + "." + "yx"["xy".index(m.group(2))], text)
        return text

    [(point, case)], cu = _run(MATMUL, "matmul.c", values, emit=lambda a: emitted(a, False), races=False)
    assert point.ok and not point.mismatches, (point.error, point.mismatches)
    assert case.kernel.tile == TILES[0]
    instance = re.search(rf"matmul_0_case{point.expected}_B0_4_ub1_4_s_1\(.*?\n\}}", cu, re.S).group(0)
    assert len(re.findall(r"float4 \*>\(b_shared\)", instance)) == 64
    assert len(re.findall(r"float4 \*>\(a_shared\)", instance)) == 64
    [(point, _)], _ = _run(MATMUL, "matmul.c", values, emit=lambda a: emitted(a, True), races=False)
    assert point.mismatches, "a kernel reading the wrong lanes matched the serial C"
