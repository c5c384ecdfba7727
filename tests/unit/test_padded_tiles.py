"""Padded tiles (issue 38, point 3): a staged tile that a warp reads across its rows gets rows
padded so that the lanes fall in distinct banks (analysis/padding.py); the shared-memory
counter, the case tree and the launch count the padding; nothing is padded where no warp
conflicts; `profile` shows the wavefronts with and without it; PK040 says what it does.
The same kernels run on the CPU emulation: test_padded_tiles_emulated.py."""
from __future__ import annotations

import dataclasses
import functools
import math

import pytest
import sympy

from conftest import SAMPLES, same
from parakern.analysis import warps as W
from parakern.analysis.padding import pitch_rule
from parakern.analysis.point import evaluate, profile_point
from parakern.analysis.staging import plan, shared_bytes, stageable, unpadded
from parakern.analysis.traffic import traffic
from parakern.counters.shared_memory import SharedMemoryCounter
from parakern.frontend import analyze_file, analyze_source
from parakern.kernel import Kernel
from parakern.launch import launch_of
from parakern.pipeline import analyze
from parakern.reports.traffic import padding_note, table, unpadded_traffic
from parakern.symbolic.symbols import sym

CORPUS = sorted(SAMPLES.glob("*.c")) + sorted((SAMPLES / "polybench").glob("*.c"))
ROWSUM = """#include <assert.h>
#include "metafork.h"
void rowsum(int m, int n, int B, TYPE A[m][n], TYPE y[m])
{
    assert(m % B == 0);
    meta_schedule cache(A) {
        meta_for (int b = 0; b < m / B; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                TYPE s = 0;
                for (int j = 0; j < n; j++)
                    s += A[i][j];
                y[i] = s;
            }
    }
}
"""
# transpose with linearised subscripts: each tile is B0 (or B1) runs of a row, N apart
FLAT_TRANSPOSE = """#include <assert.h>
#include "metafork.h"
void flat_transpose(int N, int B0, int B1, float *a, float *c)
{
    assert(N % B0 == 0 && N % B1 == 0);
    int dim0 = N / B0, dim1 = N / B1;
    meta_schedule cache(a, c) {
        meta_for (int v0 = 0; v0 < dim0; v0++)
            meta_for (int v1 = 0; v1 < dim1; v1++)
                meta_for (int u0 = 0; u0 < B0; u0++)
                    meta_for (int u1 = 0; u1 < B1; u1++) {
                        int i = v0 * B0 + u0;
                        int j = v1 * B1 + u1;
                        c[j * N + i] = a[i * N + j];
                    }
    }
}
"""
# samples/transpose.c with blocks 16 threads wide: a warp spans two rows of the block
TRANSPOSE16 = (SAMPLES / "transpose.c").read_text().replace(
    "assert(N % B0 == 0 && N % (s * B1) == 0);", "assert(N % B0 == 0 && N % (s * B1) == 0 && B1 == 16);")


def _schedule(text: str, name: str = "t.c"):
    (schedule,) = analyze_source(text, name).schedules
    return schedule


def _region(kernel: Kernel, array: str):
    (region,) = [r for st in plan(kernel) if st.array.name == array for c in st.choices for r in c.regions]
    return region


def _shared(t, array: str, text: str = ""):
    """The wavefronts of the body's shared requests of `array` (of its access `text`)."""
    return [r.cost for r in t.requests if r.array == array and r.space == "shared" and r.key[0] == "access"
            and (not text or r.text == text)]


@functools.lru_cache(maxsize=None)
def _transpose():
    return Kernel.initial(analyze_file(SAMPLES / "transpose.c").schedules[0])


# ------------------------------------------------------------------ which tiles, what pitch
def test_transpose_pads_the_tile_it_writes_along_a_column_and_not_the_one_it_reads_along_rows():
    kernel = _transpose()
    assert _region(kernel, "a").pitch is None                      # a[i][j]: lanes along a row
    assert same(_region(kernel, "c").pitch, "2*floor(B0/2) + 1")    # c[j][i]: lanes down a column
    point = {"N": 1024, "B0": 8, "B1": 32, "s": 2}
    padded, before = traffic(kernel, point), traffic(dataclasses.replace(kernel, padding=False), point)
    assert _shared(before, "c", "c[j][i]") == [8.0]      # rows of 8 floats: 32 lanes in 4 banks
    assert _shared(padded, "c", "c[j][i]") == [1.0]      # rows 9 floats apart: 32 banks
    assert padded.conflicts_per_request < before.conflicts_per_request


