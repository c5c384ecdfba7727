"""Optimization strategies: (2) CSE, (3b) granularity reduction, (4b) no shared memory.

Each strategy is checked on every sample (applies where it should, None
elsewhere), for purity, for the counters it changes (sympy equivalence), and
for semantics: the multiset of (array, read/write, element) executions,
enumerated for small parameter values, is the same before and after, and the
kernels run on the CPU (MCJIT) give the same arrays.
"""
from __future__ import annotations

import collections
import copy
import ctypes
import dataclasses
import functools
import itertools
import random
from pathlib import Path

import pytest
import sympy

from parakern import syntax
from parakern.analysis.dependence import iterations_independent
from parakern.analysis.rebuild import rebuild
from parakern.counters.shared_memory import SharedMemoryCounter
from parakern.counters.threads import ThreadsCounter
from parakern.frontend import analyze_file, analyze_source
from parakern.kernel import Kernel
from parakern.pipeline import analyze
from parakern.strategies import Strategy, before_tree, by_code, default_strategies
from parakern.strategies.accumulate import RegisterAccumulators
from parakern.strategies.cache import DropCache
from parakern.strategies.cse import CommonSubexpressions
from parakern.strategies.decisions import editor_words, plain_codes, strategy_codes, trail
from parakern.strategies.granularity import ReduceGranularity, split_serial_loop
from parakern.strategies.register_tiles import RegisterTiles
from parakern.symbolic.symbols import sym

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ("jacobi1d", "matadd", "matmul", "matvec", "polydiv", "saxpy", "stencil2d", "transpose")
COUNTER_NAMES = {"registers", "shared_memory", "threads", "occupancy", "staging"}


@functools.lru_cache(maxsize=None)
def schedule(name: str):
    result = analyze_file(ROOT / "samples" / f"{name}.c")
    assert result.schedules, [d.message for d in result.diagnostics]
    return result.schedules[0]


def kernel(name: str) -> Kernel:
    return Kernel.initial(schedule(name))


def e(text: str) -> sympy.Expr:
    names = {n: sym(n) for n in ("B", "B0", "B1", "s", "N", "dim", "dim0", "dim1", "G", "H")}
    return sympy.sympify(text, locals=names)


def equal(a, b) -> bool:
    return sympy.simplify(sympy.sympify(a) - sympy.sympify(b)) == 0


# Small parameter values per sample (derived scalars are computed from them).
VALUES = {
    "jacobi1d": [dict(N=10, s=2, B=2, t=0), dict(N=10, s=2, B=2, t=1), dict(N=14, s=3, B=2, t=1)],
    "matadd": [dict(N=6, B0=2, B1=2), dict(N=4, B0=3, B1=1)],
    "matmul": [dict(n=4, B0=2, ub1=1, s=2)],
    "matvec": [dict(m=5, n=3, B=2)],
    "polydiv": [dict(N=9, M=6, P=7, s=2, B=2), dict(N=7, M=7, P=5, s=3, B=1)],
    "saxpy": [dict(n=7, B=3, alpha=2)],
    "stencil2d": [dict(N=5, Bx=2, By=2)],
    "transpose": [dict(N=4, B0=2, B1=1, s=2), dict(N=6, B0=3, B1=1, s=3)],
}
APPLIES = {
    "cse": {"jacobi1d", "matadd", "matmul"},
    "granularity": {"jacobi1d", "matadd", "polydiv", "transpose"},
    "cache": {"jacobi1d", "polydiv", "stencil2d", "transpose"},
}
STRATEGIES = {"cse": CommonSubexpressions, "granularity": ReduceGranularity, "cache": DropCache}


# ------------------------------------------------------------------ enumeration

def executions(s, values: dict) -> collections.Counter:
    """Multiset of (array, read, write, element) over every iteration of the schedule."""
    env = {sym(k): sympy.Integer(v) for k, v in values.items()}
    for d in s.derived:
        env[sym(d.name)] = sympy.sympify(d.value).subs(env)
    serial = {lp.var: lp for lp in s.between + s.serial}
    found = collections.Counter()

    def bounds(lo, hi, step, at):
        lo, hi, step = (int(sympy.sympify(x).subs(at)) for x in (lo, hi, step))
        return range(lo, hi, step)

    def visit(access, names, at):
        if not names:
            if all(bool(g.condition.subs(at)) == g.taken for g in access.guards):
                element = tuple(int(i.subs(at)) for i in access.indices)
                found[(access.array, access.is_read, access.is_write, element)] += 1
            return
        lp = serial[names[0]]
        for v in bounds(lp.lo, lp.hi, lp.step, at):
            visit(access, names[1:], {**at, sym(lp.var): sympy.Integer(v)})

    levels = s.grid + s.block
    for point in itertools.product(*(bounds(lp.lo, lp.hi, 1, env) for lp in levels)):
        at = {**env, **{sym(lp.var): sympy.Integer(v) for lp, v in zip(levels, point)}}
        for access in s.accesses:
            assert access.exact, access
            visit(access, access.loops, at)
    return found


