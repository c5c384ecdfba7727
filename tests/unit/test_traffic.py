"""Memory traffic without a GPU (issue 16): the warp arithmetic, the profile point, the static
figures per access and per case, the coalescing warning (PK040), register accumulators across
the loops between grid and block levels, and exact staging (no load of what a thread writes
first, no load of a stencil's corners). The same figures counted on the CPU emulation:
test_traffic_emulated.py."""
from __future__ import annotations

import functools
import json

import pytest

from conftest import SAMPLES
from parakern.analysis import warps as W
from parakern.analysis.lifted import lifted
from parakern.analysis.point import profile_point
from parakern.analysis.staging import plan
from parakern.analysis.traffic import traffic
from parakern.codegen import kernel_source
from parakern.commands.cli import main
from parakern.pipeline import analyze

CORPUS = SAMPLES / "polybench"
MATMUL_CACHED = (SAMPLES / "matmul.c").read_text().replace("meta_schedule {", "meta_schedule cache(a, b) {")


def _result(path_or_text, name="t.c", index=0):
    text = path_or_text.read_text() if hasattr(path_or_text, "read_text") else path_or_text
    return _analysed(text, name).results[index]


@functools.lru_cache(maxsize=None)
def _analysed(text: str, name: str):
    return analyze(text, name)


def _case(result, *codes):
    return next(c for c in result.tree.cases if all(code in c.decisions for code in codes))


def _request(t, array, space, kind, what="access"):
    found = [r for r in t.requests if r.array == array and r.space == space and r.kind == kind and r.key[0] == what]
    assert len(found) == 1, [(r.text, r.space, r.kind) for r in t.requests]
    return found[0]


# ------------------------------------------------------------------ warps.py
def test_a_coalesced_warp_of_floats_takes_four_sectors_and_a_misaligned_one_five():
    assert W.sectors([4 * lane for lane in range(32)]) == 4
    assert W.sectors([4 + 4 * lane for lane in range(32)]) == 5
    assert W.ideal_sectors([4 * lane for lane in range(32)], 4) == 4
    assert W.sectors([8 * lane for lane in range(32)]) == 8            # stride 2
    assert W.sectors([4096 * lane for lane in range(32)]) == 32        # a row per thread
    assert W.sectors([0] * 32) == W.ideal_sectors([0] * 32, 4) == 1    # broadcast
    assert not W.uncoalesced(5, 4) and W.uncoalesced(8, 4) and not W.uncoalesced(1, 1)


def test_bank_conflicts_count_distinct_words_per_bank():
    assert W.wavefronts([4 * lane for lane in range(32)], 4) == 1
    assert W.wavefronts([0] * 32, 4) == 1                              # one word: a broadcast
    assert W.wavefronts([128 * lane for lane in range(32)], 4) == 32   # a column of a 32-wide tile
    assert W.wavefronts([8 * lane for lane in range(32)], 8) == 2      # doubles: two wavefronts, no conflict
    assert W.ideal_wavefronts([8 * lane for lane in range(32)], 8) == 2


def test_where_a_request_starts_within_a_sector():
    assert W.spread(128) == {0: 1.0} and W.spread(0) == {0: 1.0}
    assert W.spread(4) == {r: 1 / 8 for r in range(0, 32, 4)}           # every place alike
    assert W.spread(4, 3) == {0: 1 / 3, 4: 1 / 3, 8: 1 / 3}               # a 3-tap loop: t = 0, 1, 2
    assert W.spread(4, 10) == {r: (2 if r < 8 else 1) / 10 for r in range(0, 32, 4)}
    assert W.combine(W.spread(4, 2), {16: 1.0}) == {16: 0.5, 20: 0.5}
    floats = [4 * lane for lane in range(32)]
    assert W.mean_sectors(0, floats, W.spread(4, 3)) == pytest.approx((4 + 5 + 5) / 3)


def test_warps_of_a_block_follow_the_linear_thread_id():
    warps = W.warps((8, 8, 1))
    assert len(warps) == 2 and warps[0][:9] == [(x, 0, 0) for x in range(8)] + [(0, 1, 0)]
    assert [len(w) for w in W.warps((3, 5, 2))] == [30]