def test_the_unpadded_variant_is_the_footprint_layout_of_the_paper():
    kernel = dataclasses.replace(_transpose(), padding=False)
    assert all(r.pitch is None for st in plan(kernel) for c in st.choices for r in c.regions)
    assert same(shared_bytes(kernel), "8*s*B0*B1") and same(SharedMemoryCounter().evaluate(kernel), "8*s*B0*B1")
    assert unpadded(kernel) is None and unpadded(_transpose()) == kernel


def test_the_counter_the_tree_and_the_launch_count_the_padding():
    counted = SharedMemoryCounter().measure(_transpose())
    assert same(counted.value, "4*s*B0*B1 + 4*s*B1*(2*floor(B0/2) + 1)") and counted.exact
    assert "rows of c padded" in counted.method
    (result,) = analyze((SAMPLES / "transpose.c").read_text(), "samples/transpose.c").results
    tree = result.tree
    assert tree.coverage.status == "proved"
    staged = [c for c in tree.cases if "(4a)" in c.decisions and "(3a)" in c.decisions]
    assert staged
    for case in staged:
        bytes_ = sympy.sympify(case.counter("shared_memory"))
        assert same(bytes_, "4*s*B0*B1 + 4*s*B1*(2*floor(B0/2) + 1)")
        assert sympy.expand(launch_of(case).shared_bytes - bytes_) == 0
        # the relation on Z is the padded size: at B0 = 8, B1 = 32, s = 2, 2304 + 2048 bytes,
        # where the unpadded tiles needed 4096
        (relation,) = [r for r in case.constraints.relations if isinstance(r, sympy.LessThan) and r.rhs == sym("Z")]
        at = {sym("B0"): 8, sym("B1"): 32, sym("s"): 2}
        assert relation.lhs.xreplace(at) == 4 * 32 * 2 * 8 + 4 * 32 * 2 * 9


@pytest.mark.parametrize("ctype, size, before, after", [("float", 4, 32.0, 1.0), ("double", 8, 32.0, 2.0)])
def test_a_row_per_thread_is_padded_so_the_warp_reads_32_banks(ctype, size, before, after):
    """Each thread reads its own row of the tile (atax's, gesummv's A): unpadded rows of n
    elements put every lane in one bank; a row one element longer spreads them (doubles take
    2 wavefronts at best: 256 bytes)."""
    kernel = Kernel.initial(_schedule(ROWSUM.replace("TYPE", ctype)))
    region = _region(kernel, "A")
    assert same(region.pitch, "2*floor(n/2) + 1")
    point = profile_point(kernel.schedule)
    assert _shared(traffic(dataclasses.replace(kernel, padding=False), point), "A") == [before]
    assert _shared(traffic(kernel, point), "A") == [after]
    assert same(SharedMemoryCounter().evaluate(kernel), f"{size}*B*(2*floor(n/2) + 1)")


def test_a_warp_of_two_block_rows_gets_the_pitch_its_lanes_need():
    """16-wide blocks: a warp holds two rows of the block. a[i][j] then reads two rows of 32
    floats (2-way conflicts: rows 32 apart share banks) and needs rows 16 banks apart; c[j][i]
    writes 16 rows by 2 columns and needs an even pitch that is not a multiple of 4. Neither is
    the odd row of one column per warp: found from the lanes, not by a rule for transposes."""
    kernel = Kernel.initial(_schedule(TRANSPOSE16))
    assert same(_region(kernel, "a").pitch, "32*floor((B1*s + 15)/32) + 16")
    assert same(_region(kernel, "c").pitch, "4*floor((B0 + 1)/4) + 2")
    point = profile_point(kernel.schedule)
    assert point["B1"] == 16
    before, after = traffic(dataclasses.replace(kernel, padding=False), point), traffic(kernel, point)
    assert _shared(before, "a") == [2.0] and _shared(before, "c") == [4.0]
    assert _shared(after, "a") == [1.0] and _shared(after, "c") == [1.0]


