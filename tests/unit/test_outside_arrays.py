"""PK027: an access that may fall outside its array's declared extents (a trial's x[i + 1] of
float x[n] read x[n]; the serial C read it too, so verify said "verified")."""
from __future__ import annotations

import pytest

from parakern.analysis import dependence
from parakern.frontend import analyze_source


def _program(guard: str, access: str, around: str = "{}") -> str:
    head, tail = around.split("{}")
    return f"""#include "metafork.h"
void f(int n, int B, float x[n], float y[n])
{{
    int g = (n + B - 1) / B;
    {head}meta_schedule {{
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {{
                int i = b * B + t;
                if ({guard}) y[i] = {access};
            }}
    }}{tail}
}}
"""


def _outside(text: str) -> list:
    (s,) = analyze_source(text, "p.c").schedules
    return list(dependence.outside(s))


def test_a_read_one_past_the_end_is_named_with_the_iteration_that_makes_it():
    (d,) = _outside(_program("i < n", "x[i + 1] - x[i]"))
    assert (d.code, d.span.line, d.span.col) == ("PK027", 9, 35)
    assert d.message.startswith("x[i + 1] may read outside 'x' (declared x[n]): with B = ")
    assert "reads x[" in d.message and "guard the access or declare the extent it needs" in d.message


@pytest.mark.parametrize("guard, access, around", [
    ("i < n - 1", "x[i + 1] - x[i]", "{}"),                       # guarded
    ("i < n && x[i] > 0.0f", "x[i]", "{}"),                      # read in a condition C short-circuits
    ("i < n", "x[i + 1] - x[i]", "if (n > 1) {{}}"),             # host code around it: no facts of it
])
def test_no_warning_where_the_access_stays_inside_or_cannot_be_judged(guard, access, around):
    assert _outside(_program(guard, access, around.replace("{{}}", "{ {} }"))) == []


@pytest.mark.parametrize("guard, col", [
    ("x[i] > 0.0f && i < n", 21),           # read before the test that would keep it inside
    ("x[i] > 0.0f", 21),                    # no test at all
    ("(x[i] > 0.0f || i < 0) && i < n", 22),
])
def test_a_read_a_condition_makes_before_its_bound_test_is_outside(guard, col):
    (d,) = _outside(_program(guard, "1.0f"))
    assert (d.code, d.span.line, d.span.col) == ("PK027", 9, col)
    assert d.message.startswith("x[i] may read outside 'x' (declared x[n])")


def test_a_read_a_negated_or_short_circuits_is_guarded():
    # !(i >= n || x[i] == 0) reads x[i] only where i < n
    assert _outside(_program("!(i >= n || x[i] == 0.0f)", "1.0f")) == []
