"""PK040 says what the cases that keep cache(...) do with the access it is on, from their own
requests (a new user's trial: 'the cases that keep cache(z) (1, 3) move it with coalesced copies'
on z[2*i], which those cases write straight to global memory with stride 2, 8 sectors a request,
as `parakern profile` showed)."""
from parakern.pipeline import analyze

ROTATE = """\
/* Interleaved complex numbers rotated in place: z[2i], z[2i+1] = (re, im) * (c, s); z cached. */
#include "metafork.h"

void rotate(int n, int B, float c, float s, float z[2 * n])
{
    int g = (n + B - 1) / B;
    meta_schedule cache(z) {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n) {
                    float re = z[2 * i], im = z[2 * i + 1];
                    z[2 * i] = re * c - im * s;
                    z[2 * i + 1] = re * s + im * c;
                }
            }
    }
}
"""


def _warnings():
    analysis = analyze(ROTATE, "rotate.c")
    tree = analysis.results[0].tree
    staged = [str(k) for k, case in enumerate(tree.cases, 1) if "z" in case.kernel.cached]
    return {(d.span.line, d.span.col): d.message for d in analysis.diagnostics if d.code == "PK040"}, staged


def test_a_write_the_staged_cases_make_in_global_memory_is_not_said_to_be_coalesced():
    warned, staged = _warnings()
    assert staged
    for where in ((13, 21), (14, 21)):        # z[2 * i] = ..., z[2 * i + 1] = ...
        message = warned[where]
        assert "coalesced copies" not in message
        assert (f"the cases that keep cache(z) ({', '.join(staged)}) still write it straight to global memory "
                "at this stride (8 sectors per request)") in message


def test_a_read_the_staged_cases_take_from_shared_memory_keeps_the_copies_advice():
    warned, staged = _warnings()
    for where in ((12, 32), (12, 47)):        # re = z[2 * i], im = z[2 * i + 1]
        assert f"the cases that keep cache(z) ({', '.join(staged)}) move it with coalesced copies" in warned[where]
        assert "straight to global memory" not in warned[where]