def test_matmul_without_cache_reads_a_by_broadcast_and_b_coalesced():
    t = traffic(_result(SAMPLES / "matmul.c").tree.cases[0].kernel, {"n": 1024, "B0": 8, "ub1": 32, "s": 2})
    a, b = _request(t, "a", "global", "read"), _request(t, "b", "global", "read")
    assert (a.cost, a.ideal, b.cost, b.ideal) == (1, 1, 4, 4)
    assert str(a.stride) == "0" and str(b.stride) == "1"
    assert a.per_warp == 1024 / 8 * 8 * 2                   # k, z and w iterations


FIR = """#include "metafork.h"
void fir(int n, int B, float x[n + TAPS], float y[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++) {
                float acc = 0.0f;
                for (int t = 0; t < TAPS; t++)
                    acc += x[i * B + j + t];
                y[i * B + j] = acc;
            }
    }
}
"""
MOD_GRID = """#include "metafork.h"
void mg(int nq, int np, int By, int Bx, float A[nq][np])
{
    int gq = (nq + By - 1) / By, gp = (np + Bx - 1) / Bx;
    meta_schedule {
        meta_for (int bq = 0; bq < gq * gp; bq++)
            meta_for (int ty = 0; ty < By; ty++)
                meta_for (int tx = 0; tx < Bx; tx++) {
                    int q = (bq / gp) * By + ty;
                    int p = (bq % gp) * Bx + tx;
                    if (q < nq && p < np)
                        A[q][p] = 2.0f * A[q][p];
                }
    }
}
"""
PERIODIC = (SAMPLES / "polybench" / "periodic.c").read_text()   # a[(p + 1) % N], cache(a)
UPSAMPLE = (SAMPLES / "polybench" / "upsample.c").read_text()   # in[i / 2][j / 2]


@pytest.mark.parametrize("taps", [3, 5, 7])
def test_a_short_serial_loop_moves_the_start_only_through_the_places_its_values_reach(taps):
    # x[i * B + j + t], t < taps: warps start t floats into a sector, 4 sectors at t = 0, 5 after
    result = _result(FIR.replace("TAPS", str(taps)), f"fir{taps}.c")
    t = traffic(result.tree.cases[0].kernel, {"n": 1024, "B": 32})
    x = _request(t, "x", "global", "read")
    assert x.per_warp == taps and x.cost == pytest.approx((4 + 5 * (taps - 1)) / taps)


# ------------------------------------------------------------------ PK040
def _warnings(path):
    analysis = _analysed(path.read_text(), str(path))
    return [d for d in analysis.diagnostics if d.code == "PK040"]


def test_swapping_the_innermost_levels_is_advised_where_it_coalesces_everything():
    found = _warnings(CORPUS / "scale_cols.c")
    assert {d.message.split(" is ")[0].rsplit(" ", 1)[1] for d in found} == {"B[i][j]", "A[i][j]"}
    assert all("swap the two innermost meta_for levels (tj and ti)" in d.message for d in found)


def test_an_index_with_no_value_per_lane_is_not_warned():
    text = """void gather(int n, int B, float *a, int idx[n], float out[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                out[i * B + j] = a[idx[i * B + j]];
    }
}
"""
    assert not [d for d in analyze(text, "g.c").diagnostics if d.code == "PK040"]


