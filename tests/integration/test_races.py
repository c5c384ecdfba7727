"""Races found by execution (verify/parakern_race.h), independently of the static test.

The CPU emulation runs a block's threads one after another, so most races give the right
result there: a lost update in a warp, two blocks writing one element, a missing barrier
before reading what another thread wrote. verify notes every element reference of the
traced kernels in shadow memory per barrier interval (per launch for global memory between
blocks) and fails a point where two threads race, naming both, the element and the lines;
and runs every point a second time in a shuffled order of blocks and threads.

The kernels here are hand-written CUDA run through the same runner: the emitted kernel of a
race-free program is replaced by one that computes the same result with a race (its element
references written as traced emission prints them), and none of them changes what the
serial C computes, except where the test says so.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from parakern.pipeline import analyze
from parakern.verify import Session, device, text, verify_file
from parakern.verify.build import HEADER, RACE_HEADER
from parakern.verify.points import TREE

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None,
                                reason="parakern verify needs gcc and g++")

COPY = """#include "metafork.h"

void copy(int n, int B, int a[n], int b[n])
{
    int nb = (n + B - 1) / B;
    meta_schedule {
        meta_for (int i = 0; i < nb; i++)
            meta_for (int j = 0; j < B; j++) {
                int k = i * B + j;
                if (k < n)
                    b[k] = a[k];
            }
    }
}
"""

MACHINE = device(65536, 1 << 16, 1024)
VALUES = {"n": 200, "B": 32}          # 7 blocks of a warp, the last one partly idle


def _program(tmp_path, name: str, text: str) -> Path:
    (tmp_path / "metafork.h").write_text((ROOT / "samples" / "metafork.h").read_text())
    source = tmp_path / name
    source.write_text(text)
    return source


def hand_written(body: str, helpers: str = ""):
    """transform_cu: every case kernel of `copy` gets `body` (its parameters b, a, n, B)."""
    def transform(cu: str) -> str:
        kernels = list(re.finditer(r"__global__ void copy_0_case\d+\([^)]*\)\n\{\n", cu))
        assert kernels, "no kernel of copy in the emitted .cu"
        for match in reversed(kernels):
            end = cu.index("\n}\n", match.end())
            cu = cu[:match.end()] + body + cu[end:]
        return cu.replace("/* ------------------------------------------------------------ kernels */",
                          helpers + "\n/* ------------------------------------------------------------ kernels */", 1)
    return transform


def run_copy(tmp_path, body: str, helpers: str = "", races: bool = True):
    """The point VALUES of `copy` with its kernels replaced by `body`; the .cu is kept in
    tmp_path/build/kernels.cu."""
    source = _program(tmp_path, "copy.c", COPY)
    with Session(COPY, str(source), transform_cu=hand_written(body, helpers), races=races,
                 build_dir=tmp_path / "build") as session:
        assert session.targets, session.problem or session.unverifiable
        return session.run("copy:0", dict(VALUES), MACHINE)


def lines_of(tmp_path, needle: str) -> set:
    """The lines of the kept kernels.cu that hold `needle`."""
    cu = (tmp_path / "build" / "kernels.cu").read_text().split("\n")
    return {n for n, line in enumerate(cu, 1) if needle in line}


# ------------------------------------------------------------------ races the emulation's results hide

LOST_UPDATE = """\
    const int k = blockIdx.x * B + threadIdx.x;
    if (k < n) {
        PARAKERN_AT(1, 0, b, k) = PARAKERN_AT(2, 0, a, k);
        if (k + 1 < n && threadIdx.x + 1 < B)
            PARAKERN_AT(3, 0, b, k + 1) += 0;   /* load and store the neighbour's element */
    }
