"""`cache(a {` (a new user's trial, wrong_cache_paren.c): one PK005 at `cache(a` that says the
`)` is missing, never a message quoting two lines of source up to the meta_for's own `)` with a
raw newline in it, nor the syntax errors that followed (PK001)."""
import pytest

from parakern.frontend import analyze_source

PAREN = """\
/* WRONG: cache( without its closing parenthesis. */
#include "metafork.h"

void cp(int n, int B, float a[n], float c[n])
{
    meta_schedule cache(a {
        meta_for (int b = 0; b < n / B; b++)
            meta_for (int t = 0; t < B; t++)
                c[b * B + t] = a[b * B + t];
    }
}
"""


@pytest.mark.parametrize("clause, shown, end_col, cached", [
    ("cache(a {", "cache(a", 26, ("a",)),
    ("cache(a, c {", "cache(a, c", 29, ("a", "c")),
    ("cache( a,\n  c {", "cache( a, c", 4, ("a", "c")),
    ("cache(a[0] {", "cache(a[0]", 29, ()),
])
def test_a_cache_clause_without_its_parenthesis_is_one_error_at_it(clause, shown, end_col, cached):
    result = analyze_source(PAREN.replace("cache(a {", clause), "paren.c")
    found = result.diagnostics
    assert [(d.code, d.span.line, d.span.col) for d in found] == [("PK005", 6, 19)], [d.format() for d in found]
    assert found[0].message == f"missing ')' after {shown}: write {shown})"
    assert found[0].span.end_col == end_col and "\n" not in found[0].message
    assert len(result.schedules) == 1 and tuple(c.name for c in result.schedules[0].cache) == cached


def test_a_closed_clause_with_a_wrong_name_still_quotes_it_on_one_line():
    found = analyze_source(PAREN.replace("cache(a {", "cache(a\n    b) {"), "paren.c").diagnostics
    assert [(d.code, d.span.line, d.span.col) for d in found] == [("PK005", 6, 25)]
    assert found[0].message == "cache() takes array names separated by commas, not 'a b'"