def test_the_runs_of_a_linearised_subscript_are_padded_too():
    """c[j * N + i]: c's tile is B1 runs of B0 elements, N apart in c; in shared memory the
    runs are its rows, padded like those of c[j][i]."""
    kernel = Kernel.initial(_schedule(FLAT_TRANSPOSE))
    region = _region(kernel, "c")
    assert region.dims[0].repeats and same(region.row, "B0")
    assert same(region.pitch, "2*floor(B0/2) + 1") and same(region.slots, "B1*(2*floor(B0/2) + 1)")
    point = {"N": 1024, "B0": 8, "B1": 32}
    assert _shared(traffic(dataclasses.replace(kernel, padding=False), point), "c") == [8.0]
    assert _shared(traffic(kernel, point), "c") == [1.0]


# ------------------------------------------------------------------ the pitch as a rule
@pytest.mark.parametrize("pad", [1, 2, 3, 5, 16, 31])
def test_the_pitch_rule_keeps_the_point_s_residue_at_every_row(pad):
    m = 1 << pad.bit_length()
    row = sym("W")
    for at in (1, 8, 30, 32, 33, 64):
        rule = pitch_rule(row, pad, at)
        assert rule.xreplace({row: at}) == at + pad
        for w in range(1, 300):
            p = int(rule.xreplace({row: w}))
            assert w <= p < w + m and p % m == (at + pad) % m, (pad, at, w, p)


def test_an_odd_pitch_puts_a_column_read_by_a_warp_in_32_banks_at_every_width():
    rule = pitch_rule(sym("W"), 1, 8)   # transpose's rule: 2*floor(W/2) + 1
    for w in range(1, 1025):
        p = int(rule.xreplace({sym("W"): w}))
        assert W.wavefronts([lane * p * 4 for lane in range(32)], 4) == 1, (w, p)
        # the same column of unpadded rows: lanes w apart share a bank every 32 / gcd(w, 32) lanes
        assert W.wavefronts([lane * w * 4 for lane in range(32)], 4) == math.gcd(w, 32)


# ------------------------------------------------------------------ nowhere else
def _stageable_kernels():
    """Every staged variant of the corpus: each schedule as written (its cache(...)), and with
    each array cached alone (what PK040's advice would make), where it can be staged."""
    for path in CORPUS:
        for schedule in analyze_file(path).schedules:
            variants = {Kernel.initial(schedule)} | {Kernel(schedule, (a.name,)) for a in schedule.arrays}
            for kernel in variants:
                if kernel.cached and stageable(kernel):
                    yield path.stem, kernel


def test_every_padded_tile_is_sized_by_its_rule_at_the_point():
    """The part of a padded array is its rows times the pitch, at the point too."""
    kernel = Kernel.initial(_schedule(TRANSPOSE16))
    point = profile_point(kernel.schedule)
    subs = evaluate(kernel.schedule, point)
    c = _region(kernel, "c")
    assert c.slots.xreplace(subs) == 32 * 10 and c.pitch.xreplace(subs) == 10
    a = _region(kernel, "a")
    assert a.slots.xreplace(subs) == 8 * 48
    assert shared_bytes(kernel).xreplace(subs) == 4 * (8 * 48 + 32 * 10)


# ------------------------------------------------------------------ what the user sees
def test_profile_shows_the_unpadded_wavefronts_beside_the_padded_ones():
    kernel = _transpose()
    point = {"N": 1024, "B0": 8, "B1": 32, "s": 2}
    before = unpadded_traffic(kernel, point)
    assert before is not None and unpadded_traffic(dataclasses.replace(kernel, cached=("a",)), point) is None
    note = padding_note(kernel, point)
    assert note == "rows of c's tile 9 elements apart (2*(B0/2) + 1) where 8 hold them"
    lines = table(traffic(kernel, point), None, before, None, note)
    head = lines[0].split()
    assert "unpadded" in head
    row = next(line for line in lines if line.startswith("c[j][i]"))
    assert row.split()[6:9] == ["1.00", "1.00", "8.00"]   # wavefronts, ideal, unpadded
    assert f"shared: 0.25 bank conflicts per request (1.75 unpadded; {note})" in lines


def test_a_warning_on_a_tile_padding_cannot_help_says_nothing_of_padding():
    """matvec's A[i * n + j]: staged, its tile is one run of B * n elements (whole rows), whose
    rows the region does not show: no padding, and the advice says none."""
    text = (SAMPLES / "matvec.c").read_text()
    (warning,) = [d for d in analyze(text, "samples/matvec.c").diagnostics if d.code == "PK040"]
    assert "cache(A)" in warning.message and "padded" not in warning.message
    region = _region(Kernel(analyze_file(SAMPLES / "matvec.c").schedules[0], ("A",)), "A")
    assert region.pitch is None and same(region.slots, "B*n")

