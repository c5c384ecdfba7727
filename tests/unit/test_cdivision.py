"""C's `/` and `%` truncate toward zero: the analysis reads them so wherever an operand may be
negative (`(p - 1) % 2` at p = 0 is -1, `(p - 1) / 2` is 0), as floor / Mod where the signs
allow (symbolic/cinteger.py, frontend/signs.py). Races that only truncation makes are refused with a
witness that really collides; legal code with negative operands is accepted and verifies."""
from __future__ import annotations

from pathlib import Path

import pytest
import sympy

from parakern.analysis.dependence import check
from parakern.frontend import analyze_source
from parakern.symbolic import exact
from parakern.symbolic.cinteger import cdiv, cmod, lower_bound, quotient, remainder, settle
from parakern.symbolic.printing import to_c
from parakern.symbolic.symbols import sym

ROOT = Path(__file__).resolve().parents[2]
i, n, B, N, s = (sym(x) for x in "i n B N s".split())


def test_floor_only_where_the_signs_are_known():
    assert quotient(i, 2) == sympy.floor(i / 2)                     # i >= 0 (H1, or a loop from 0)
    assert quotient(n + B - 1, B) == sympy.floor((n + B - 1) / B)   # B divides: B >= 1
    assert isinstance(quotient(i - 1, 2), cdiv)                     # -1 at i = 0
    assert isinstance(remainder(i - 1, 2), cmod)
    assert isinstance(quotient(i, 2, {"i": -3}), cdiv)               # a loop from -3
    assert isinstance(quotient(N - 2, s * B), cdiv)
    # sympy's own rewriting would lose the dividend: Mod(i - 1, 2) is Mod(i + 1, 2)
    assert remainder(i - 1, 2).args == (i - 1, 2) and to_c(remainder(i - 1, 2)) == "(i - 1) % 2"
    assert to_c(quotient(N - 2, s * B)) == "(N - 2)/(B*s)"
    assert settle(remainder(i - 1, 2), {"i": 1}) == sympy.Mod(i - 1, 2)
    assert lower_bound(i - 1, {"i": 1}) == 0 and lower_bound(i - 1) == -1 and lower_bound(i, {"i": None}) is None
    assert lower_bound(2 * i * B + 3) == 3 and lower_bound(3 - i) is None


# ------------------------------------------------------------------ the front end
def schedule(body: str, pre: str = "int dim = N / B;", params: str = "int N, int B, int a[N], int x[N]",
             loop: str = "meta_for (int i = 0; i < dim; i++)"):
    text = f"""#include "metafork.h"
void f({params})
{{
    {pre}
    meta_schedule {{
        {loop}
            meta_for (int j = 0; j < B; j++) {{
{body}
            }}
    }}
}}
"""
    result = analyze_source(text, "t.c")
    assert not [d for d in result.diagnostics if d.severity.value == "error"], result.diagnostics
    return result.schedules[0]


def test_subscripts_keep_c_semantics_where_an_operand_may_be_negative():
    s_ = schedule("                int p = i * B + j;\n                a[p] = x[(p - 1) % 2 + 1] + x[p / 2];")
    p = B * i + sym("j")
    reads = {a.indices[0] for a in s_.accesses if a.array == "x"}
    assert reads == {cmod(p - 1, 2) + 1, sympy.floor(p / 2)}


def test_a_loop_that_starts_below_zero_keeps_its_divisions():
    s_ = schedule("                for (int k = -3; k < 3; k++) a[8 * (i * B + j) + k / 2 + 4] = k;")
    (write,) = [a for a in s_.accesses if a.is_write]
    assert write.indices[0].has(cdiv)


def test_facts_settle_a_division_as_the_floor():
    """jacobi's dim = (N - 2)/(s*B) bounds a meta_for (dim >= 1, so N - 2 >= s*B); an assert
    N >= 2 settles (N - 2)/B in a subscript; a meta_for bound written as a quotient too."""
    s_ = schedule("                a[i * B + j] = 1;", pre="int dim = (N - 2) / (s * B);",
                  params="int N, int B, int s, int a[N], int x[N]")
    assert s_.derived[0].value == sympy.floor((N - 2) / (s * B))
    s_ = schedule("                a[i * B + j] = x[(N - 2) / B];", pre="assert(N >= 2);\n    int dim = N / B;")
    assert str([a for a in s_.accesses if a.array == "x"][0].indices[0]) == "floor((N - 2)/B)"
    s_ = schedule("                a[i * B + j] = 1;", pre="", loop="meta_for (int i = 0; i < (N - 2) / B; i++)")
    assert s_.grid[0].hi == sympy.floor((N - 2) / B)
    assert not any(f.relation.has(cdiv) for f in s_.facts)


