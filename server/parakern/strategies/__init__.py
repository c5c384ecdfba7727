"""Optimization strategies O_i (paper section 3.4): pure maps Kernel -> Kernel.

One module per strategy; its class is the strategy's one description (decision codes,
the editor's and the CUDA comment's words: strategies/base.py), and strategies/decisions.py
derives the trail, the codes a user may enable and those words from `KINDS`. Adding a
strategy is adding its module and naming its class below.
"""
from __future__ import annotations

from parakern.strategies.accumulate import RegisterAccumulators
from parakern.strategies.base import Strategy
from parakern.strategies.cache import DropCache
from parakern.strategies.coarsen import CoarsenThreads
from parakern.strategies.cse import CommonSubexpressions
from parakern.strategies.granularity import ReduceGranularity
from parakern.strategies.register_pressure import RegisterPressure
from parakern.strategies.register_tiles import RegisterTiles, SmallerTiles

__all__ = ["Strategy", "KINDS", "OPT_IN", "default_strategies", "before_tree", "by_code"]

# Every strategy, in the order a trail names its decisions: the paper's (1) (4) (3) (2),
# then (5), (8) and (6) from beyond the paper.
KINDS: tuple[type[Strategy], ...] = (RegisterPressure, DropCache, ReduceGranularity, CommonSubexpressions,
                                     RegisterAccumulators, RegisterTiles, SmallerTiles, CoarsenThreads)
# Codes a user enables by name only (`Options.strategies`, the editor's parakern.strategies,
# --register-tiles): the tree reaches the kernel as written once (comprehensive._joined: matmul
# with cache(a, b) has 11 cases, 8x8, 4x4 and the 9 without tiles), but the tiles' own cases,
# 64 accesses for each one written, cost more analysis than the rest of the tree (the time
# model, the traffic, the no-fit regions: `optimize samples/matmul.c` takes 3.3 times the CPU).
OPT_IN = (RegisterTiles.code, SmallerTiles.code)
# The order the algorithm tries them in, the paper's (section 6): (i) register pressure on
# the IR, (ii) thread granularity, (iii) CSE, (iv) shared-memory caching. A strategy not
# here lowers no counter, so the algorithm would never choose it: the pipeline applies it
# once before the tree, and every case has it. A register tile (8), applied before the tree at
# its largest, is made smaller first where registers or shared memory refuse it (8b), as
# granularity is reduced in the paper: the tile's cases, then the kernel as written's.
_TREE_ORDER = (SmallerTiles, RegisterPressure, ReduceGranularity, CommonSubexpressions, DropCache, CoarsenThreads)


def default_strategies() -> list[Strategy]:
    """Fresh strategy objects, in order; a strategy with several levels appears once per level."""
    settled = frozenset(kind.code for kind in KINDS if kind not in _TREE_ORDER)
    return [strategy for kind in _TREE_ORDER for strategy in kind.instances(settled)]


def before_tree() -> list[Strategy]:
    """Fresh objects of the strategies applied once to the schedule before the tree."""
    return [strategy for kind in KINDS if kind not in _TREE_ORDER for strategy in kind.instances()]


def by_code(code: str) -> Strategy:
    """The first default strategy with decision code `code` ("(2)", "(3b)", "(4b)", ...)."""
    for strategy in default_strategies():
        if strategy.code == code:
            return strategy
    raise KeyError(f"no strategy with code {code}")
