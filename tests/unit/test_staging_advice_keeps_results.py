"""PK031's advice where a clamp makes a subscript not affine must keep what the program computes:
it advised a bounds test instead of the clamp, which changes the edge pixels of a clamped blur
(found by a trial on a program the authors had not seen)."""
from __future__ import annotations

from parakern.pipeline import analyze

BLUR = """#include "metafork.h"
void blur(int h, int w, int B, float in[h][w], float out[h][w])
{
    int g = (w + B - 1) / B;
    meta_schedule cache(in) {
        meta_for (int i = 0; i < h; i++)
            meta_for (int b = 0; b < g; b++)
                meta_for (int t = 0; t < B; t++) {
                    int j = b * B + t;
                    if (j < w)
                        out[i][j] = (in[i][max(j - 1, 0)] + in[i][j] + in[i][min(j + 1, w - 1)]) / 3.0f;
                }
    }
}
"""


def test_the_advice_on_a_clamped_subscript_keeps_the_edges():
    analysis = analyze(BLUR, "blur.c")
    (d,) = [d for d in analysis.diagnostics if d.code == "PK031"]
    assert "not affine" in d.message
    assert "instead of a clamp" not in d.message
    assert "the interior without it and another over the edges with it compute the same result" in d.message
    assert (d.span.line, d.span.col) == (5, 25)
