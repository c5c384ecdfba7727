"""Memory traffic without a GPU (issue 16): the warp arithmetic, the profile point, the static
figures per access and per case, the coalescing warning (PK040), register accumulators across
the loops between grid and block levels, and exact staging (no load of what a thread writes
first, no load of a stencil's corners). The same figures counted on the CPU emulation:
test_traffic_emulated.py."""
from __future__ import annotations

import dataclasses
import functools
import json

import pytest

from conftest import SAMPLES
from parakern.analysis import warps as W
from parakern.analysis.coalescing import uncoalesced_accesses
from parakern.analysis.lifted import lifted
from parakern.analysis.point import holds, profile_point
from parakern.analysis.staging import plan
from parakern.analysis.traffic import traffic
from parakern.commands.cli import main
from parakern.codegen import kernel_source
from parakern.kernel import Kernel
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


# ------------------------------------------------------------------ the point

def test_the_profile_point_is_what_a_programmer_runs_and_satisfies_the_facts():
    s = _result(SAMPLES / "matmul.c").schedule
    point = profile_point(s)
    assert point == {"n": 1024, "B0": 8, "ub1": 32, "s": 2} and holds(s, point)
    assert profile_point(s, small=True)["n"] == 64
    assert profile_point(s, {"B0": 16, "ub1": 16})["B0"] == 16
    assert not holds(s, {"n": 1000, "B0": 16, "ub1": 16, "s": 1})   # 1000 % 16 != 0
    assert profile_point(_result(SAMPLES / "saxpy.c").schedule)["n"] == 1024   # a pointer's length is a size


# ------------------------------------------------------------------ static figures

def test_matmul_with_cache_moves_the_minimum_once_granularity_is_reduced():
    result = _result(MATMUL_CACHED, "m.c")
    point = {"n": 1024, "B0": 16, "ub1": 16, "s": 1}
    t = traffic(_case(result, "(4a)", "(3b)").kernel, point)
    c_read, c_write = _request(t, "c", "global", "read"), _request(t, "c", "global", "write")
    assert c_read.per_warp == c_write.per_warp == 1          # once per thread: decision (5) across k
    assert c_read.cost == 4 and c_write.cost == 4
    a_copy = _request(t, "a", "global", "read", "copy")
    assert a_copy.cost == 4 and a_copy.requests == 8 * (1024 / 16)   # a 16 x 16 tile: 8 warps, 64 k
    assert t.conflicts_per_request == 0
    assert t.global_bytes == t.minimum_bytes                 # nothing moved twice
    # sectors per multiply-add: (2 tiles of 16 x 16 floats per k + c) / (16^3 per k)
    fma = 16 * 16 * 1024
    assert t.global_bytes / 32 / fma == pytest.approx((2 * 16 * 16 / 8 * 64 + 2 * 8 * 4) / fma)


def test_matmul_without_cache_reads_a_by_broadcast_and_b_coalesced():
    t = traffic(_result(SAMPLES / "matmul.c").tree.cases[0].kernel, {"n": 1024, "B0": 8, "ub1": 32, "s": 2})
    a, b = _request(t, "a", "global", "read"), _request(t, "b", "global", "read")
    assert (a.cost, a.ideal, b.cost, b.ideal) == (1, 1, 4, 4)
    assert str(a.stride) == "0" and str(b.stride) == "1"
    assert a.per_warp == 1024 / 8 * 8 * 2                   # k, z and w iterations


def test_transpose_reports_its_uncoalesced_store_and_the_bank_conflicts_of_its_staged_copy():
    result = _result(SAMPLES / "transpose.c")
    point = {"N": 1024, "B0": 8, "B1": 32, "s": 2}
    plain = traffic(_case(result, "(4b)").kernel, point)
    store = _request(plain, "c", "global", "write")
    assert store.cost == 32 and store.ideal == 4 and str(store.stride) == "N"
    kernel = _case(result, "(4a)").kernel
    staged = traffic(kernel, point)
    assert _request(staged, "c", "global", "write", "copy").cost == 4    # the write-back is coalesced
    assert _request(staged, "c", "shared", "write").conflicts == 0       # c_shared[j][i]: a column of padded rows
    unpadded = traffic(dataclasses.replace(kernel, padding=False), point)
    assert _request(unpadded, "c", "shared", "write").conflicts == 7     # rows of 8 floats: 8-way
    assert 0 < staged.conflicts_per_request < unpadded.conflicts_per_request


def test_a_misaligned_stencil_neighbour_costs_one_sector_more_and_is_not_uncoalesced():
    result = _result(SAMPLES / "stencil2d.c")
    t = traffic(_case(result, "(4b)").kernel, {"N": 1026, "Bx": 32, "By": 8})
    centre = next(r for r in t.requests if r.text == "in[i][j]")
    assert centre.cost == 5 and centre.ideal == 4
    assert not uncoalesced_accesses([t])