"""


def test_a_lost_update_in_a_warp_is_a_race_though_every_result_is_right(tmp_path):
    """Thread t loads and stores b[k + 1] while thread t + 1 writes it: on a GPU the store may
    undo the write; on the emulation, in any order, the result is right."""
    point = run_copy(tmp_path, LOST_UPDATE)
    assert not point.mismatches, point.mismatches      # the results alone would verify it
    race = point.race
    assert race and not point.ok, point
    assert race["array"] == "b" and race["interval"] == "barrier" and not race["shared"]
    first, second = race["first"], race["second"]
    assert first["block"] == second["block"]
    assert {first["kind"], second["kind"]} & {"write"} and first["thread"] != second["thread"]
    # the element is the one both touched: b[k + 1] of one thread is b[k] of its neighbour
    k = race["index"][0]
    assert k % VALUES["B"] in (first["thread"][0], second["thread"][0])
    assert race["elements"] >= VALUES["n"] // VALUES["B"] * (VALUES["B"] - 1) - 1   # every neighbour pair
    line = text_line(point)
    assert f"race on b[{k}]" in line and "no __syncthreads between them" in line
    lines = {first["line"], second["line"]}
    assert lines <= lines_of(tmp_path, "PARAKERN_AT(1,") | lines_of(tmp_path, "PARAKERN_AT(3,")
    assert all(f"kernels.cu:{n}" in line for n in lines)


def text_line(point) -> str:
    from parakern.verify import races
    return races.text(point.race)


BETWEEN_BLOCKS = """\
    const int k = blockIdx.x * B + threadIdx.x;
    if (k < n) {
        PARAKERN_AT(1, 0, b, k) = PARAKERN_AT(2, 0, a, k);
        if (threadIdx.x == 0 && k + B < n)   /* the next block's first element, the same value */
            PARAKERN_AT(3, 0, b, k + B) = PARAKERN_AT(4, 0, a, k + B);
    }
"""


def test_two_blocks_writing_one_element_race_in_one_launch(tmp_path):
    point = run_copy(tmp_path, BETWEEN_BLOCKS)
    assert not point.mismatches
    race = point.race
    assert race and race["interval"] == "launch"
    assert race["first"]["block"] != race["second"]["block"]
    assert race["first"]["kind"] == race["second"]["kind"] == "write"
    assert race["index"][0] % VALUES["B"] == 0 and race["elements"] == VALUES["n"] // VALUES["B"]
    assert "in different blocks of one launch" in text_line(point)


MISSING_BARRIER = """\
    __shared__ int tile[1024];
    const int k = blockIdx.x * B + threadIdx.x;
    PARAKERN_AT_SHARED(1, 0, tile, threadIdx.x) = k < n ? (int)PARAKERN_AT(2, 0, a, k) : 0;
    BARRIER
    const int mirror = B - 1 - threadIdx.x;      /* another thread's element, weighed 0 */
    if (k < n)
        PARAKERN_AT(3, 0, b, k) = PARAKERN_AT_SHARED(4, 0, tile, threadIdx.x)
                                  + 0 * PARAKERN_AT_SHARED(5, 0, tile, mirror);
"""


def test_a_missing_syncthreads_in_a_hand_written_kernel_is_a_race(tmp_path):
    """Each thread reads a slot another thread of its block writes; without the barrier
    between them that is a race (the value read is weighed 0: the results are right)."""
    point = run_copy(tmp_path, MISSING_BARRIER.replace("BARRIER", "/* no barrier */"))
    assert not point.mismatches
    race = point.race
    assert race and race["shared"] and race["array"] == "tile" and race["interval"] == "barrier"
    assert {race["first"]["kind"], race["second"]["kind"]} == {"read", "write"}
    assert race["first"]["block"] == race["second"]["block"]
    # the lines of the .cu: the write of one slot and the read of the mirror slot
    assert {race["first"]["line"], race["second"]["line"]} == \
        lines_of(tmp_path, "PARAKERN_AT_SHARED(1,") | lines_of(tmp_path, "PARAKERN_AT_SHARED(5,")
    # with the barrier the same kernel is race-free
    fixed = run_copy(tmp_path, MISSING_BARRIER.replace("BARRIER", "__syncthreads();"))
    assert fixed.ok and fixed.race is None, (fixed.race, fixed.mismatches, fixed.error)


# ------------------------------------------------------------------ atomics

ATOMIC_HELPER = """
/* an atomic add of the test's own (the emulation runs one thread at a time) */
static int test_atomic_add(int *p, int v) { int old = *p; *p = old + v; return old; }
"""

ATOMIC = """\
    const int k = blockIdx.x * B + threadIdx.x;
    if (k < n)
        PARAKERN_AT(1, 0, b, k) = 0;
    __syncthreads();
    for (int t = 0; t < B; t++) {     /* every thread adds to every element of its block: a[k] to its own */
        const int e = blockIdx.x * B + t;
        if (k < n && e < n)
            UPDATE
    }
    PEEK
