"""Blocks narrower than a warp (issue 35, point 7): PK040 on 16 x 16 blocks names the cause
(rows of 16 threads: each warp spans two, each its own run of sectors) and the width that fixes
it, instead of telling the user to make threadIdx.x run along the last subscript, which it does;
PK042 where every block has a fixed number of threads below a warp (a 3-level nest whose
innermost level is 16 wide), at the block's level, with what to change."""
from conftest import text_at
from parakern.pipeline import analyze
from parakern.source.diagnostics import CODES

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


# ------------------------------------------------------------------ PK042

THREE_LEVELS = """void add3(int n, float a[n][n][16], float c[n][n][16])
{
    meta_schedule {
        meta_for (int i = 0; i < n; i++)
            meta_for (int j = 0; j < n; j++)
                meta_for (int k = 0; k < 16; k++)
                    c[i][j][k] = a[i][j][k] + 1.0f;
    }
}
"""


def test_a_three_level_nest_with_a_sixteen_wide_innermost_level_is_warned_at_it():
    (d,) = _found(THREE_LEVELS, "PK042", "add3.c")
    assert d.severity.value == "warning" and CODES["PK042"].startswith("warning")
    assert (d.span.line, d.span.col) == (6, 17) and _at(THREE_LEVELS, d) == "meta_for"
    assert d.message.startswith("every block has 16 threads (meta_for k: the nest's 3 levels map 2 to the grid "
                                "and 1 to the block), fewer than the 32 of a warp: 16 lanes of each warp idle")
    assert ("split meta_for j (line 5) into two levels, j = jb * B + jt with meta_for (int jt = 0; jt < B; jt++) "
            "right inside meta_for jb, so that 4 levels map 2 to the block (B x 16 threads)") in d.message
    (related,) = d.related
    assert (related.span.line, related.span.col) == (5, 13) and related.message == "meta_for j runs in the grid"


def test_the_advice_followed_is_not_warned():
    tiled = """void add3(int n, int B, float a[n][n][16], float c[n][n][16])
{
    meta_schedule {
        meta_for (int i = 0; i < n; i++)
            meta_for (int jb = 0; jb < n / B; jb++)
                meta_for (int jt = 0; jt < B; jt++)
                    meta_for (int k = 0; k < 16; k++)
                        c[i][jb * B + jt][k] = a[i][jb * B + jt][k] + 1.0f;
    }
}
"""
    assert _found(tiled, "PK042") == []


def test_a_constant_from_a_define_or_a_local_and_a_two_level_nest():
    defined = "#define K 8\n" + THREE_LEVELS.replace("k < 16", "k < K")
    (d,) = _found(defined, "PK042")
    assert "every block has 8 threads" in d.message and "24 lanes of each warp idle" in d.message
    local = THREE_LEVELS.replace("{\n    meta_schedule", "{\n    int w = 4;\n    meta_schedule").replace("k < 16", "k < w")
    (d,) = _found(local, "PK042")
    assert "every block has 4 threads" in d.message
    flat = """void rows(int n, float a[n], float c[n])
{
    meta_schedule {
        meta_for (int b = 0; b < n / 8; b++)
            meta_for (int t = 0; t < 8; t++)
                c[b * 8 + t] = a[b * 8 + t];
    }
}
"""
    (d,) = _found(flat, "PK042")
    assert (d.span.line, d.span.col) == (5, 13)
    assert d.message.endswith("widen the block's levels (meta_for t) to 32 threads or a multiple of 32")


def test_a_block_below_a_serial_loop_is_told_to_nest_a_level_there():
    text = """void mm(int n, float a[n][n], float b[n][n], float c[n][n])
{
    meta_schedule {
        meta_for (int i = 0; i < n; i++)
            for (int k = 0; k < n; k++)
                meta_for (int j = 0; j < 8; j++)
                    c[i][j] += a[i][k] * b[k][j];
    }
}
"""
    (d,) = _found(text, "PK042")
    assert (d.span.line, d.span.col) == (6, 17)
    assert "nest another meta_for level below the serial loop k (line 5)" in d.message


def test_blocks_a_parameter_sizes_or_of_a_warp_or_more_are_not_warned():
    assert _found(THREE_LEVELS.replace("float a", "int B, float a").replace("k < 16", "k < B"), "PK042") == []
    assert _found(THREE_LEVELS.replace("[16]", "[32]").replace("k < 16", "k < 32"), "PK042") == []
    assert _found(STENCIL16, "PK042") == []                       # 16 x 16 = 256 threads
    one = """void one(int n, float a[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n; i++)
            a[i] = 0.0f;
    }
}
"""
    assert _found(one, "PK042") == [] and _found(one, "PK016")   # PK016 says it


def test_text_at_is_what_the_span_covers(tmp_path):
    path = tmp_path / "add3.c"
    path.write_text(THREE_LEVELS)
    (d,) = _found(THREE_LEVELS, "PK042", str(path))
    assert text_at(path, d.span) == "meta_for"