def test_cache_is_advised_only_where_its_copies_would_coalesce():
    """A column a thread per row (Cholesky's scaling of column k) was told to cache(a), whose
    copy of a 32 x 1 tile touches as many sectors; a row per thread (softmax) is told so rightly."""
    column = """void cholcol(int n, int k, int B, double a[n][n])
{
    int g = (n - k - 1 + B - 1) / B;
    meta_schedule {
        meta_for (int bb = 0; bb < g; bb++)
            meta_for (int t = 0; t < B; t++) {
                int i = k + 1 + bb * B + t;
                if (i < n)
                    a[i][k] = a[i][k] * 0.5;
            }
    }
}
"""
    found = [d for d in analyze(column, "c.c").diagnostics if d.code == "PK040"]
    assert found and not [d for d in found if "cache(a)" in d.message]
    rows = """void rows(int m, int n, int B, float x[m][n], float y[m])
{
    meta_schedule {
        meta_for (int b = 0; b < m / B; b++)
            meta_for (int t = 0; t < B; t++) {
                float s = 0.0f;
                for (int j = 0; j < n; j++)
                    s += x[b * B + t][j];
                y[b * B + t] = s;
            }
    }
}
"""
    (d,) = [d for d in analyze(rows, "r.c").diagnostics if d.code == "PK040"]
    assert "cache(x) stages it through shared memory with coalesced copies" in d.message


# ------------------------------------------------------------------ (5) across the between loops
def test_the_accumulator_of_the_granularity_reduced_matmul_lives_across_k():
    result = _result(MATMUL_CACHED, "m.c")
    case = _case(result, "(4a)", "(3b)")
    assert lifted(case.kernel).arrays == ("c",)
    k = result.tree.cases.index(case) + 1
    source = kernel_source(case, k, len(result.tree.cases))
    load, loop, store = (source.index("float c_acc = c["), source.index("for (int k = 0;"),
                         source.index("] = c_acc;"))
    assert load < loop < store and source.count("c_acc = c[") == 1
    assert "c accumulated in registers (c across k too)" in source
    # the granularity kept: c moves with w, a serial loop of the thread, and stays per k
    assert lifted(_case(result, "(4a)", "(3a)").kernel).arrays == ()


# ------------------------------------------------------------------ exact staging
def test_a_tile_the_threads_write_before_reading_is_not_loaded():
    result = _result(CORPUS / "mm_tile.c")
    # (6)'s rows past B0 are guarded, so its tile is not provably written first (test_coarsen)
    staged = [c for c in result.tree.cases if c.kernel.cached and "(6)" not in c.decisions]
    assert staged
    for case in staged:
        (st,) = plan(case.kernel)
        assert all(not r.load for choice in st.choices for r in choice.regions)
        assert all(r.write_back for choice in st.choices for r in choice.regions)
        source = kernel_source(case, 1, 1)
        assert "load the" not in source and "write back" in source


def test_a_full_product_of_offsets_loads_the_whole_region():
    conv = _result(CORPUS / "conv2d.c")
    (st,) = plan(next(c for c in conv.tree.cases if c.kernel.cached).kernel)
    assert all(r.reads == () for choice in st.choices for r in choice.regions)


def test_profile_prints_a_table_per_case(capsys):
    assert main(["profile", str(SAMPLES / "matmul.c"), "--at", "B0=16,ub1=16"]) == 0
    out = capsys.readouterr().out
    assert "matmul:0 at n=1024 B0=16 ub1=16 s=2" in out
    cases = len(_result(SAMPLES / "matmul.c").tree.cases)
    assert out.count("sectors|wavefronts") == cases and "c[p][q + x]" in out
    assert main(["profile", str(SAMPLES / "matmul.c"), "--at", "B0=x"]) == 2


def test_the_hover_shows_a_line_of_traffic_per_case():
    from parakern.lsp.summarize import summarize
    from parakern.lsp.texts import hover_markdown, traffic_markdown
    result = _result(SAMPLES / "transpose.c")
    summary = summarize(result, "k", 0, ())
    assert summary.traffic_point == "N=1024 B0=8 B1=32 s=2"
    assert summary.cases[2].traffic.startswith("18.00 sectors/request")
    text = traffic_markdown(summary)
    assert text.startswith("**Memory traffic** at N=1024") and "- case 1: 4.00 sectors/request" in text
    assert hover_markdown.__code__.co_varnames   # the hover places it after the cases (texts.py)