"""
ATOMIC_UPDATE = "test_atomic_add(&PARAKERN_AT_ATOMIC(2, 0, b, e), e == k ? (int)PARAKERN_AT(3, 0, a, k) : 0);"
PLAIN_UPDATE = "PARAKERN_AT(2, 0, b, e) += e == k ? (int)PARAKERN_AT(3, 0, a, k) : 0;"
PEEK = "if (threadIdx.x == 0 && k + 1 < n) { volatile int seen = PARAKERN_AT(4, 0, b, k + 1); (void)seen; }"


def test_atomic_updates_of_one_element_do_not_race(tmp_path):
    point = run_copy(tmp_path, ATOMIC.replace("UPDATE", ATOMIC_UPDATE).replace("PEEK", ""), ATOMIC_HELPER)
    assert point.ok and point.race is None, (point.race, point.mismatches, point.error)


def test_plain_updates_of_one_element_race(tmp_path):
    point = run_copy(tmp_path, ATOMIC.replace("UPDATE", PLAIN_UPDATE).replace("PEEK", ""), ATOMIC_HELPER)
    assert not point.mismatches and point.race and point.race["interval"] == "barrier"
    assert "write" in {point.race["first"]["kind"], point.race["second"]["kind"]}


def test_a_plain_read_beside_atomic_updates_races(tmp_path):
    """Atomics do not race with atomics, but do with a plain access of the same interval."""
    point = run_copy(tmp_path, ATOMIC.replace("UPDATE", ATOMIC_UPDATE).replace("PEEK", PEEK), ATOMIC_HELPER)
    assert not point.mismatches and point.race, point
    assert {point.race["first"]["kind"], point.race["second"]["kind"]} == {"atomic", "read"}
    assert "updates atomically" in text_line(point)


# ------------------------------------------------------------------ the second thread order

ORDER = """\
    const int k = blockIdx.x * B + threadIdx.x;
    if (k < n) {
        b[k] = a[k];
        if (threadIdx.x == 0 && k + B < n)
            b[k + B] = -1;     /* right only where the next block runs after this one */
    }
"""


def test_the_second_order_catches_what_shadow_memory_does_not_see(tmp_path):
    """Plain subscripts (no traced reference): the shadow memory sees nothing; blocks in
    blockIdx order give the right result, the shuffled order does not."""
    point = run_copy(tmp_path, ORDER)
    assert point.race is None and not point.ok
    assert point.mismatches and all(m.get("order") == 2 for m in point.mismatches), point.mismatches
    assert "in the second thread order" in text(_fake_file(point))
    off = run_copy(tmp_path, ORDER, races=False)   # --no-race-check: one order, as before
    assert off.ok, off


def _fake_file(point):
    from parakern.verify.results import CaseResult, FileResult, ScheduleResult
    return FileResult("copy.c", (ScheduleResult("copy:0", 6, (CaseResult(1, "", (), (point,)),)),))


def test_the_race_check_can_be_turned_off(tmp_path):
    off = run_copy(tmp_path, LOST_UPDATE, races=False)
    assert off.ok and off.race is None


# ------------------------------------------------------------------ programs the static test accepts

REFLECT = """#include "metafork.h"
#include <assert.h>
#include <stdlib.h>

