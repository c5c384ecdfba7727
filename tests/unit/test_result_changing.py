"""PK043: a block size or granularity whose value changes what a schedule computes is not a
tuning knob (analysis/invariance.py): tune and dispatch_auto leave it to the caller. Found on a
program the authors had not seen: tune ranked B = 1024 first for per-block partial sums."""
from __future__ import annotations

import pytest

from conftest import SAMPLES
from parakern.analysis.invariance import candidate_parameters, result_changing, result_warnings
from parakern.frontend import analyze_source
from parakern.tuning.space import tuned_parameters


def _schedule(body: str, params: str = "int n, int B", arrays: str = "float x[n], float y[n]", pre: str = ""):
    text = f"""#include "metafork.h"
void f({params}, {arrays})
{{
    int g = (n + B - 1) / B;
{pre}    meta_schedule {{
{body}
    }}
}}
"""
    result = analyze_source(text, "p.c")
    assert not [d for d in result.diagnostics if d.severity.value == "error"], result.diagnostics
    return result.schedules[0], text


PARTIALS = """        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n) y[b] += x[i];
            }"""


def test_per_block_partial_sums_change_with_the_block_size():
    s, text = _schedule(PARTIALS)
    assert candidate_parameters(s) == ("B",) and tuned_parameters(s) == ()
    (w,) = result_warnings(s, candidate_parameters(s))
    line = next(k for k, t in enumerate(text.split("\n"), 1) if "y[b] +=" in t)
    assert (w.code, w.span.line, w.span.col) == ("PK043", line, text.split("\n")[line - 1].index("y[b]") + 1)
    assert w.message.startswith("the value of B changes what this meta_schedule computes: y[b]")
    assert "tune and dispatch_auto leave B as the caller gives it" in w.message


@pytest.mark.parametrize("body", [
    # the global index alone: the blocks only cut the range differently
    """        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n) y[i] = 2.0f * x[i];
            }""",
    # a neighbour (an offset moves the index, whatever B)
    """        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i > 0 && i < n - 1) y[i] = x[i - 1] + x[i + 1];
            }""",
    # a filter loop whose extent no candidate sets: its variable is an offset, not a digit
    """        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++)
                for (int d = 0; d < 3; d++) {
                    int i = b * B + t;
                    if (i + d < n) y[i] += x[i + d];
                }""",
])
def test_the_global_index_keeps_the_computation(body):
    s, _ = _schedule(body)
    assert result_changing(s, candidate_parameters(s)) == () and tuned_parameters(s) == ("B",)


def test_the_first_thread_of_each_block_depends_on_the_block_size():
    s, _ = _schedule("""        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n && t == 0) y[i] = x[i];
            }""")
    assert [c.parameter for c in result_changing(s, candidate_parameters(s))] == ["B"]


def test_a_flattened_two_dimensional_index_is_two_indices():
    """(B0*i + v)*m + B1*j + u: a row and a column, each a whole number: nothing changes."""
    text = """#include "metafork.h"
void f(int n, int m, int B0, int B1, float a[n * m], float c[n * m])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B0; i++)
            meta_for (int j = 0; j < m / B1; j++)
                meta_for (int v = 0; v < B0; v++)
                    meta_for (int u = 0; u < B1; u++)
                        c[(B0 * i + v) * m + B1 * j + u] = a[(B0 * i + v) * m + B1 * j + u] + 1.0f;
    }
}
"""
    s = analyze_source(text, "p.c").schedules[0]
    assert tuned_parameters(s) == ("B0", "B1")


def test_chunks_change_with_their_length_not_with_the_block_size():
    """A chunk c = b*B + t of L elements, its total at c: L changes the sums, B does not."""
    s, _ = _schedule("""        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                float acc = 0.0f;
                for (int k = 0; k < L; k++)
                    acc += x[(b * B + t) * L + k];
                y[b * B + t] = acc;
            }""", params="int n, int B, int L", pre="")
    changing = result_changing(s, ("B", "L"))
    assert [c.parameter for c in changing] == ["L"]


def test_the_samples_tune_what_they_tuned():
    """Every paper sample and PolyBench program keeps its tuned parameters, but block_smooth,
    which smooths within blocks (`u > 0 && u < B - 1`): B changes its result."""
    flagged = {}
    for path in sorted(SAMPLES.glob("*.c")) + sorted((SAMPLES / "polybench").glob("*.c")):
        for s in analyze_source(path.read_text(), str(path)).schedules:
            found = result_changing(s, candidate_parameters(s))
            if found:
                flagged[s.id] = [c.parameter for c in found]
    assert flagged == {"block_smooth:0": ["B"]}


def test_a_value_computed_from_the_block_number_or_size():
    """frame[i] = b and y[i] = x[i] / B store what B changes (a trial's program: tune chose B)."""
    s, text = _schedule("""        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n) { y[i] = x[i] / B; }
            }""")
    (w,) = result_warnings(s, candidate_parameters(s))
    line = next(k for k, t in enumerate(text.split("\n"), 1) if "x[i] / B" in t)
    assert (w.span.line, w.span.col) == (line, text.split("\n")[line - 1].index("B;") + 1)
    s, _ = _schedule("""        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n) y[i] = i + x[i];
            }""")
    assert result_changing(s, ("B",)) == ()   # i is the global index: the same for every B


def test_a_chunk_scan_changes_with_its_length_only():
    """out[(b*B + t)*s] = in[...]: elements s apart (s changes them), the chunk's number b*B + t
    whatever B; k from 1 to s is a digit of radix s."""
    s, _ = _schedule("""        meta_for (int b = 0; b < n / (B * s); b++)
            meta_for (int t = 0; t < B; t++) {
                int base = (b * B + t) * s;
                y[base] = x[base];
                for (int k = 1; k < s; k++)
                    y[base + k] = y[base + k - 1] + x[base + k];
            }""", params="int n, int B, int s", pre="    assert(n % (B * s) == 0);\n")
    assert [c.parameter for c in result_changing(s, ("B", "s"))] == ["s"]
