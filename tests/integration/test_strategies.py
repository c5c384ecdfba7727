"""Optimization strategies: (2) CSE, (3b) granularity reduction, (4b) no shared memory.

Each strategy is checked on every sample (applies where it should, None
elsewhere), for purity, for the counters it changes (sympy equivalence), and
for semantics: the multiset of (array, read/write, element) executions,
enumerated for small parameter values, is the same before and after, and the
kernels run on the CPU (MCJIT) give the same arrays.
"""
from __future__ import annotations

import itertools

import pytest
import sympy

from parakern import syntax
from parakern.counters.shared_memory import SharedMemoryCounter
from parakern.counters.threads import ThreadsCounter
from parakern.frontend import analyze_source
from parakern.kernel import Kernel
from parakern.strategies.cache import DropCache
from parakern.strategies.cse import CommonSubexpressions
from parakern.strategies.granularity import ReduceGranularity
from parakern.symbolic.symbols import sym
from unit.test_strategies import (
    APPLIES,
    BOX,
    STRATEGIES,
    TILED,
    VALUES,
    assert_same_executions,
    e,
    equal,
    kernel,
    run_both,
    schedule,
)


@pytest.mark.parametrize("strategy, name", [(st, n) for st in sorted(STRATEGIES) for n in sorted(APPLIES[st])])
def test_iteration_space_is_preserved(strategy, name):
    result = STRATEGIES[strategy]().apply(kernel(name))
    assert result is not None  # where it does not apply is tested in test_applies_exactly_where_expected
    assert_same_executions(schedule(name), result.schedule, VALUES[name])


# ------------------------------------------------------------------ (3b)
@pytest.mark.parametrize("name, before, after, threads", [
    ("jacobi1d", "4*(2*s*B + 2)", "4*(2*B + 2)", "B"),
    ("transpose", "4*s*B0*B1 + 4*s*B1*(2*floor(B0/2) + 1)", "4*B0*B1 + 4*B1*(2*floor(B0/2) + 1)", "B0*B1"),
    ("polydiv", "4*(2*s*B + 1)", "4*(2*B + 1)", "B"),
    ("matadd", "0", "0", "B0*B1"),
])
def test_granularity_counters(name, before, after, threads):
    k = kernel(name)
    reduced = ReduceGranularity().apply(k)
    assert equal(SharedMemoryCounter().evaluate(k), e(before))
    assert equal(SharedMemoryCounter().evaluate(reduced), e(after))
    assert equal(ThreadsCounter().evaluate(reduced), e(threads))
    assert equal(ThreadsCounter().evaluate(k), e(threads))
    assert ReduceGranularity().apply(reduced) is None  # nothing left to split


def test_granularity_with_three_grid_levels_merges_into_the_outermost():
    s = analyze_source(BOX, "box.c").schedules[0]
    k = Kernel.initial(s)
    reduced = ReduceGranularity().apply(k)
    grid = reduced.schedule.grid
    assert len(grid) == 3 and [lp.axis for lp in grid] == ["z", "y", "x"]
    assert grid[0].var not in {"u", "v", "w", "k"} and equal(grid[0].extent, e("G*s"))
    assert [lp.var for lp in grid[1:]] == ["v", "w"]
    locals_ = [lp.name for lp in reduced.schedule.locals]
    assert locals_[:2] == ["u", "k"]
    assert equal(SharedMemoryCounter().evaluate(k), e("4*s*B**3"))
    assert equal(SharedMemoryCounter().evaluate(reduced), e("4*B**3"))
    assert_same_executions(s, reduced.schedule, [dict(N=4, B=1, s=2), dict(N=6, B=1, s=3)])
    run_both(k, reduced, dict(N=4, B=1, s=2), {"A": ("int", 64)})


def test_granularity_keeps_the_serial_loop_between_grid_and_block_levels():
    s = analyze_source(TILED, "tiled.c").schedules[0]
    k = Kernel.initial(s)
    reduced = ReduceGranularity().apply(k)
    r = reduced.schedule
    assert [lp.var for lp in r.grid] == ["w", "i", "j"] and [lp.var for lp in r.block] == ["v", "u"]
    assert [lp.var for lp in r.between] == ["k"] and not r.serial
    values = dict(n=4, B0=2, ub1=1, s=2)
    assert_same_executions(s, r, [values])
    run_both(k, reduced, values, {name: ("float", 16) for name in "abc"})


def test_cse_after_granularity_on_matadd():
    reduced = ReduceGranularity().apply(kernel("matadd"))
    done = CommonSubexpressions().apply(reduced)
    assert done.decisions == ("(3b)", "(2)")
    decls = [n for n in syntax.walk(done.schedule.body) if isinstance(n, syntax.Decl)]
    temp = decls[-1]
    assert temp.name == "t0"
    assert equal(syntax.to_sympy(temp.init), sym("j") + sym("h") * sympy.floor(sym("N") / 2))
    assert_same_executions(schedule("matadd"), done.schedule, VALUES["matadd"])


def test_compositions_keep_the_trail_and_the_iteration_space():
    k = kernel("jacobi1d")
    for order in itertools.permutations([ReduceGranularity, CommonSubexpressions, DropCache]):
        current = k
        for strategy in order:
            current = strategy().apply(current)
            assert current is not None, order
        assert current.decisions == tuple(s.code for s in order)
        assert current.cached == () and current.cse_level == 2
        assert SharedMemoryCounter().evaluate(current) == 0
        assert_same_executions(k.schedule, current.schedule, VALUES["jacobi1d"][:2])
