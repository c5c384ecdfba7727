"""Memory traffic without a GPU (issue 16): the warp arithmetic, the profile point, the static
figures per access and per case, the coalescing warning (PK040), register accumulators across
the loops between grid and block levels, and exact staging (no load of what a thread writes
first, no load of a stencil's corners). The same figures counted on the CPU emulation:
test_traffic_emulated.py."""
from __future__ import annotations

import dataclasses
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
from parakern.kernel import Kernel
from unit.test_traffic import (
    CORPUS,
    EDGE,
    MATMUL_CACHED,
    MOD_GRID,
    PERIODIC,
    UPSAMPLE,
    WHOLE_CUBE,
    _case,
    _request,
    _result,
    _warnings,
)


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


def test_uncoalesced_accesses_are_warned_at_their_range_with_each_cases_figure():
    (d,) = _warnings(SAMPLES / "transpose.c")
    assert d.severity.value == "warning" and (d.span.line, d.span.col, d.span.end_col) == (18, 29, 36)
    assert "N elements apart" in d.message and "32 sectors" in d.message
    assert "case 1: shared memory" in d.message and "case 3: 32" in d.message
    assert "cache(c)" in d.message and "would uncoalesce a[i][j]" in d.message


def test_the_covariance_mirror_store_is_warned():
    (d,) = [d for d in _warnings(CORPUS / "covariance.c")]
    assert "cov[j][i]" in d.message and "8 would hold" in d.message    # doubles


@pytest.mark.parametrize("name", ["matmul", "matadd", "stencil2d", "jacobi1d", "saxpy", "polydiv"])
def test_coalesced_and_broadcast_accesses_are_not_warned(name):
    assert _warnings(SAMPLES / f"{name}.c") == []


def test_no_accumulator_moves_where_the_loops_may_not_run_or_the_array_is_staged():
    text = (SAMPLES / "matmul.c").read_text()
    unproved = text.replace("    assert(n % B0 == 0 && n % (ub1 * s) == 0);\n", "").replace(
        "    assert(B0 <= ub1 * s);\n", "").replace("int dim0 = n / B0", "int dim0 = (n + B0 - 1) / B0")
    result = _result(unproved, "u.c")
    assert all(lifted(c.kernel).arrays == () for c in result.tree.cases)   # n / B0 may be 0
    staged = _result(text.replace("meta_schedule {", "meta_schedule cache(c) {"), "c.c")
    assert all(lifted(Kernel(c.kernel.schedule, ("c",))).arrays == () for c in staged.tree.cases)


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
