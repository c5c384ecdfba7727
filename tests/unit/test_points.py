"""Parameter points of verify (verify/points.py): where the facts rule out the small bounds of
z3's fallback, the bounds give way to the least values the facts allow."""
from __future__ import annotations

import pytest

from parakern.pipeline import analyze
from parakern.verify import points
from parakern.verify.points import build_model, find_points

# Blocks of a warp or more (assert), sizes a multiple of the block: sampling rarely meets
# (N - 2) % Bx == 0 and z3's small bounds (Bx <= 16) exclude every point.
STAGED = """
#include <assert.h>
#include "metafork.h"
void st(int N, int Bx, int By, float a[N][N], float b[N][N])
{
    assert(Bx >= 32 && Bx * By <= 256 && (N - 2) % Bx == 0);
    int gx = (N - 2) / Bx, gy = (N - 2) / By;
    meta_schedule cache(a) {
        meta_for (int by = 0; by < gy; by++)
            meta_for (int bx = 0; bx < gx; bx++)
                meta_for (int ty = 0; ty < By; ty++)
                    meta_for (int tx = 0; tx < Bx; tx++) {
                        int i = by * By + ty + 1;
                        int j = bx * Bx + tx + 1;
                        b[i][j] = a[i][j] - 0.25f * (a[i-1][j] + a[i+1][j] + a[i][j-1] + a[i][j+1]);
                    }
    }
}
"""


@pytest.fixture(scope="module")
def staged():
    result = analyze(STAGED, "st.c").results[0]
    return build_model(result.schedule, result.tree, {"N", "Bx", "By", "a", "b"})


def test_a_schedule_without_parameters_has_its_one_point():
    text = """
#include "metafork.h"
void f(float x[64], float y[64])
{
    meta_schedule {
        meta_for (int i = 0; i < 2; i++)
            meta_for (int j = 0; j < 32; j++)
                y[i * 32 + j] = 2.0f * x[i * 32 + j];
    }
}
"""
    result = analyze(text, "f.c").results[0]
    model = build_model(result.schedule, result.tree, {"x", "y"})
    assert points._tops(model, 0) == {}
    (point,) = find_points(model, 0, 3)
    assert point.values == {} and point.threads == 32 and point.expected == 1

