"""Facts that leave nothing to run (a new user's trial): a block asserted larger than any GPU
allows, and an assertion that empties a meta_for. Each has a diagnostic at the assertion that
names the contradiction, a tree whose no-fit regions and coverage agree, and a dispatcher that
returns the status docs/cli.md promises."""
import sympy

from parakern.codegen.tree_dispatcher import dispatcher_source
from parakern.pipeline import analyze
from parakern.symbolic import constraints as cs
from parakern.symbolic.symbols import sym

TOO_BIG = """\
#include <assert.h>
#include "metafork.h"

void big(int n, int B, float a[n], float c[n])
{
    assert(B == 2048);
    assert(n % B == 0);
    meta_schedule {
        meta_for (int b = 0; b < n / B; b++)
            meta_for (int t = 0; t < B; t++)
                c[b * B + t] = 2.0f * a[b * B + t];
    }
}
"""

ZERO = """\
#include <assert.h>
#include "metafork.h"

void zero_block(int n, int B0, float a[n], float o[n])
{
    assert(B0 == 0);
    meta_schedule {
        meta_for (int b = 0; b < 8; b++)
            meta_for (int t = 0; t < B0; t++) {
                int i = b * B0 + t;
                if (i < n)
                    o[i] = 2.0f * a[i];
            }
    }
}
"""

CONSTANT = """\
#include "metafork.h"

void wide(int n, float a[n])
{
    meta_schedule {
        meta_for (int b = 0; b < n / 2048; b++)
            meta_for (int t = 0; t < 2048; t++)
                a[b * 2048 + t] = 0.0f;
    }
}
"""


def _only(analysis, code):
    found = [d for d in analysis.diagnostics if d.code == code]
    assert len(found) == 1, [d.format() for d in analysis.diagnostics]
    return found[0]


def test_a_block_asserted_beyond_every_gpu_is_an_error_at_the_assertion():
    analysis = analyze(TOO_BIG, "big.c")
    d = _only(analysis, "PK026")
    assert d.severity.value == "error"
    assert (d.span.line, d.span.col) == (6, 5)
    assert "B == 2048 (assert, line 6)" in d.message and "B <= T" in d.message
    assert "1024 threads per block" in d.message


def test_a_tree_without_a_case_has_no_fit_regions_that_cover_what_the_facts_allow():
    tree = analyze(TOO_BIG, "big.c").results[0].tree
    assert not tree.cases and tree.uncovered
    assert tree.coverage.status == "proved"
    threads = [u for u in tree.uncovered if u.counter == "threads"]
    assert threads and sympy.Lt(sym("T"), sym("B")) in threads[0].constraints.relations
    # every point the facts allow is in a region: none is listed that the facts forbid
    assert cs.covers(tree.facts, [], [u.constraints for u in tree.uncovered]).status == "proved"


def test_a_constant_block_beyond_every_gpu_is_an_error_at_the_schedule():
    analysis = analyze(CONSTANT, "wide.c")
    d = _only(analysis, "PK026")
    assert (d.span.line, d.span.col) == (5, 5) and "2048 <= T" in d.message


def test_an_assertion_that_empties_a_meta_for_names_the_loop_bound_at_the_assertion():
    analysis = analyze(ZERO, "zero.c")
    d = _only(analysis, "PK025")
    assert d.severity.value == "warning"
    assert (d.span.line, d.span.col) == (6, 5)
    assert "B0 == 0 (assert, line 6)" in d.message and "B0 >= 1 (meta_for bound, line 9)" in d.message
    assert [(r.span.line, r.span.col) for r in d.related] == [(9, 13)]
    assert not [x for x in analysis.diagnostics if x.code == "PK026"]


def test_the_dispatcher_of_an_emptied_meta_for_returns_nothing_to_do_before_no_case_fits():
    tree = analyze(ZERO, "zero.c").results[0].tree
    source = dispatcher_source(tree)
    body = source[source.index("zero_block_0_dispatch_tree("):]
    nothing, refused = body.index("return PARAKERN_NOTHING_TO_DO;"), body.index("return PARAKERN_INVALID_VALUES;")
    assert refused < nothing < body.index("return PARAKERN_NO_CASE_FITS;")


def test_assertions_that_contradict_each_other_are_named_together():
    text = ZERO.replace("assert(B0 == 0);", "assert(n > 4);\n    assert(n < 2);").replace("t < B0", "t < 32")
    analysis = analyze(text, "two.c")
    d = _only(analysis, "PK025")
    assert (d.span.line, d.span.col) == (6, 5)
    assert "n > 4 (assert, line 6) and n < 2 (assert, line 7)" in d.message
    assert "PARAKERN_INVALID_VALUES" in d.message


def test_facts_that_hold_together_give_neither_diagnostic():
    analysis = analyze(TOO_BIG.replace("2048", "256"), "ok.c")
    assert not [d for d in analysis.diagnostics if d.code in ("PK025", "PK026")]
    assert analysis.results[0].tree.cases


GRID_Y = """\
#include <assert.h>
#include "metafork.h"

void rows(int n, int G, float a[G][n][32])
{
    assert(G == 100000);
    meta_schedule {
        meta_for (int g = 0; g < G; g++)
            meta_for (int b = 0; b < n; b++)
                meta_for (int t = 0; t < 32; t++)
                    a[g][b][t] = 1.0f;
    }
}
"""


def test_a_grid_asserted_beyond_the_launch_limits_names_the_limit_and_its_region():
    analysis = analyze(GRID_Y, "rows.c")
    d = _only(analysis, "PK026")
    assert (d.span.line, d.span.col) == (6, 5)
    assert "each needs G <= 65535, and CUDA's launch limits allow no more" in d.message
    tree = analysis.results[0].tree
    assert tree.cases and tree.coverage.status == "proved"
    # the region is every value the facts allow: shown as the limit that fails, never as nothing
    assert [(u.constraints.relations, u.counter) for u in tree.uncovered] == [((sympy.Le(65536, sym("G")),), "launch")]