def assert_same_executions(before, after, values_list):
    for values in values_list:
        old, new = executions(before, values), executions(after, values)
        assert old, values  # the parameter values do run something
        assert old == new, values


# ------------------------------------------------------------------ applies / None


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("name", SAMPLES)
def test_applies_exactly_where_expected(strategy, name):
    result = STRATEGIES[strategy]().apply(kernel(name))
    assert (result is not None) == (name in APPLIES[strategy])
    if result is not None:
        assert result.decisions == (STRATEGIES[strategy].code,)


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("name", SAMPLES)
def test_strategies_are_pure(strategy, name):
    before = kernel(name)
    snapshot = copy.deepcopy(before)
    result = STRATEGIES[strategy]().apply(before)
    assert before == snapshot and hash(before) == hash(snapshot)
    if result is None:
        return
    hash(result)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.cached = ()  # type: ignore[misc]
    # Same input, same output: nothing depends on hidden state.
    assert STRATEGIES[strategy]().apply(snapshot) == result


@pytest.mark.parametrize("name", SAMPLES)
def test_rebuild_of_the_nest_as_written_is_the_front_end_schedule(name):
    s = schedule(name)
    assert rebuild(s, s.nest, len(s.grid)) == s


# ------------------------------------------------------------------ (4b)


@pytest.mark.parametrize("name", sorted(APPLIES["cache"]))
def test_drop_cache_frees_shared_memory(name):
    before = kernel(name)
    after = DropCache().apply(before)
    assert after.cached == () and after.schedule is before.schedule
    assert SharedMemoryCounter().evaluate(before) != 0
    assert SharedMemoryCounter().evaluate(after) == 0
    assert equal(ThreadsCounter().evaluate(after), ThreadsCounter().evaluate(before))
    assert DropCache().apply(after) is None


@pytest.mark.parametrize("name, grid", [
    ("jacobi1d", [("k", "s", "y"), ("i", "dim", "x")]),
    ("transpose", [("k", "s", "z"), ("v0", "dim0", "y"), ("v1", "dim1", "x")]),
    ("polydiv", [("k", "s", "y"), ("u", "dim", "x")]),
    ("matadd", [("h", "2", "z"), ("v", "dim0", "y"), ("p", "dim1", "x")]),
])
def test_granularity_adds_the_outermost_grid_level(name, grid):
    s = ReduceGranularity().apply(kernel(name)).schedule
    assert [(lp.var, lp.axis) for lp in s.grid] == [(v, a) for v, _, a in grid]
    for lp, (_, extent, _) in zip(s.grid, grid):
        assert equal(lp.extent, e(extent))
    assert s.block == schedule(name).block
    assert not s.serial and not any(isinstance(n, syntax.Loop) for n in syntax.walk(s.body))
    if not e(grid[0][1]).is_number:  # the new level runs at least once, like every meta_for
        assert any(f.origin == "loop bound" and equal(f.relation.lhs, e(grid[0][1])) for f in s.facts)


def test_matadd_granularity_one_statement_per_thread():
    s = ReduceGranularity().apply(kernel("matadd")).schedule
    assigns = [n for n in syntax.walk(s.body) if isinstance(n, syntax.Assign)]
    assert len(assigns) == 1
    writes = [a for a in s.accesses if a.is_write]
    assert len(writes) == 1
    assert equal(writes[0].indices[1], sym("p") * sym("B1") + sym("q") + sym("h") * sympy.floor(sym("N") / 2))