void reflect(int n, int m, int B, float a[n], float b[2 * n])
{
    assert(m < n);
    int nb = (n + B - 1) / B;
    meta_schedule {
        meta_for (int u = 0; u < nb; u++)
            meta_for (int v = 0; v < B; v++) {
                int i = u * B + v;
                if (i < n)
                    b[abs(i - m)] = a[i];
            }
    }
}
"""


def test_a_race_that_only_some_parameter_values_show(tmp_path):
    """b[abs(i - m)]: the static test cannot decide it (a warning, no error); i and 2m - i
    collide where 0 < m < n - 1, and nowhere at m = 0."""
    source = _program(tmp_path, "reflect.c", REFLECT)
    analysis = analyze(REFLECT, str(source))
    codes = {d.code for d in analysis.diagnostics}
    assert "PK021" in codes and not any(d.severity.value == "error" for d in analysis.diagnostics), codes
    with Session(REFLECT, str(source)) as session:
        clean = session.run("reflect:0", {"n": 100, "m": 0, "B": 32}, MACHINE)
        assert clean.ok and clean.race is None, (clean.race, clean.mismatches)
        racy = session.run("reflect:0", {"n": 100, "m": 40, "B": 32}, MACHINE)
    race = racy.race
    assert race and not racy.ok and race["array"] == "b"
    assert 1 <= race["index"][0] <= 40
    line = next(n for n, t in enumerate(REFLECT.split("\n"), 1) if "b[abs(i - m)]" in t)
    col = REFLECT.split("\n")[line - 1].index("b[abs") + 1
    assert race["first"]["where"] == race["second"]["where"] == f"{source}:{line}:{col}"
    assert f"{source}:{line}:{col}" in text_line(racy)


def test_verify_fails_the_racy_program_at_the_points_it_draws(tmp_path):
    result = verify_file(_program(tmp_path, "reflect.c", REFLECT), points=2)
    report = text(result)
    assert not result.ok and "race on b[" in report and "FAILED" in report, report
    assert all(p.race for c in result.schedules[0].cases for p in c.points if 0 < p.values["m"] < p.values["n"] - 1)


# ------------------------------------------------------------------ the header itself

def test_the_race_header_compiles_without_a_warning(tmp_path):
    use = tmp_path / "use.cpp"
    use.write_text("__global__ void k(int *a, const float *x, int n)\n{\n"
                   "    PARAKERN_AT(1, 0, a, threadIdx.x) += (int)PARAKERN_AT(2, 0, x, n);\n"
                   "    int *p = &PARAKERN_AT_ATOMIC(3, 0, a, 0);\n    *p += 1;\n}\n")
    done = subprocess.run(["g++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-c", "-include", str(HEADER),
                           "-include", str(RACE_HEADER), "-x", "c++", str(use), "-o", str(tmp_path / "use.o")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


# ------------------------------------------------------------------ a race the check found in generated code

def test_coarsened_rows_past_the_block_are_not_loaded():
    """mm_tile's thread coarsening (6) stages a tile of 4 * ceil(B0 / 4) rows of C; at B0 = 6
    its load read rows 6 and 7, the next block's, while that block wrote them (the race check
    found it: 'race on C[6][0] ... in different blocks of one launch'). No thread reads a row
    past B0 (`ti_1 < B0 ? C[i_1][j] : 0`): the load stops there."""
    import sympy

    from parakern.analysis.staging import plan
    path = ROOT / "samples" / "polybench" / "mm_tile.c"
    text_ = path.read_text()
    tree = analyze(text_, str(path)).results[0].tree
    coarse = [k for k, c in enumerate(tree.cases, 1) if "(6)" in c.decisions and "(4a)" in c.decisions]
    assert coarse
    for k in coarse:
        (st,) = plan(tree.cases[k - 1].kernel)
        (region,) = [r for choice in st.choices for r in choice.regions if r.load]
        (box,) = region.reads
        assert sympy.expand(box[0][0] + box[0][1] - sympy.Symbol("B0", integer=True)) == 0, box
    with Session(text_, str(path)) as session:
        point = session.run("mm_tile:0", {"ni": 18, "nj": 64, "nk": 16, "B0": 6, "B1": 32},
                            device(65536, 1 << 16, 128), rule=TREE)   # the tree's order: the coarsened case
    assert point.chosen == (coarse[0],) and point.ok and point.race is None, (point.race, point.error)