# ------------------------------------------------------------------ the dependence test
RACES = [
    # (p - 1) % 2 is -1 at p = 0, not 1: p = 0 and p = 1 both write a[0]
    ("                int p = i * B + j;\n                if ((p - 1) % 2 != 1) a[p / 2] = x[p];", "a[p / 2]"),
    # (p - 1) / 2 + 1 is 1 at p = 0 and at p = 2 (the floor gives 0 and 1)
    ("                int p = i * B + j;\n                if (p % 2 == 0) a[(p - 1) / 2 + 1] = x[p];", "a[(p - 1) / 2 + 1]"),
    # (p - 1) / 2 is 0 at p = 0 and at p = 1 (the floor gives -1 and 0)
    ("                int p = i * B + j;\n                if (p < 2) a[(p - 1) / 2] = x[p];", "a[(p - 1) / 2]"),
    # the reader of one thread, the writer of another: (p - 1) % 2 < 0 holds at p = 0 only,
    # which reads x[1] while p = 1 writes it (the floor's Mod is never negative)
    ("                int p = i * B + j;\n                int v = 0;\n                if ((p - 1) % 2 < 0) v = x[p + 1];"
     "\n                x[p] = v;", "x[p]"),
]


@pytest.mark.parametrize("body, written", RACES, ids=["remainder-guard", "quotient", "two-threads", "read-write"])
def test_races_of_truncation_are_refused_with_a_colliding_witness(body, written):
    s_ = schedule(body)
    found = check(s_)
    assert [d.code for d in found] == ["PK020"], found
    d = found[0]
    assert written in d.message and "(i = " in d.message
    witness = _witness(d.message)
    _assert_collision(s_, witness)


def _witness(message: str) -> list[dict]:
    """[{name: value}] of the two iterations and the parameters of a PK020 message."""
    import re
    params = {}
    head = re.search(r"with ([^:]*): \(", message)
    if head:
        for part in head.group(1).split(", "):
            k, v = part.split(" = ")
            params[k] = int(v)
    iterations = re.findall(r"\(([a-z] = -?\d+(?:, [a-z] = -?\d+)*)\)", message)
    out = []
    for it in iterations[:2]:
        values = dict(params)
        for part in it.split(", "):
            k, v = part.split(" = ")
            values[k] = int(v)
        out.append(values)
    return out


def _assert_collision(s_, witness) -> None:
    """Two iterations at which some write and another access of one array reach one element
    (guards evaluated with C's semantics through the model's expressions)."""
    def reached(access, values):
        subs = {sym(k): sympy.Integer(v) for k, v in values.items()}
        for g in access.guards:
            if g.condition is None:
                continue
            if bool(exact.substituted(g.condition, subs)) != g.taken:
                return None
        return tuple(int(exact.substituted(e, subs)) for e in access.indices)

    for a1 in s_.accesses:
        for a2 in s_.accesses:
            if a1.array != a2.array or not (a1.is_write or a2.is_write):
                continue
            e1, e2 = reached(a1, witness[0]), reached(a2, witness[1])
            if e1 is not None and e1 == e2:
                return
    raise AssertionError(f"the witness {witness} reaches no element twice")


LEGAL = [
    "                int p = i * B + j;\n                a[p] = x[(p - 1) / 2 + 1] + x[(p - 3) % 4 + 3];",
    "                int p = i * B + j;\n                a[2 * p + 1 + (p - 1) % 2] = x[p];",
    "                int p = i * B + j;\n                if ((p - 1) % 2 == 1) a[p / 2] = x[p];",
    "                int p = i * B + j;\n                if (p > 0) a[(p - 1) / 2 * 2 + (p - 1) % 2] = x[p];",
    "                for (int k = -2; k < 2; k++) a[4 * (i * B + j) + k / 2 + 1] = k;",
    "                for (int k = -3; k < 3; k++) a[8 * (i * B + j) + k % 2 + 2] = k;",
]


@pytest.mark.parametrize("body", LEGAL, ids=["reads", "parity", "even-guard", "positive", "loop-quotient",
                                             "loop-remainder"])
def test_legal_code_with_negative_operands_is_accepted(body):
    assert check(schedule(body)) == ()


# ------------------------------------------------------------------ end to end
NEGATIVE_OPERANDS = """#include "metafork.h"
void g(int n, int B, int a[n], int x[n], int y[2 * n + 1])
{
    int blocks = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < blocks; b++)
            meta_for (int t = 0; t < B; t++) {
                int p = b * B + t;
                if (p < n) {
                    a[p] = x[(p - 1) / 2 + 1] + (p - 1) % 2 * 1000 + (p - 3) / 4 * 7 + (p - 5) % 3;
                    y[2 * p + 1 + (p - 1) % 2] = p;
                }
            }
    }
}
"""

