"""With register tiles, the tree of a product whose operands are staged (matmul with
cache(a, b): each tile refused by its registers or by its shared memory) has each tile's case
once and the tree without tiles once, under the region where neither tile fits: the kernel as
written is reached by four paths, and its subtree was built once per path (22 cases)."""
from __future__ import annotations

import pytest
import sympy

from conftest import SAMPLES
from parakern.pipeline import Options, analyze
from parakern.strategies.decisions import strategy_codes
from parakern.strategies.register_tiles import TILES
from parakern.symbolic import constraints as cs

MATMUL_AB = (SAMPLES / "matmul.c").read_text().replace("meta_schedule {", "meta_schedule cache(a, b) {")


def tree(options: Options):
    return analyze(MATMUL_AB, str(SAMPLES / "matmul_ab.c"), options).results[0].tree


@pytest.mark.slow
def test_matmul_with_staged_operands_has_each_tile_once_then_the_tree_without_tiles_once():
    tiled, plain = tree(Options(strategies=strategy_codes())), tree(Options())
    assert [c.kernel.tile for c in tiled.cases if c.kernel.tile] == list(TILES)
    untiled = [c for c in tiled.cases if not c.kernel.tile]
    without = [tuple(d for d in c.decisions if d not in ("(8)", "(8b)")) for c in untiled]
    assert without == [c.decisions for c in plain.cases]
    assert len({c.kernel for c in tiled.cases}) == len(tiled.cases)
    assert tiled.coverage.status == "proved"
    # each such case lies in its twin's region, where no tile was preferred
    for case, twin in zip(untiled, plain.cases):
        assert cs.implies(case.constraints.with_facts(tiled.facts), sympy.And(*twin.constraints.relations)) == "proved"
    large = sympy.And(*tiled.cases[0].constraints.relations)
    for case in tiled.cases[1:]:
        assert cs.consistent(cs.System(case.constraints.relations + (large,), tiled.facts)).status == "unsat"