def test_a_row_stride_that_moves_the_start_through_a_sector_is_averaged():
    # n = 1026 floats: each row starts 8 bytes further into a sector than the one above
    t = traffic(_result(SAMPLES / "matadd.c").tree.cases[0].kernel, {"N": 1026, "B0": 8, "B1": 32})
    left, right = (next(r for r in t.requests if r.text == text) for text in ("a[i][j]", "a[i][j + N / 2]"))
    assert left.cost == (4 + 5 + 5 + 5) / 4      # the warps of rows 0..7 start 0, 8, 16, 24, 0, ... bytes in
    assert right.cost == 5                       # N / 2 = 513 floats: 4 bytes more, never on a boundary


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


def test_a_flattened_grid_index_keeps_each_warp_on_a_sector_boundary():
    # p = (bq % gp) * Bx + tx: (bq % gp) * 32 floats is a multiple of a sector, whatever bq is
    t = traffic(_result(MOD_GRID, "mg.c").tree.cases[0].kernel, {"nq": 64, "np": 64, "By": 2, "Bx": 32})
    assert _request(t, "A", "global", "read").cost == _request(t, "A", "global", "write").cost == 4
    # rows of 100 floats: row q starts 16 * q bytes into a sector, the block column adds none
    t = traffic(_result(MOD_GRID, "mg.c").tree.cases[0].kernel, {"nq": 64, "np": 100, "By": 1, "Bx": 32})
    assert _request(t, "A", "global", "read").cost == (4 + 5) / 2


def test_the_minimum_is_no_more_than_the_elements_a_modulo_or_divided_subscript_reaches():
    # a[(p + 1) % N]'s footprint is the whole array, but a block's 32 threads reach 34 elements
    periodic = _result(PERIODIC, "periodic.c")
    for case in periodic.tree.cases:
        t = traffic(case.kernel, {"N": 1024, "B": 32})
        assert t.minimum_bytes == 8 * (32 + 2) + 8 * 32
    plain = traffic(periodic.tree.cases[-1].kernel, {"N": 1024, "B": 32})   # a is not staged: its tile is whole
    assert plain.minimum_bytes <= plain.global_bytes
    # in[i / 2][j / 2] from a 32 x 8 block: 16 x 4 elements of in, 32 x 8 of out
    t = traffic(_result(UPSAMPLE, "up.c").tree.cases[0].kernel, {"n": 1024, "Bx": 32, "By": 8})
    assert t.minimum_bytes == 4 * 16 * 4 + 4 * 32 * 8 <= t.global_bytes


def test_the_minimum_leaves_out_a_stencils_corners_and_what_a_thread_wrote_first():
    stencil = _result(SAMPLES / "stencil2d.c")
    t = traffic(stencil.tree.cases[0].kernel, {"N": 1026, "Bx": 32, "By": 8})
    assert t.minimum_bytes == 4 * ((8 + 2) * (32 + 2) - 4) + 4 * 8 * 32
    tile = _result(CORPUS / "mm_tile.c")
    t = traffic(tile.tree.cases[0].kernel, {"ni": 64, "nj": 64, "nk": 64, "B0": 8, "B1": 32})
    assert t.minimum_bytes == 4 * (8 * 64 + 64 * 32 + 8 * 32)           # A, B read; C written only


# ------------------------------------------------------------------ PK040

def _warnings(path):
    analysis = _analysed(path.read_text(), str(path))
    return [d for d in analysis.diagnostics if d.code == "PK040"]


def test_uncoalesced_accesses_are_warned_at_their_range_with_each_cases_figure():
    (d,) = _warnings(SAMPLES / "transpose.c")
    assert d.severity.value == "warning" and (d.span.line, d.span.col, d.span.end_col) == (18, 29, 36)
    assert "N elements apart" in d.message and "32 sectors" in d.message
    assert "case 1: shared memory" in d.message and "case 3: 32" in d.message
    assert "cache(c)" in d.message and "would uncoalesce a[i][j]" in d.message


def test_swapping_the_innermost_levels_is_advised_where_it_coalesces_everything():
    found = _warnings(CORPUS / "scale_cols.c")
    assert {d.message.split(" is ")[0].rsplit(" ", 1)[1] for d in found} == {"B[i][j]", "A[i][j]"}
    assert all("swap the two innermost meta_for levels (tj and ti)" in d.message for d in found)


def test_the_covariance_mirror_store_is_warned():
    (d,) = [d for d in _warnings(CORPUS / "covariance.c")]
    assert "cov[j][i]" in d.message and "8 would hold" in d.message    # doubles


@pytest.mark.parametrize("name", ["matmul", "matadd", "stencil2d", "jacobi1d", "saxpy", "polydiv"])
def test_coalesced_and_broadcast_accesses_are_not_warned(name):
    assert _warnings(SAMPLES / f"{name}.c") == []


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


