"""Block footprints: the formulas of the paper's examples, and a brute-force check
that every element a block touches lies in the regions and that the counts
bound (exact: equal) the number of distinct elements."""
import itertools

import pytest
import sympy

from conftest import SAMPLES, expr, same
from parakern.analysis.footprint import footprint, footprints
from parakern.frontend import analyze_file, analyze_source
from parakern.symbolic.symbols import sym


def schedule_of(name):
    return analyze_file(SAMPLES / f"{name}.c").schedules[0]


def schedule_from(src):
    result = analyze_source(src, "snippet.c")
    assert [d.format() for d in result.diagnostics if d.severity.value == "error"] == []
    return result.schedules[0]


def lowers(choice):
    return sorted(tuple(str(d.lower) for d in c.dims) for c in choice.clusters)


# ------------------------------------------------------------------ the paper's examples
def test_jacobi_is_max_of_the_uniform_branches():
    s = schedule_of("jacobi1d")
    fp = footprint(s, "a")
    assert same(fp.elements, "2*s*B + 2")
    assert fp.exact and fp.bounded
    assert len(fp.regions) == 2
    for choice in fp.regions:
        assert [taken for _, taken in choice.when] in ([True], [False])
        assert same(choice.elements, "2*s*B + 2")
        assert sorted(str(c.dims[0].extent) for c in choice.clusters) == ["B*s", "B*s + 2"]
    even = next(c for c in fp.regions if c.when[0][1] is False)
    assert lowers(even) == [("B*i*s",), ("B*i*s + N + 1",)]
    # every access of the branch belongs to one of its clusters
    assert sorted(i for c in even.clusters for i in c.accesses) == [4, 5, 6, 7]


def test_transpose_tiles():
    s = schedule_of("transpose")
    a, c = footprints(s, ("a", "c"))
    for fp in (a, c):
        assert same(fp.elements, "s*B0*B1") and fp.exact
    (cluster,) = a.regions[0].clusters
    assert [(str(d.lower), str(d.extent)) for d in cluster.dims] == [("B0*v0", "B0"), ("B1*s*v1", "B1*s")]
    (cluster,) = c.regions[0].clusters
    assert [(str(d.lower), str(d.extent)) for d in cluster.dims] == [("B1*s*v1", "B1*s"), ("B0*v0", "B0")]


def test_polydiv_leading_coefficient_and_runs():
    s = schedule_of("polydiv")
    a, b = footprints(s, ("a", "b"))
    assert same(a.elements, "s*B + 1")
    assert same(b.elements, "s*B")
    assert b.exact
    # a[N-1] and a[x] are a symbolic distance apart: counted as disjoint, not proved
    assert not a.exact and "assumed disjoint" in a.note
    assert lowers(a.regions[0]) == [("B*s*u - M + N",), ("N - 1",)]


def test_stencil_box_includes_corners():
    fp = footprint(schedule_of("stencil2d"), "in")
    assert same(fp.elements, "(By + 2)*(Bx + 2)")
    assert not fp.exact and "bounding box" in fp.note
    (cluster,) = fp.regions[0].clusters
    assert [(str(d.lower), str(d.extent)) for d in cluster.dims] == [("By*by", "By + 2"), ("Bx*bx", "Bx + 2")]


def test_matmul_tiles_per_iteration_of_k():
    s = schedule_of("matmul")
    a, b = footprints(s, ("a", "b"))
    assert same(a.elements, "B0*B0") and a.exact
    assert same(b.elements, "B0*ub1*s") and b.exact
    assert [str(d.lower) for d in a.regions[0].clusters[0].dims] == ["B0*i", "B0*k"]
    assert [str(d.lower) for d in b.regions[0].clusters[0].dims] == ["B0*k", "j*s*ub1"]