def test_profile_points_are_tried_in_order_without_building_the_product():
    """The point's candidates come fewest departures first, then lexicographically (the order
    of sorting the product), lazily: a function with 13 integer parameters had 4^13 of them
    sorted in memory (100 s, 15 GB) before its first point was tried."""
    import itertools

    from parakern.analysis.point import _by_departures
    for sizes in ([4, 4, 4], [1, 3, 4, 2], [4], [], [2, 1, 3, 4, 4]):
        assert list(_by_departures(sizes)) == sorted(itertools.product(*(range(n) for n in sizes)),
                                                     key=lambda c: (sum(c), c))
    first = list(itertools.islice(_by_departures([4] * 30), 32))
    assert first[0] == (0,) * 30 and first[1] == (0,) * 29 + (1,) and all(sum(c) <= 1 for c in first[:31])


# ------------------------------------------------------------------ the point of a radius, --at checks
BOX = """
#include <assert.h>
#include "metafork.h"
void box(int n, int R, int B, float x[n], float y[n])
{
    assert(R >= 1 && R <= 4);
    int g = (n - 2 * R) / B;
    meta_schedule {
        meta_for (int i = 0; i < g; i++)
            meta_for (int j = 0; j < B; j++) {
                int p = i * B + j + R;
                float acc = 0.0f;
                for (int d = -R; d <= R; d++)
                    acc += x[p + d];
                y[p] = acc;
            }
    }
}
"""


def test_a_radius_the_grid_shrinks_by_or_the_facts_bound_is_not_a_size():
    """R in `(n - 2 * R) / B` was taken for a data size (1024, 2048, ...), so `assert(R <= 4)`
    left no point; it is a small value whether the facts bound it or the grid shrinks by it."""
    from parakern.analysis.point import constant_bounds
    s = _result(BOX, "box.c").schedule
    assert constant_bounds(s) == {"g": (1, None), "B": (1, None), "R": (1, 4)}
    assert profile_point(s) == {"n": 1024, "R": 2, "B": 32}
    assert profile_point(s, small=True) == {"n": 64, "R": 2, "B": 32}
    unbounded = _result(BOX.replace("assert(R >= 1 && R <= 4);", ""), "box.c").schedule
    assert profile_point(unbounded) == {"n": 1024, "R": 2, "B": 32}           # shrinks the grid
    bounded = _result(BOX.replace("(n - 2 * R) / B", "(n + R) / B").replace("int p = i * B + j + R;",
                                                                           "int p = i * B + j;"), "box.c")
    assert profile_point(bounded.schedule) == {"n": 1024, "R": 2, "B": 32}    # R <= 4 only


def test_profile_and_optimize_find_the_point_of_a_radius(tmp_path, capsys):
    source = tmp_path / "box.c"
    source.write_text(BOX)
    assert main(["profile", str(source)]) == 0
    out = capsys.readouterr().out
    assert "box:0 at n=1024 R=2 B=32" in out and "preferred sizes" not in out
    assert main(["optimize", str(source)]) == 0
    assert "memory traffic at n=1024 R=2 B=32" in capsys.readouterr().out


