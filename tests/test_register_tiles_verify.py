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
    from parakern.verify.points import device
    seen = {}
    with Session(GEMM, "gemm.c", options=Options(strategies=strategy_codes())) as session:
        cases = session.analysis.results[0].tree.cases
        for registers in (1 << 16, 1 << 14, 1 << 13, 1 << 12, 3072):
            values = dict(ni=64, nj=64, nk=9, B0=4, B1=4, alpha=1.5, beta=0.5)   # 16 x 16 blocks
            point = session.run("gemm:0", values, device(registers, 1 << 16, 1024))
            assert point.ok and not point.mismatches, (registers, point.error, point.mismatches)
            seen[cases[point.expected - 1].kernel.tile] = point.expected
        assert set(seen) == set(TILES) | {()}, seen      # 8x8, 4x4 and no tile, each run and checked
        # 15 x 15 blocks: no tile divides them, so the kernel as written runs, on any device;
        # 5 x 5 blocks, fewer than a tile: the grid as written is not empty (it was taken for
        # the 8 x 8 tile's grid, of no block, and nothing ran)
        for n in (60, 20):
            point = session.run("gemm:0", dict(ni=n, nj=n, nk=5, B0=4, B1=4, alpha=2.0, beta=1.0),
                                device(1 << 16, 1 << 16, 1024))
            assert point.ok and not point.mismatches, (n, point.error, point.mismatches)
            assert cases[point.expected - 1].kernel.tile == ()