def test_matvec_linearized_rows_are_contiguous():
    s = schedule_of("matvec")
    A, x, y = footprints(s, ("A", "x", "y"))
    assert same(A.elements, "B*n") and A.exact
    assert same(x.elements, "n") and same(y.elements, "B")
    assert "bounds checks" in A.note


# ------------------------------------------------------------------ made-up schedules
UNEQUAL_BRANCHES = """
#include "metafork.h"
void f(int N, int s, int B, int t, int a[2 * N])
{
    int dim = (N - 3) / (s * B);
    meta_schedule cache(a) {
        meta_for (int i = 0; i < dim; i++)
            meta_for (int j = 0; j < B; j++)
                for (int k = 0; k < s; ++k) {
                    int p = i * s * B + k * B + j;
                    if (t % 2)
                        a[p] = a[N + p] + a[N + p + 1] + a[N + p + 2];
                    else
                        a[p] = a[p + 1];
                }
    }
}
"""


def test_uniform_branches_take_the_max_not_the_sum_or_union():
    s = schedule_from(UNEQUAL_BRANCHES)
    fp = footprint(s, "a")
    sizes = sorted((str(c.elements) for c in fp.regions), key=len)
    assert [same(expr(x), e) for x, e in zip(sizes, ["B*s + 1", "2*B*s + 2"])] == [True, True]
    assert same(fp.elements, "2*s*B + 2")          # max
    assert not same(fp.elements, "3*s*B + 3")      # sum of the branches
    assert not same(fp.elements, "2*s*B + 3")      # union of their regions
    assert fp.exact


OPAQUE = """
#include "metafork.h"
void f(int N, int B, int a[N], int b[N], int c[N], float *d)
{
    int dim = N / B;
    meta_schedule cache(a, d) {
        meta_for (int i = 0; i < dim; i++)
            meta_for (int j = 0; j < B; j++)
                c[i * B + j] = a[b[i * B + j]] + d[b[j]];
    }
}
"""


def test_opaque_subscript_is_a_flagged_over_approximation():
    s = schedule_from(OPAQUE)
    a, d = footprints(s, ("a", "d"))
    assert a.elements == sym("N") and not a.exact and "whole array" in a.note
    (cluster,) = a.regions[0].clusters
    assert [(d_.lower, d_.extent) for d_ in cluster.dims] == [(0, sym("N"))]
    # a pointer whose size is not visible: unbounded, said so
    assert d.elements is sympy.oo and not d.bounded and "unbounded" in d.note


STRIDED = """
#include <assert.h>
#include "metafork.h"
void f(int N, int B0, int B1, int c[N * N])
{{
    {assert_stmt}
    int d0 = N / B0, d1 = {d1};
    meta_schedule cache(c) {{
        meta_for (int v = 0; v < d0; v++)
            meta_for (int w = 0; w < d1; w++)
                meta_for (int u = 0; u < B0; u++)
                    meta_for (int q = 0; q < B1; q++)
                        c[(v * B0 + u) * N + w * B1 + q] = 0;
    }}
}}
"""


@pytest.mark.parametrize("d1, assert_stmt, exact", [
    ("N / B1", "", True),                               # d1 >= 1 gives N >= B1
    ("(N + B1 - 1) / B1", "", False),                   # rows may overlap when N < B1
    ("(N + B1 - 1) / B1", "assert(N >= B1);", True),
])
def test_linearized_rows_are_strided_runs(d1, assert_stmt, exact):
    s = schedule_from(STRIDED.format(d1=d1, assert_stmt=assert_stmt))
    fp = footprint(s, "c")
    assert same(fp.elements, "B0*B1")
    (cluster,) = fp.regions[0].clusters
    (dim,) = cluster.dims
    assert same(dim.lower, "v*B0*N + w*B1") and same(dim.extent, "B1")
    assert [(str(st), str(n)) for st, n in dim.repeats] == [("N", "B0")]
    assert fp.exact is exact          # rows are disjoint when N >= B1 follows from the facts
    if not exact:
        assert "N >= B1" in fp.note