def test_granularity_refuses_matvec_reduction_and_matmul_shared_element():
    assert iterations_independent(schedule("matvec"), "j") == "refuted"   # acc += ...
    assert iterations_independent(schedule("matmul"), "z") == "refuted"   # c[p][q+x] for every z
    assert split_serial_loop(schedule("matvec")) is None
    assert split_serial_loop(schedule("matmul")) is None
    assert ReduceGranularity().apply(kernel("matvec")) is None
    assert ReduceGranularity().apply(kernel("matmul")) is None


ROWSUM = """
#include "metafork.h"
void rowsum(int m, int n, int B, int A[m][n], int y[m])
{
    int rows = m / B;
    meta_schedule {
        meta_for (int r = 0; r < rows; r++)
            meta_for (int t = 0; t < B; t++)
                for (int j = 0; j < n; j++)
                    y[r * B + t] += A[r * B + t][j];
    }
}
"""


def test_granularity_refuses_a_reduction_at_the_top_of_the_body():
    s = analyze_source(ROWSUM, "rowsum.c").schedules[0]
    assert [lp.var for lp in s.serial] == ["j"]
    assert ReduceGranularity().apply(Kernel.initial(s)) is None


BOX = """
#include "metafork.h"
void box(int N, int B, int s, int A[N][N][N])
{
    int G = N / (s * B), H = N / B;
    meta_schedule cache(A) {
        meta_for (int u = 0; u < G; u++)
          meta_for (int v = 0; v < H; v++)
            meta_for (int w = 0; w < H; w++)
              meta_for (int x = 0; x < B; x++)
                meta_for (int y = 0; y < B; y++)
                  meta_for (int z = 0; z < B; z++)
                    for (int k = 0; k < s; k++)
                        A[(u * s + k) * B + x][v * B + y][w * B + z] = u + k;
    }
}
"""


STEPPED = """
#include "metafork.h"
void stepped(int n, int B, int s, int a[n])
{
    int blocks = n / (B * s);
    meta_schedule {
        meta_for (int b = 0; b < blocks; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = (b * B + t) * s;
                for (int k = 1; k < s; k += 2)
                    a[i + k] = a[i + k] + k;
            }
    }
}
"""


@pytest.mark.parametrize("s_value", [2, 3, 4, 5])
def test_granularity_of_a_stepped_loop_after_declarations(s_value):
    s = analyze_source(STEPPED, "stepped.c").schedules[0]
    k = Kernel.initial(s)
    reduced = ReduceGranularity().apply(k)
    assert equal(reduced.schedule.grid[0].extent, sympy.floor(sym("s") / 2))  # k = 1, 3, 5, ... < s
    values = dict(n=4 * s_value, B=2, s=s_value)
    assert_same_executions(s, reduced.schedule, [values])
    run_both(k, reduced, values, {"a": ("int", 4 * s_value)})


TILED = """
#include "metafork.h"
void tiled(int n, int B0, int ub1, int s, float a[n][n], float b[n][n], float c[n][n])
{
    int dim0 = n / B0, dim1 = n / (ub1 * s);
    meta_schedule {
        meta_for (int i = 0; i < dim0; i++)
            meta_for (int j = 0; j < dim1; j++)
                for (int k = 0; k < n; k++)
                    meta_for (int v = 0; v < B0; v++)
                        meta_for (int u = 0; u < ub1; u++)
                            for (int w = 0; w < s; w++)
                                c[i * B0 + v][j * ub1 * s + w * ub1 + u] += a[i * B0 + v][k] * b[k][j * ub1 * s + w * ub1 + u];
    }
}
"""


# ------------------------------------------------------------------ (2)


def test_cse_jacobi_hoists_shared_subexpressions_like_the_paper():
    k = kernel("jacobi1d")
    once = CommonSubexpressions().apply(k)
    assert once.cse_level == 2  # level 1 finds nothing inside single statements
    assert CommonSubexpressions().apply(once) is None
    s = once.schedule
    old = {lp.name for lp in schedule("jacobi1d").locals}
    new = [lp for lp in s.locals if lp.name not in old]
    assert [lp.name for lp in new] == ["t0", "t1"] and all(lp.ctype == "int" for lp in new)
    decls = {n.name: n for n in syntax.walk(s.body) if isinstance(n, syntax.Decl)}
    p = sym("p")
    assert {syntax.to_sympy(decls[t.name].init) for t in new} == {p + 1, p + 2}
    assert syntax.to_sympy(decls["np1"].init) == sym("N") + sym("t0")
    # Declared after p (which they read) and before their first use.
    order = [n.name for n in syntax.walk(s.body) if isinstance(n, syntax.Decl)]
    assert order.index("p") < order.index("t0") < order.index("p1")