def test_no_accumulator_moves_where_the_loops_may_not_run_or_the_array_is_staged():
    text = (SAMPLES / "matmul.c").read_text()
    unproved = text.replace("    assert(n % B0 == 0 && n % (ub1 * s) == 0);\n", "").replace(
        "    assert(B0 <= ub1 * s);\n", "").replace("int dim0 = n / B0", "int dim0 = (n + B0 - 1) / B0")
    result = _result(unproved, "u.c")
    assert all(lifted(c.kernel).arrays == () for c in result.tree.cases)   # n / B0 may be 0
    staged = _result(text.replace("meta_schedule {", "meta_schedule cache(c) {"), "c.c")
    assert all(lifted(Kernel(c.kernel.schedule, ("c",))).arrays == () for c in staged.tree.cases)


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


def test_a_stencils_corners_are_not_loaded_but_still_allocated():
    two = _result(SAMPLES / "stencil2d.c")
    (st,) = plan(two.tree.cases[0].kernel)
    (region,) = st.choices[0].regions
    assert len(region.reads) == 2 and region.load
    assert str(two.tree.cases[0].counter("shared_memory")) == "4*Bx*By + 8*Bx + 8*By + 16"   # the box
    three = _result(CORPUS / "stencil3d.c")
    (st,) = plan(three.tree.cases[0].kernel)
    assert len(st.choices[0].regions[0].reads) == 3
    t = traffic(three.tree.cases[0].kernel, {"n": 34, "Bx": 32, "By": 8, "Bz": 2})
    load = _request(t, "in", "global", "read", "copy")
    # (2 + 2) x (8 + 2) x (32 + 2) box, 8 corners and 4 * (2 + 8 + 32) edge elements never loaded
    box, unread = 4 * 10 * 34, 8 + 4 * (2 + 8 + 32)
    assert load.requests * W.WARP >= box - unread and t.minimum_bytes == 4 * (box - unread) + 4 * 2 * 8 * 32


def test_a_full_product_of_offsets_loads_the_whole_region():
    conv = _result(CORPUS / "conv2d.c")
    (st,) = plan(next(c for c in conv.tree.cases if c.kernel.cached).kernel)
    assert all(r.reads == () for choice in st.choices for r in choice.regions)


# ------------------------------------------------------------------ where the figures are shown

def test_optimize_shows_the_traffic_of_each_case_in_text_and_json(capsys):
    assert main(["optimize", str(SAMPLES / "transpose.c")]) == 0
    out = capsys.readouterr().out
    assert "memory traffic at N=1024 B0=8 B1=32 s=2" in out and "case 3: 18.00 sectors/request" in out
    assert main(["optimize", "--json", str(SAMPLES / "transpose.c")]) == 0
    (s,) = json.loads(capsys.readouterr().out)["schedules"]
    assert s["traffic_point"] == {"N": 1024, "B0": 8, "B1": 32, "s": 2}
    t = s["cases"][2]["traffic"]
    assert t["sectors_per_request"] == 18 and t["block"] == [32, 8, 1]
    store = next(r for r in t["requests"] if r["what"] == "c[j][i]")
    assert store["sectors"] == 32 and store["stride"] == "N" and store["range"]["start"]["line"] == 17


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


def test_a_copy_of_a_region_no_shared_memory_holds_is_sampled_not_walked():
    """a's region is n x n x B elements (once the whole n^3 array, of a % subscript, which is no
    longer staged): at the profile point n = 1024 its copy loop makes 2^20 warp requests per
    block, which were walked one by one (optimize hung in the coalescing warnings). Evenly spaced
    rounds stand for them now; the counts are the same."""
    result = _result(WHOLE_CUBE, "cube.c")
    staged = Kernel(result.schedule, ("a",))
    for n, exact in ((16, True), (1024, False)):
        t = traffic(staged, {"n": n, "B": 32})
        (load,) = [r for r in t.requests if r.key[0] == "copy" and r.space == "global"]
        assert load.requests == n * n * 32 // 32 and load.cost == 4.0 and load.exact is exact



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


def test_the_else_of_a_guard_on_the_thread_counts_in_the_warps_that_take_it():
    """`if (i >= 1) ... else ...`: the else's accesses were not counted at all (profile --emulate:
    "counted on the emulation only", exit 1). Its requests are those of the warps where a lane
    fails the guard: the first warp of 2 blocks at n = 64, B = 32, half a request per block, as
    the emulation counts."""
    from parakern.verify.emulated_traffic import measure
    result = _result(EDGE, "edge.c")
    point = {"n": 64, "B": 32}
    t = traffic(result.tree.cases[0].kernel, point)
    per_line = sorted((r.text, r.kind, r.requests) for r in t.requests)
    assert per_line == [("u[i]", "read", 0.5), ("u[i]", "read", 1.0), ("v[i]", "write", 0.5), ("v[i]", "write", 1.0)]
    emulated = measure(result, point)[1]
    assert sorted(c.requests for c in emulated.requests.values()) == [0.5, 0.5, 1.0, 1.0]


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
