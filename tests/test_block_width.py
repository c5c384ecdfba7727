"""Blocks narrower than a warp (issue 35, point 7): PK040 on 16 x 16 blocks names the cause
(rows of 16 threads: each warp spans two, each its own run of sectors) and the width that fixes
it, instead of telling the user to make threadIdx.x run along the last subscript, which it does."""
from parakern.pipeline import analyze

STENCIL16 = """#include "metafork.h"

void st(int n, float a[n][n], float c[n][n])
{
    int g = (n - 2) / 16;
    meta_schedule {
        meta_for (int bi = 0; bi < g; bi++)
            meta_for (int bj = 0; bj < g; bj++)
                meta_for (int ti = 0; ti < 16; ti++)
                    meta_for (int tj = 0; tj < 16; tj++) {
                        int i = bi * 16 + ti + 1, j = bj * 16 + tj + 1;
                        c[i][j] = 0.25f * (a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
                    }
    }
}
"""

# doubles, the block's shape from #defines: 16 x 8
DOUBLES = """#define W 16
#define H 8

void shift2(int n, double x[n][n], double y[n][n])
{
    meta_schedule {
        meta_for (int bi = 0; bi < (n - 1) / H; bi++)
            meta_for (int bj = 0; bj < (n - 1) / W; bj++)
                meta_for (int ti = 0; ti < H; ti++)
                    meta_for (int tj = 0; tj < W; tj++)
                        y[bi * H + ti][bj * W + tj + 1] = 2.0 * x[bi * H + ti][bj * W + tj + 1];
    }
}
"""

# the x level a parameter that an assert fixes at 8
ASSERTED = """#include <assert.h>

void sc(int n, int Bx, int By, float a[n][n], float c[n][n])
{
    assert(Bx == 8 && By == 4);
    meta_schedule {
        meta_for (int bi = 0; bi < n / By; bi++)
            meta_for (int bj = 0; bj < (n - 1) / Bx; bj++)
                meta_for (int ti = 0; ti < By; ti++)
                    meta_for (int tj = 0; tj < Bx; tj++)
                        c[bi * By + ti][bj * Bx + tj + 1] = a[bi * By + ti][bj * Bx + tj + 1];
    }
}
"""


def _found(text: str, code: str, name: str = "w.c"):
    return [d for d in analyze(text, name).diagnostics if d.code == code]


def _at(text: str, d) -> str:
    lines = text.split("\n")
    return lines[d.span.line - 1][d.span.col - 1:d.span.end_col - 1]


def test_sixteen_wide_rows_are_blamed_on_their_width_with_the_width_that_fixes_them():
    found = _found(STENCIL16, "PK040")
    assert [_at(STENCIL16, d) for d in found] == ["c[i][j]", "a[i - 1][j]", "a[i + 1][j]", "a[i][j + 1]"]
    for d in found:
        assert "make threadIdx.x run along" not in d.message
        assert ("threadIdx.x already runs along its last subscript: the cause is the x level, meta_for tj (line 10), "
                "16 threads wide, narrower than a warp of 32, so each warp spans 2 rows of the block") in d.message
        assert d.message.endswith("make it 32 threads wide (or a multiple of 32): 32 x 8 blocks keep the 256 threads")


def test_the_width_it_names_coalesces_them():
    """The advice followed (32 x 8 blocks): no access is uncoalesced any more."""
    wide = STENCIL16.replace("(n - 2) / 16;", "(n - 2) / 32;").replace("ti < 16", "ti < 8") \
        .replace("tj < 16", "tj < 32").replace("bi * 16", "bi * 8").replace("bj * 16", "bj * 32") \
        .replace("int g = (n - 2) / 32;", "int g = (n - 2) / 32, h = (n - 2) / 8;").replace("bi < g", "bi < h")
    assert "tj < 32" in wide and "bi * 8" in wide
    assert _found(wide, "PK040") == []


def test_doubles_in_blocks_shaped_by_defines():
    found = _found(DOUBLES, "PK040")
    assert found and {_at(DOUBLES, d) for d in found} == {"y[bi * H + ti][bj * W + tj + 1]",
                                                         "x[bi * H + ti][bj * W + tj + 1]"}
    for d in found:
        assert "meta_for tj (line 10), 16 threads wide" in d.message and "2 rows" in d.message
        assert "32 x 4 blocks keep the 128 threads" in d.message and "make threadIdx.x run" not in d.message


def test_an_x_level_an_assert_fixes_at_eight():
    found = _found(ASSERTED, "PK040")
    assert found
    for d in found:
        assert "meta_for tj (line 10), Bx = 8 threads wide, narrower than a warp of 32, so each warp spans 4 rows" \
            in d.message
        assert "32 x 1 blocks keep the 32 threads" in d.message
