"""(8) Register tiles, in process: which schedules get one (products) and why the others do
not, the tiled schedule's grid (sympy), what its kernel needs of the parameters, and how many
results one thread computes. The tiled kernels run on the CPU emulation against the serial C
in tests/integration/test_register_tiles_verify.py."""
from __future__ import annotations

import pytest
import sympy

from conftest import SAMPLES
from parakern import syntax
from parakern.commands.args import strategies_of
from parakern.frontend import analyze_source
from parakern.kernel import Kernel
from parakern.pipeline import Options, _enabled
from parakern.strategies import default_strategies
from parakern.strategies.register_tiles import TILES, RegisterTiles, SmallerTiles, divides, refusal, tiled, without_tile
from parakern.symbolic.symbols import sym

PRODUCTS = ["polybench/gemm.c", "polybench/syrk.c", "polybench/syr2k.c", "polybench/two_mm.c",
            "polybench/three_mm.c", "polybench/mm_tile.c", "matmul.c"]


def schedules(name: str):
    path = SAMPLES / name
    return analyze_source(path.read_text(), str(path)).schedules


def updates(block: syntax.Block, array: str) -> int:
    """How many statements of the body write `array`."""
    return sum(1 for n in syntax.walk(block) if isinstance(n, syntax.Assign)
               and isinstance(n.target, syntax.Index) and n.target.array == array)


@pytest.mark.parametrize("name, words", [
    ("matadd.c", "would share nothing"),          # no load two blocks of a row share
    ("transpose.c", "would share nothing"),
    ("stencil2d.c", "would share nothing"),
    ("saxpy.c", "the grid has one level"),
    ("polybench/mvt.c", "the grid has one level"),
])
def test_a_schedule_that_is_no_product_gets_no_tile_and_is_told_why(name, words):
    for schedule in schedules(name):
        assert words in refusal(schedule)
        kernel = Kernel.initial(schedule)
        assert RegisterTiles().apply(kernel) is None
        assert RegisterTiles().why_not(kernel).startswith("register tiles: ")


def test_the_tiled_gemm_has_a_grid_smaller_by_the_tile_and_needs_its_factors_to_divide_it():
    (gemm,) = schedules("polybench/gemm.c")
    gi, gj = sym("gi"), sym("gj")
    for tile in TILES:
        t = tiled(gemm, tile)
        extents = [sympy.simplify(lp.extent) for lp in t.grid]
        assert sympy.simplify(extents[0] - gi / tile[0]) == 0 or sympy.simplify(extents[0] - sympy.floor(gi / tile[0])) == 0
        assert sympy.simplify(extents[1] - gj / tile[1]) == 0 or sympy.simplify(extents[1] - sympy.floor(gj / tile[1])) == 0
        assert [lp.extent for lp in t.block] == [lp.extent for lp in gemm.block]     # the threads stay
        assert divides(gemm, tile) == (sympy.Eq(sympy.Mod(gi, tile[0]), 0), sympy.Eq(sympy.Mod(gj, tile[1]), 0))


def test_a_thread_of_the_tiled_gemm_computes_tile_many_results():
    (gemm,) = schedules("polybench/gemm.c")
    before = updates(gemm.body, "C")
    for tile in TILES:
        assert updates(tiled(gemm, tile).body, "C") == before * tile[0] * tile[1]


def test_smaller_tiles_step_down_to_the_kernel_as_written():
    (gemm,) = schedules("polybench/gemm.c")
    kernel = RegisterTiles().apply(Kernel.initial(gemm))
    assert kernel.tile == TILES[0] and kernel.requires == divides(gemm, TILES[0])
    steps = SmallerTiles.instances()
    for level, step in enumerate(steps, start=1):
        assert all(other.apply(kernel) is None for other in steps if other is not step)
        kernel = step.apply(kernel)
        if level < len(TILES):
            assert kernel.tile == TILES[level] and kernel.schedule == tiled(gemm, TILES[level])
    assert kernel.tile == () and kernel.schedule == gemm and kernel.requires == ()
    assert without_tile(kernel) is kernel


def test_register_tiles_are_offered_where_they_are_asked_for_only():
    """Opt-in: the default analysis has neither (8) nor (8b); --register-tiles, or a list of
    codes that names them (the editor's parakern.strategies), has both."""
    assert not {s.code for s in default_strategies() if _enabled(s, Options())} & {"(8)", "(8b)"}
    assert {"(8)", "(8b)"} <= set(strategies_of(type("Args", (), {"register_tiles": True})()))
    assert strategies_of(type("Args", (), {"register_tiles": False})()) is None
    chosen = Options(strategies=("(8)", "(8b)", "(6)"))
    assert {s.code for s in default_strategies() if _enabled(s, chosen)} == {"(8b)", "(6)"}
    assert _enabled(RegisterTiles(), chosen) and not _enabled(RegisterTiles(), Options())



def test_a_tiled_schedule_s_profile_point_keeps_its_granularity_a_granularity():
    """The 8 x 8 tile's grid is floor(floor(n/(s*ub1))/8): every floor is dropped before the
    grid's growth is read, so s, which it shrinks by, is a granularity (2), not a data size.
    Dropping them one atom at a time missed the outer floor in some hash orders: the point,
    and with it the tile's padding, changed from one run of the same command to the next."""
    from parakern.analysis.point import profile_point
    text = (SAMPLES / "matmul.c").read_text().replace("meta_schedule {", "meta_schedule cache(a, b) {")
    (schedule,) = analyze_source(text, "matmul.c").schedules
    assert profile_point(tiled(schedule, (8, 8))) == {"n": 1024, "B0": 8, "ub1": 32, "s": 2}