@pytest.mark.parametrize("name", sorted(APPLIES["cse"]))
def test_cse_preserves_resolved_indices_and_counters(name):
    k = kernel(name)
    done = CommonSubexpressions().apply(k)
    before, after = k.schedule.accesses, done.schedule.accesses
    assert len(before) == len(after)
    for a, b in zip(before, after):
        assert (a.array, a.is_read, a.is_write, a.loops) == (b.array, b.is_read, b.is_write, b.loops)
        assert all(equal(x, y) for x, y in zip(a.indices, b.indices))
        assert a.guards == b.guards
    assert equal(SharedMemoryCounter().evaluate(done), SharedMemoryCounter().evaluate(k))
    assert equal(ThreadsCounter().evaluate(done), ThreadsCounter().evaluate(k))
    assert {lp.name for lp in done.schedule.locals} > {lp.name for lp in k.schedule.locals}


def test_cse_levels_go_one_then_two_then_stop():
    k = kernel("matmul")
    one = CommonSubexpressions().apply(k)
    assert one.cse_level == 1 and one.decisions == ("(2)",)
    temps = [lp.name for lp in one.schedule.locals if lp.name not in {"p", "q", "x"}]
    assert temps == ["t0", "t1"]
    assert CommonSubexpressions().apply(one) is None  # level 2 finds nothing more
    done = dataclasses.replace(k, cse_level=2)
    assert CommonSubexpressions().apply(done) is None


CLASH = """
#include "metafork.h"
void clash(int n, int B, int t0, int a[n], int b[n])
{
    int blocks = n / B;
    meta_schedule {
        meta_for (int i = 0; i < blocks; i++)
            meta_for (int j = 0; j < B; j++) {
                int t1 = i * B + j;
                a[t1 + t0] = b[t1 + t0] + b[(t1 + t0) / 2];
            }
    }
}
"""


def test_cse_temporaries_do_not_clash_with_existing_names():
    s = analyze_source(CLASH, "clash.c").schedules[0]
    done = CommonSubexpressions().apply(Kernel.initial(s))
    names = [lp.name for lp in done.schedule.locals]
    assert names[0] == "t1" and "t2" in names and names.count("t0") == 0
    assert_same_executions(s, done.schedule, [dict(n=8, B=2, t0=1)])
    run_both(Kernel.initial(s), done, dict(n=8, B=2, t0=1), {"a": ("int", 12), "b": ("int", 12)})


# ------------------------------------------------------------------ execution on the CPU


def run_both(before: Kernel, after: Kernel, params: dict, arrays: dict, launches=None):
    """Runs both variants (global memory) on the same random data and compares the arrays."""
    HostKernel = pytest.importorskip("parakern.ir").HostKernel
    rng = random.Random(11)
    types = {"int": ctypes.c_int, "float": ctypes.c_float, "double": ctypes.c_double}
    data = {name: [rng.randrange(0, 50) for _ in range(size)] for name, (_, size) in arrays.items()}
    results = []
    for variant in (before, after):
        host = HostKernel(dataclasses.replace(variant, cached=()))
        buffers = {name: (types[ctype] * size)(*data[name]) for name, (ctype, size) in arrays.items()}
        for extra in launches or [{}]:
            host.launch({**params, **extra, **buffers})
        results.append({name: list(buf) for name, buf in buffers.items()})
    assert results[0] == results[1]
    assert any(results[0][n] != data[n] for n in arrays)  # the launch did something


