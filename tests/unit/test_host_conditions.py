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
    assert warned.message == ("s may change before the meta_schedule (assigned in between): the analysis does "
                              "not use this assertion; assert it just before the meta_schedule")
    assert "s > 0" not in facts(schedule)
    assert [d.code for d in check(schedule)] == ["PK020"]


# what a trial found: facts that did not hold at the schedule were kept
@pytest.mark.parametrize("before, after", [
    # changed through its address: a pointer, or a call that takes it
    ("    int *ps = &s;\n    if (s >= 1 && n >= 1) {\n        *ps = s - 1;", "    }"),
    ("    if (s < 1)\n        return;\n    shrink(&s);", ""),
    # declared again: the schedule's s is another variable than the one tested
    ("    if (s >= 1) {\n        int s = n - n;", "    }"),
    # a goto reaches the schedule without passing the return
    ("    if (n > 100)\n        goto run;\n    if (s < 1)\n        return;\nrun:", ""),
    # unsigned arithmetic wraps: s - 1u >= 0u holds at s = 0
    ("    if ((unsigned)s - 1u >= 0u) {", "    }"),
])
def test_a_host_condition_that_may_not_hold_at_the_schedule_is_no_fact(before, after):
    text = "static void shrink(int *p) { *p = *p - 1; }\n" + SCATTER.format(before=before, after=after)
    (schedule,) = analyze_source(text, "scatter.c").schedules
    assert "host if" not in facts(schedule).values(), facts(schedule)
    assert [d.code for d in check(schedule)] == ["PK020"]


@pytest.mark.parametrize("before, words", [
    ("    assert(s >= 1);\n    int *p = &s;\n    p[0] -= 1;", "s may change before the meta_schedule (assigned in "
                                                             "between or has its address taken)"),
    ("    assert((unsigned)s - 1u >= 0u);", "computes in unsigned arithmetic, which wraps around"),
    ("    if (n > 100)\n        goto run;\n    assert(s >= 1);\nrun:", "a label lies between it and the "
                                                                           "meta_schedule"),
])
def test_an_assertion_that_may_not_hold_at_the_schedule_is_warned_and_not_used(before, words):
    result = analyze_source(SCATTER.format(before=before, after=""), "scatter.c")
    (schedule,) = result.schedules
    assert any(d.code == "PK023" and words in d.message for d in result.diagnostics), \
        [d.message for d in result.diagnostics]
    assert "assert" not in facts(schedule).values()
    assert [d.code for d in check(schedule)] == ["PK020"]


def test_a_host_condition_on_what_the_schedule_does_not_read_is_no_fact():
    # `if (flag)`: the tools could not give flag a value; the schedule reads n, s, B only
    result, schedule = analysed("    int flag = n > 3;\n    if (flag == 0 && s > 0) {", "    }")
    assert facts(schedule).get("s > 0") == "host if"
    assert not any("flag" in k for k in facts(schedule))


def test_a_condition_on_a_global_holds_until_a_call_that_may_change_it():
    glob = ("int S;\nstatic void shrink(void) {{ S = 0; }}\n" +
            SCATTER.replace("int s, ", "").replace("out[n * s + 1]", "out[n * 64 + 1]").replace("i * s", "i * S"))
    (kept,) = analyze_source(glob.format(before="    if (S > 0) {", after="    }"), "g.c").schedules
    assert facts(kept).get("S > 0") == "host if" and check(kept) == ()
    (dropped,) = analyze_source(glob.format(before="    if (S > 0) {\n        shrink();", after="    }"), "g.c").schedules
    assert "host if" not in facts(dropped).values()
    assert [d.code for d in check(dropped)] == ["PK020"]


def test_an_assertion_before_a_do_while_that_changes_its_variable_after_the_schedule_is_not_used():
    result = analyze_source(SCATTER.format(before="    assert(s >= 1);\n    int r = 0;\n    do {",
                                           after="        s -= 1;\n        r++;\n    } while (r < 3);"), "d.c")
    (schedule,) = result.schedules
    assert [d.code for d in result.diagnostics if d.code == "PK023"] == ["PK023"]
    assert [d.code for d in check(schedule)] == ["PK020"]


def test_a_macro_that_assigns_the_variable_drops_the_fact():
    text = "#define RESET_STRIDE (s = 0)\n" + SCATTER.format(before="    if (s < 1)\n        return;\n    RESET_STRIDE;",
                                                           after="")
    (schedule,) = analyze_source(text, "m.c").schedules
    assert "host if" not in facts(schedule).values()
    assert [d.code for d in check(schedule)] == ["PK020"]
