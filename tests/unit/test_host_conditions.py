"""The host code's ifs around a meta_schedule are facts where it runs, as an assert before it is
(`if (s > 0) { ... out[i * s] ... }` was a PK020 with the witness s = 0, which never runs), and
neither is one where a variable it reads is assigned before the schedule (`assert(s > 0); s = 0;`
made a race look proved)."""
from __future__ import annotations

import pytest

from parakern.analysis.dependence import check
from parakern.frontend import analyze_source

SCATTER = """#include "metafork.h"
void f(int n, int s, int B, float in[n], float out[n * s + 1])
{{
    int g = (n + B - 1) / B;
{before}
    meta_schedule {{
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {{
                int i = b * B + t;
                if (i < n)
                    out[i * s] = in[i];
            }}
    }}
{after}
}}
"""


def analysed(before: str, after: str = ""):
    result = analyze_source(SCATTER.format(before=before, after=after), "scatter.c")
    (schedule,) = result.schedules
    return result, schedule


def facts(schedule) -> dict:
    return {str(f.relation): f.origin for f in schedule.facts}


@pytest.mark.parametrize("before, after", [
    ("    if (s > 0) {", "    }"),
    ("    if (s <= 0) {\n        return;\n    } else {", "    }"),
    ("    if (s <= 0 || B < 1)\n        return;", ""),
    ("    if (!(s < 1))\n    {", "    }"),
    ("    if (s < 1)\n        exit(1);", ""),
])
def test_a_host_condition_around_the_schedule_is_a_fact_and_proves_the_scatter(before, after):
    result, schedule = analysed(before, after)
    assert facts(schedule).get("s > 0") == "host if" or facts(schedule).get("s >= 1") == "host if", facts(schedule)
    assert [d.code for d in check(schedule)] == []


def test_a_condition_on_data_is_no_fact_and_no_warning():
    result, schedule = analysed("    if (in[0] > 0.0f) {", "    }")
    assert "host if" not in facts(schedule).values()
    assert [d.code for d in result.diagnostics] == []
    assert [d.code for d in check(schedule)] == ["PK020"]


def test_a_branch_that_runs_on_says_nothing_after_the_if():
    _, schedule = analysed("    if (s <= 0)\n        n = n + 0;", "")
    assert "host if" not in facts(schedule).values()


@pytest.mark.parametrize("before, after", [
    ("    if (s > 0) {\n        s = 0;", "    }"),
    ("    if (s > 0) {\n        s--;", "    }"),
])
def test_a_condition_whose_variable_changes_before_the_schedule_is_no_fact(before, after):
    _, schedule = analysed(before, after)
    assert "host if" not in facts(schedule).values()
    (d,) = check(schedule)
    assert d.code == "PK020" and "s = 0" in d.message


def test_an_assertion_whose_variable_changes_before_the_schedule_is_warned_and_not_used():
    result, schedule = analysed("    assert(s > 0);\n    s = 0;")
    (warned,) = [d for d in result.diagnostics if d.code == "PK023"]
    assert (warned.span.line, warned.span.col) == (5, 5)
    assert "s may change between this assertion and the meta_schedule" in warned.message
    assert "s > 0" not in facts(schedule)
    assert [d.code for d in check(schedule)] == ["PK020"]
