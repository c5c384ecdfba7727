"""A read-only array whose strided runs overlap (a decimating filter's in[2*i + k]: F taps from
every other element) is staged as the one run from its first element to its last, where it was
refused (PK031, with advice to declare the array in rows of 2 that lost an element for odd F):
its shared memory is that span, every access finds its element there."""
from __future__ import annotations

import sympy

from parakern.analysis.staging import plan
from parakern.pipeline import analyze

DECIMATE = """#include "metafork.h"
void decimate(int n, int F, int B, float in[2 * n + F], float w[F], float out[n])
{
    int g = (n + B - 1) / B;
    meta_schedule cache(in, w) {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n) {
                    float acc = 0.0f;
                    for (int k = 0; k < F; k++)
                        acc += w[k] * in[2 * i + k];
                    out[i] = acc;
                }
            }
    }
}
"""

# runs that overlap in an array the block writes (even elements from the odd ones beside them):
# an element would have two places that could disagree, so still refused
EVENS = """#include "metafork.h"
void evens(int n, int B, float b[2 * n + 4])
{
    int g = (n + B - 1) / B;
    meta_schedule cache(b) {
        meta_for (int k = 0; k < g; k++)
            meta_for (int t = 0; t < B; t++) {
                int i = k * B + t;
                if (i < n)
                    b[2 * i] = b[2 * i + 1] + b[2 * i + 3];
            }
    }
}
"""


def test_overlapping_runs_of_a_read_only_array_are_staged_as_their_span():
    result = analyze(DECIMATE, "d.c").results[0]
    assert [d.code for d in result.diagnostics if d.code == "PK031"] == []
    staged = [c for c in result.tree.cases if "(4a)" in c.decisions]
    assert staged
    B, F = sympy.symbols("B F", integer=True, positive=True)
    for case in staged:
        (st_in,) = [st for st in plan(case.kernel) if st.array.name == "in"]
        assert st_in.spanned
        elements = st_in.elements.subs({x: {"B": B, "F": F}[x.name] for x in st_in.elements.free_symbols})
        assert sympy.expand(elements - (2 * (B - 1) + F)) == 0     # 2(B - 1) + F, not B*F
        total = case.counter("shared_memory")
        total = total.subs({x: {"B": B, "F": F}[x.name] for x in total.free_symbols})
        assert sympy.expand(total - 4 * (2 * (B - 1) + F) - 4 * F) == 0


def test_overlapping_runs_of_a_written_array_are_still_refused():
    result = analyze(EVENS, "e.c").results[0]
    assert any(d.code == "PK031" and "strided runs may overlap" in d.message for d in result.diagnostics)


def test_the_refusal_says_the_block_writes_it_and_gives_no_declaration_the_extent_cannot_hold():
    # buf[2*i + k] read, buf[2*n + F + i] written: 3*n + F elements are no whole number of rows of 2
    text = DECIMATE.replace("float in[2 * n + F]", "float buf[3 * n + F]").replace("cache(in, w)", "cache(buf, w)") \
        .replace("in[2 * i + k]", "buf[2 * i + k]").replace("out[i] = acc;", "buf[2 * n + F + i] = acc;")
    (warned,) = [d for d in analyze(text, "w.c").results[0].diagnostics if d.code == "PK031"]
    assert "its strided runs may overlap and the block writes it" in warned.message
    assert "declare" not in warned.message, warned.message