RUNS = {
    "jacobi1d": (dict(N=10, s=2, B=2), {"a": ("int", 20)}, [dict(t=t) for t in range(4)]),
    "matadd": (dict(N=6, B0=2, B1=2), {"a": ("int", 36), "b": ("int", 36), "c": ("int", 36)}, None),
    "matmul": (dict(n=4, B0=2, ub1=1, s=2), {"a": ("float", 16), "b": ("float", 16), "c": ("float", 16)}, None),
    "polydiv": (dict(M=5, P=7, s=2, B=2), {"a": ("int", 13), "b": ("int", 5)}, [dict(N=n) for n in (13, 12, 11)]),
    "transpose": (dict(N=4, B0=2, B1=1, s=2), {"a": ("float", 16), "c": ("float", 16)}, None),
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_transformed_kernels_compute_the_same_arrays(name):
    params, arrays, launches = RUNS[name]
    k = kernel(name)
    variants = [s.apply(k) for s in (CommonSubexpressions(), ReduceGranularity())]
    both = [v for v in variants if v is not None]
    if both and CommonSubexpressions().apply(both[-1]) is not None:
        both.append(CommonSubexpressions().apply(both[-1]))
    assert both
    for variant in both:
        run_both(k, variant, params, arrays, launches)


# ------------------------------------------------------------------ the list


def test_default_strategies_order_and_codes():
    strategies = default_strategies()
    assert all(isinstance(s, Strategy) for s in strategies)
    source = [s.code for s in strategies if s.applies_to == "source"]
    # (8b) first: a register tile is made smaller before anything else (the pipeline offers it only
    # where (8) is asked for: strategies.OPT_IN)
    assert source == ["(8b)", "(8b)", "(3b)", "(2)", "(2)", "(4b)", "(6)"]
    assert all(s.applies_to in ("source", "ir") for s in strategies)
    assert all(s.improves and s.improves <= COUNTER_NAMES for s in strategies)
    # Two CSE entries are two objects: the algorithm uses each once per path.
    cse = [s for s in strategies if s.code == "(2)"]
    assert cse[0] is not cse[1]
    assert default_strategies()[0] is not strategies[0]  # fresh objects every call
    assert isinstance(by_code("(4b)"), DropCache) and isinstance(by_code("(3b)"), ReduceGranularity)
    assert by_code("(2)").improves == frozenset({"registers"})
    assert {"(3a)", "(4a)"} == {by_code("(3b)").keep_code, by_code("(4b)").keep_code}
    with pytest.raises(KeyError):
        by_code("(9)")


def test_decisions_are_described_once_by_the_strategy_classes():
    """The trail, the codes a user may enable and the editor's words come from the classes."""
    assert strategy_codes() == ("(1')", "(2)", "(3b)", "(4b)", "(5)", "(6)", "(8)", "(8b)")
    # (7), atomic updates, is a note of the trail (the dependence test decides it), no strategy one enables
    assert set(editor_words()) == {"(1)", "(1')", "(2)", "(3a)", "(3b)", "(4a)", "(4b)", "(5)", "(6)", "(7)", "(8)", "(8b)"}
    assert plain_codes() == {"(1)", "(3a)"}
    assert [type(s) for s in before_tree()] == [RegisterAccumulators, RegisterTiles]
    assert trail(kernel("matadd")) == ("(1)", "(4b)", "(3a)")   # no cache(...): nothing to keep
    assert trail(kernel("jacobi1d")) == ("(1)", "(4a)", "(3a)")
    done = kernel("jacobi1d")
    for code in ("(1')", "(1')", "(2)", "(3b)", "(2)", "(4b)", "(5)"):
        done = done.with_decision(code)
    assert trail(done) == ("(1')", "(4b)", "(3b)", "(2)", "(2)", "(5)")   # the paper's order, then (5)


CONTIGUOUS_HALO = """
void cg(int n, int B, int s, float a[n], float b[n])
{
    int g = (n - 2 + B * s - 1) / (B * s);
    meta_schedule cache(a) {
        meta_for (int bx = 0; bx < g; bx++)
            meta_for (int tx = 0; tx < B; tx++)
                for (int w = 0; w < s; w++) {
                    int j = (bx * B + tx) * s + w + 1;
                    if (j < n - 1)
                        b[j] = a[j - 1] + a[j] + a[j + 1];
                }
    }
}
"""


def test_a_rewrite_that_leaves_a_cached_array_unstageable_is_not_a_variant():
    """(3b) makes w a grid level: each block then reads runs of 3 elements every s, which overlap
    for s < 3, so a cannot be staged there. That variant used to fail the whole schedule (PK030,
    no tree); it is now refused, and the tree keeps the staged kernel as written and (4b)."""
    (result,) = analyze(CONTIGUOUS_HALO, "t.c").results
    assert result.tree is not None and not [d for d in result.diagnostics if d.severity.value == "error"]
    assert any(c.kernel.cached == ("a",) for c in result.tree.cases)
    kernel = Kernel.initial(result.schedule)
    assert ReduceGranularity().changes(kernel) is not None and ReduceGranularity().apply(kernel) is None
    assert "could not be staged" in ReduceGranularity().explain(kernel)