def test_negative_coefficient_and_triangular_loop():
    s = schedule_from("""
#include "metafork.h"
void f(int N, int B, int a[N], int b[N])
{
    int dim = N / B;
    meta_schedule cache(a, b) {
        meta_for (int i = 0; i < dim; i++)
            meta_for (int j = 0; j < B; j++) {
                a[N - 1 - (i * B + j)] = 1;
                for (int k = 0; k < j; k++)
                    b[i * B + k] += 1;
            }
    }
}
""")
    a, b = footprints(s, ("a", "b"))
    assert same(a.elements, "B") and a.exact
    assert same(a.regions[0].clusters[0].dims[0].lower, "N - B*i - B")
    # k < j < B: the hull [0, B-2] is counted, flagged
    assert same(b.elements, "B - 1") and not b.exact and "hull" in b.note


# ------------------------------------------------------------------ brute force
VALUES = {
    "jacobi1d": [dict(N=40, s=3, B=4, t=0), dict(N=40, s=3, B=4, t=1)],
    "matadd": [dict(N=16, B0=4, B1=2)],
    "matmul": [dict(n=24, B0=4, ub1=3, s=2)],
    "matvec": [dict(m=10, n=5, B=4)],
    "polydiv": [dict(N=30, M=20, P=7, s=2, B=3)],
    "saxpy": [dict(n=20, B=4)],
    "stencil2d": [dict(N=20, Bx=4, By=3)],
    "transpose": [dict(N=24, B0=4, B1=3, s=2)],
}


def _env(s, params):
    env = {sym(k): v for k, v in params.items()}
    for d in s.derived:
        env[sym(d.name)] = int(d.value.subs(env))
    for lp in s.grid + s.between:   # a block away from the origin
        env[sym(lp.var)] = min(1, int((lp.hi - 1).subs(env)))
    return env


def _touched(s, access, env):
    """Every index tuple the access takes in the block, non-uniform guards ignored."""
    loops = [(lp.var, lp.lo, lp.hi, 1) for lp in s.block]
    serial = {lp.var: lp for lp in s.serial}
    loops += [(v, serial[v].lo, serial[v].hi, serial[v].step) for v in access.loops if v in serial]
    out = set()

    def walk(k, env):
        if k == len(loops):
            out.add(tuple(int(ix.subs(env)) for ix in access.indices))
            return
        var, lo, hi, step = loops[k]
        for value in range(int(lo.subs(env)), int(hi.subs(env)), int(sympy.sympify(step).subs(env))):
            walk(k + 1, {**env, sym(var): value})
    walk(0, env)
    return out


def _region_set(cluster, env):
    axes = []
    for d in cluster.dims:
        base = int(d.lower.subs(env))
        runs = [range(int(d.extent.subs(env)))] + \
               [range(0, int((st * n).subs(env)), int(st.subs(env))) for st, n in d.repeats]
        axes.append({base + sum(p) for p in itertools.product(*runs)})
    return set(itertools.product(*axes))


# ------------------------------------------------------------------ the prover
def test_prover_answers_each_question_on_its_own():
    """One solver serves every question (the hypotheses asserted once): a goal must not
    outlive its question. N - 10 >= 0 is not proved; if its negation (N < 10) stayed
    asserted, 9 - N >= 0 would then be; floors met later bring their definitions along."""
    from parakern.analysis.prover import Prover
    s = schedule_of("jacobi1d")
    prover = Prover(s)
    n, b = sym("N"), sym("B")
    assert prover.nonneg(n) and not prover.nonneg(n - 10)
    assert not prover.nonneg(9 - n)
    assert prover.nonneg(n - 10) is False and prover.nonneg(-n - 1) is False
    # a floor first met here: its quotient's definition makes N - B*floor(N/B) >= 0 provable
    assert prover.nonneg(n - b * sympy.floor(n / b))
    assert not prover.nonneg(b * sympy.floor(n / b) - n - 1)

