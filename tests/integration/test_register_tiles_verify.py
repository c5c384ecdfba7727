"""(8) Register tiles on the CPU emulation (g++): gemm's cases with a tile of each size and
without one compute what the serial C does, each where the dispatcher picks it (the device's
registers steer it from the large tile to the small one to the kernel as written), and where
the tile's factors do not divide the grid, or the grid is smaller than a tile, the dispatcher
launches the kernel without a tile. `parakern verify --register-tiles` runs every case at random
points."""
from __future__ import annotations

from conftest import SAMPLES
from parakern.pipeline import Options
from parakern.strategies.decisions import strategy_codes
from parakern.strategies.register_tiles import TILES

GEMM = (SAMPLES / "polybench" / "gemm.c").read_text().replace('#include "../metafork.h"', '#include "metafork.h"')


def test_every_tile_size_and_the_kernel_as_written_compute_gemm():
    from parakern.verify import Session
    from parakern.verify.points import TREE, device
    seen = {}
    with Session(GEMM, "gemm.c", options=Options(strategies=strategy_codes())) as session:
        cases = session.analysis.results[0].tree.cases
        for registers in (1 << 16, 1 << 14, 1 << 13, 1 << 12, 3072):
            values = dict(ni=64, nj=64, nk=9, B0=4, B1=4, alpha=1.5, beta=0.5)   # 16 x 16 blocks
            point = session.run("gemm:0", values, device(registers, 1 << 16, 1024), rule=TREE)   # the tree's order
            assert point.ok and not point.mismatches, (registers, point.error, point.mismatches)
            seen[cases[point.expected - 1].kernel.tile] = point.expected
        assert set(seen) == set(TILES) | {()}, seen      # 8x8, 4x4 and no tile, each run and checked
        # 15 x 15 blocks: no tile divides them, so the kernel as written runs, on any device;
        # 5 x 5 blocks, fewer than a tile: the grid as written is not empty (it was taken for
        # the 8 x 8 tile's grid, of no block, and nothing ran)
        for n in (60, 20):
            point = session.run("gemm:0", dict(ni=n, nj=n, nk=5, B0=4, B1=4, alpha=2.0, beta=1.0),
                                device(1 << 16, 1 << 16, 1024), rule=TREE)
            assert point.ok and not point.mismatches, (n, point.error, point.mismatches)
            assert cases[point.expected - 1].kernel.tile == ()


def test_an_instance_of_the_large_tile_keeps_its_accumulators_in_registers_across_k():
    """matmul with cache(a, b) at B0 = ub1 = 4, s = 1 (the 8 x 8 tile's shape at small sizes):
    the instance loads its 64 coefficients of c before the k loop and stores them after it
    (they were loaded and stored on every k: a tile's copies are B0 rows apart, which the
    facts prove distinct), and computes what the serial C does."""
    import re

    from parakern.codegen import emit_file
    from parakern.verify import Session
    from parakern.verify.points import TREE, device
    text = (SAMPLES / "matmul.c").read_text().replace("meta_schedule {", "meta_schedule cache(a, b) {")
    values = dict(n=64, B0=4, ub1=4, s=1)       # 16 x 16 blocks: whole 8 x 8 tiles
    with Session(text, "t.c", emit=lambda a: emit_file(a, (values,)),
                 options=Options(strategies=strategy_codes())) as session:
        point = session.run("matmul:0", values, device(1 << 16, 1 << 16, 1024), rule=TREE)
        assert point.ok and not point.mismatches, (point.error, point.mismatches)
        case = session.analysis.results[0].tree.cases[point.expected - 1]
        assert case.kernel.tile == TILES[0]
        source = session.cu_text
    body = re.search(rf"void __launch_bounds__\(\d+\) matmul_0_case{point.expected}_B0_4_ub1_4_s_1\(.*?\n\}}",
                     source, re.S).group(0)
    head, rest = body.split("for (int k = 0;", 1)
    assert len(re.findall(r"float c_acc\w* = c\[", head)) == 64
    assert "= c[" not in rest.rsplit("__syncthreads", 1)[0]


def test_an_instance_with_ub1_at_run_time_lifts_its_coefficients_and_computes_matmul():
    """The accumulators' elements may differ by an expression the facts prove nonzero (ub1
    apart, ub1 >= 1): matmul's instance at s = 4 alone unrolls w and keeps its 4 coefficients
    in registers across k, and its product is the serial C's."""
    from parakern.codegen import emit_file
    from parakern.verify import Session
    from parakern.verify.points import TREE, device
    text = (SAMPLES / "matmul.c").read_text()
    values = dict(n=48, B0=6, ub1=3, s=4)
    with Session(text, "t.c", emit=lambda a: emit_file(a, ({"s": 4},))) as session:
        point = session.run("matmul:0", values, device(65536, 1 << 16, 1024), rule=TREE)
        assert point.ok and not point.mismatches, (point.error, point.mismatches)
        assert f"matmul_0_case{point.expected}_s_4(" in session.cu_text
        assert "float c_acc_w3 = c[" in session.cu_text