@pytest.mark.parametrize("at, message", [
    ("zz=3", "parakern profile: --at zz: no schedule of {file} has that parameter (parameters: B, R, n)"),
    ("B=0", "parakern profile: box:0: --at B=0: violates B >= 1 (loop bound, line 10)"),
    ("n=1024,B=-5", "parakern profile: box:0: --at n=1024 B=-5: violates B >= 1 (loop bound, line 10)"),
    ("R=5", "parakern profile: box:0: --at R=5: violates R <= 4 (assert, line 6)"),
    ("n=0", "parakern profile: box:0: --at n=0: violates g >= 1 (loop bound, line 9): g = (-2*R + n)/B at n=0 R=2 B=32"),
    ("B=2048", "parakern profile: box:0: --at B=2048: a block of 2048 threads is more than 1024"),
])
def test_profile_at_values_that_name_no_parameter_or_violate_the_facts_are_bad_usage(tmp_path, capsys, at,
                                                                                      message):
    source = tmp_path / "box.c"
    source.write_text(BOX)
    assert main(["profile", str(source), "--at", at]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == message.format(file=source) and captured.out == ""
    assert main(["profile", "--json", str(source), "--at", at]) == 2
    out = capsys.readouterr().out
    if at != "zz=3":
        assert json.loads(out)["schedules"] == [{"id": "box:0", "error": message.split("box:0: ")[1]}]


def test_profile_at_values_go_to_the_schedules_that_have_them(tmp_path, capsys):
    """A value for another function's parameter was echoed in every schedule's heading."""
    source = tmp_path / "two.c"
    source.write_text(BOX + """
void scale(int m, float z[m])
{
    meta_schedule {
        meta_for (int i = 0; i < m / 32; i++)
            meta_for (int j = 0; j < 32; j++)
                z[i * 32 + j] *= 2.0f;
    }
}
""")
    assert main(["profile", str(source), "--at", "m=64"]) == 0
    out = capsys.readouterr().out
    assert "box:0 at n=1024 R=2 B=32\n" in out and "scale:0 at m=64\n" in out


WHOLE_CUBE = """void f(int n, int B, float a[n][n][n], float b[n][n])
{
    int g = (n + B - 1) / B;
    meta_schedule cache(a) {
        meta_for (int v0 = 0; v0 < n; v0++)
            meta_for (int v = 0; v < g; v++)
                meta_for (int u = 0; u < B; u++) {
                    int k = v * B + u;
                    if (k < n)
                        for (int w = 0; w < n; w++)
                            for (int x = 0; x < n; x++)
                                b[v0][k] += a[w][x][k];
                }
    }
}
"""


def test_a_loop_starting_at_the_threads_parity_has_a_point_and_a_minimum_below_what_moves():
    """samples/polybench/redblack.c: `for (i = 1 + j % 2; i < n - 1; i += 2)` and `(n - 2) % B == 0`.
    The small point was not found among the first preferences (64, 128, 96, 32 against B = 32:
    no n - 2 divisible) and the minimum was the whole arrays (0.04x the bytes moved): the loop's
    executions were not counted, its bounds reading the thread's index."""
    from parakern.analysis.point import profile_point
    result = analyze((SAMPLES / "polybench" / "redblack.c").read_text(), "redblack.c").results[0]
    assert profile_point(result.schedule, small=True) == {"n": 66, "B": 32}
    assert profile_point(result.schedule) == {"n": 1026, "B": 32}
    t = traffic(result.tree.cases[0].kernel, {"n": 1026, "B": 32})
    assert 1.0 < t.global_bytes / t.minimum_bytes < 1.5


EDGE = """void edge(int n, int B, float u[n], float v[n])
{
    meta_schedule {
        meta_for (int b = 0; b < n / B; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i >= 1)
                    v[i] = 2.0f * u[i];
                else
                    v[i] = u[i];
            }
    }
}
"""

FLAT_OUT = """
void transpose_mixed(int n, int m, int Bx, int By, const float in[n][m], float *out)
{
    int gx = (m + Bx - 1) / Bx, gy = (n + By - 1) / By;
    meta_schedule cache(in) {
        meta_for (int by = 0; by < gy; by++)
            meta_for (int bx = 0; bx < gx; bx++)
                meta_for (int ty = 0; ty < By; ty++)
                    meta_for (int tx = 0; tx < Bx; tx++) {
                        int i = by * By + ty;
                        int j = bx * Bx + tx;
                        if (i < n && j < m)
                            out[j * n + i] = in[i][j];
                    }
    }
}
"""


def test_the_warning_advises_cache_only_where_the_array_can_be_staged():
    """out[j * n + i] through a pointer: its runs may overlap, so cache(out) would be refused
    (PK031); the warning used to advise it all the same."""
    (warning,) = [d for d in analyze(FLAT_OUT, "t.c").diagnostics if d.code == "PK040"]
    assert "out[j * n + i]" in warning.message and "cache(out)" not in warning.message
    assert "PK031" in {d.code for d in analyze(FLAT_OUT.replace("cache(in)", "cache(in, out)"), "t.c").diagnostics}

