"""Memory traffic counted on the CPU emulation (verify/emulated_traffic.py): the check of the static
figures of analysis/traffic.py, and issue 16's "done when": matmul with cache(a, b) against
a textbook tiled SGEMM, and the coalescing warning (PK040) on the PolyBench-style corpus
against what the emulation's warps touch. Needs g++ (skipped without it)."""
from __future__ import annotations

import functools
import shutil

import pytest

from conftest import SAMPLES
from parakern.analysis import warps as W
from parakern.analysis.point import profile_point
from parakern.analysis.traffic import traffic
from parakern.codegen.emit import INCLUDES, PREAMBLE
from parakern.codegen.kernel_source import kernel_source
from parakern.commands.profile import _differences
from parakern.pipeline import analyze
from parakern.reports.traffic import schedule_traffic
from parakern.verify.emulated_traffic import measure, run_traced
from unit.test_traffic import FIR, MOD_GRID, PERIODIC, UPSAMPLE

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ for the CPU emulation")

CORPUS = SAMPLES / "polybench"
PROGRAMS = sorted(CORPUS.glob("*.c")) + sorted(SAMPLES.glob("*.c"))
MATMUL_CACHED = (SAMPLES / "matmul.c").read_text().replace("meta_schedule {", "meta_schedule cache(a, b) {")


@functools.lru_cache(maxsize=None)
def _analysed(text: str, name: str):
    return analyze(text, name)


@functools.lru_cache(maxsize=None)
def _profiled(path):
    """Per schedule: (result, point, static Traffic per case, emulated Measured per case)."""
    out = []
    for result in _analysed(path.read_text(), str(path)).results:
        if result.tree is None or not result.tree.cases:
            continue
        point, per_case = schedule_traffic(result, small=True)
        assert point is not None, result.schedule.id
        out.append((result, point, per_case, measure(result, point)))
    return tuple(out)


# ------------------------------------------------------------------ static = emulated

@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_the_static_figures_are_those_the_emulation_counts(path):
    for result, point, per_case, measured in _profiled(path):
        for k, t in enumerate(per_case, 1):
            assert not isinstance(t, str), (result.schedule.id, k, t)
            # every request the analysis counts was seen, and the cost of whole warps agrees
            # (a guard on the thread may skip whole warps: the analysis counts it as holding)
            assert _differences(t, measured[k]) == [], (result.schedule.id, k, point)


@pytest.mark.parametrize("text, point", [
    (FIR.replace("TAPS", "3"), {"n": 64, "B": 32}),       # warps 0, 4, 8 bytes into a sector: (4 + 5 + 5) / 3
    (FIR.replace("TAPS", "5"), {"n": 96, "B": 32}),
    (FIR.replace("TAPS", "7"), {"n": 64, "B": 32}),
    (MOD_GRID, {"nq": 64, "np": 64, "By": 2, "Bx": 32}),    # p = (bq % gp) * Bx + tx: on a boundary
    (MOD_GRID, {"nq": 64, "np": 48, "By": 2, "Bx": 16}),
], ids=["fir3", "fir5", "fir7", "modgrid", "modgrid16"])
def test_short_serial_loops_and_flattened_grids_cost_what_the_emulation_counts(text, point):
    result = _analysed(text, "t.c").results[0]
    measured = measure(result, point)
    for k, case in enumerate(result.tree.cases, 1):
        t = traffic(case.kernel, point)
        assert all(r.exact for r in t.requests if r.space == "global")
        assert _differences(t, measured[k]) == [], (k, point)


@pytest.mark.parametrize("text, point", [(PERIODIC, {"N": 64, "B": 32}), (UPSAMPLE, {"n": 64, "Bx": 32, "By": 8})],
                         ids=["periodic", "upsample"])
def test_the_minimum_of_a_modulo_or_divided_subscript_is_what_the_block_touches(text, point):
    result = _analysed(text, "t.c").results[0]
    case = next(k for k, c in enumerate(result.tree.cases, 1) if not c.kernel.cached)
    t = traffic(result.tree.cases[case - 1].kernel, point)
    assert t.minimum_bytes == measure(result, point, cases=[case])[case].minimum_bytes <= t.global_bytes


# ------------------------------------------------------------------ PK040 on the corpus

def _emulated_uncoalesced(path) -> set:
    """(array, range) of each global access whose whole-warp requests touch more sectors than
    their elements need, beyond one for a misaligned start, in some case on the emulation."""
    found = set()
    for _, _, _, measured in _profiled(path):
        for m in measured.values():
            for (key, _), c in m.requests.items():
                if key[0] == "access" and key[-1] == "global" and c.full and W.uncoalesced(c.full_cost, c.full_ideal):
                    found.add((key[1], key[2]))
    return found


def _warned(path) -> set:
    analysis = _analysed(path.read_text(), str(path))
    out = set()
    for d in analysis.diagnostics:
        if d.code == "PK040":
            array = d.message.split("uncoalesced access: ", 1)[1].split("[", 1)[0]
            out.add((array, (d.span.line, d.span.col, d.span.end_line, d.span.end_col)))
    return out


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_every_uncoalesced_access_of_the_corpus_is_warned_and_no_other(path):
    assert _warned(path) == _emulated_uncoalesced(path)


def test_the_corpus_has_uncoalesced_accesses_to_warn_about():
    warned = {p.stem: len(_warned(p)) for p in PROGRAMS}
    assert warned["transpose"] == 1 and warned["scale_cols"] == 2 and warned["covariance"] == 1
    assert sum(warned.values()) >= 6


# ------------------------------------------------------------------ matmul against a textbook SGEMM

REFERENCE = """
/* The textbook tiled SGEMM (Kirk & Hwu): a TILE x TILE block computes a TILE x TILE tile of c,
 * staging a tile of a and one of b in shared memory per step; c += a * b as matmul.c does. */
#define TILE 16
__global__ void sgemm_reference(float *c, const float *a, const float *b, int n)
{
    PARAKERN_DYNAMIC_SHARED(smem);
    float *as = (float *)smem, *bs = as + TILE * TILE;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = PARAKERN_AT(3, 0, c, (long long)row * n + col);
    for (int t = 0; t < n / TILE; t++) {
        PARAKERN_AT_SHARED(4, t, as, ty * TILE + tx) = PARAKERN_AT(1, t, a, (long long)row * n + t * TILE + tx);
        PARAKERN_AT_SHARED(5, t, bs, ty * TILE + tx) = PARAKERN_AT(2, t, b, (long long)(t * TILE + ty) * n + col);
        __syncthreads();
        for (int kk = 0; kk < TILE; kk++)
            acc += PARAKERN_AT_SHARED(6, parakern_trace::mix(t, kk), as, ty * TILE + kk)
                 * PARAKERN_AT_SHARED(7, parakern_trace::mix(t, kk), bs, kk * TILE + tx);
        __syncthreads();
    }
    PARAKERN_AT(3, 0, c, (long long)row * n + col) = acc;
}

int main(void)
{
    const int n = N;
    parakern_cpu_set_device(1 << 30, (size_t)1 << 30, 1024, (size_t)1 << 30);
    float *a = new float[n * n], *b = new float[n * n], *c = new float[n * n];
    for (int i = 0; i < n * n; i++) { a[i] = 1; b[i] = 2; c[i] = 0; }
    parakern_trace::array(a, n * n); parakern_trace::array(b, n * n); parakern_trace::array(c, n * n);
    PARAKERN_LAUNCH(sgemm_reference, dim3(n / TILE, n / TILE), dim3(TILE, TILE), 2 * TILE * TILE * 4, c, a, b, n);
    parakern_trace::finish(stdout, 1);
    for (int i = 0; i < n * n; i++)
        if (c[i] != 2.0f * n) { fprintf(stderr, "wrong c[%d] = %g\\n", i, c[i]); return 1; }
    return 0;
}
"""
GLOBAL_SITES = {1, 2, 3}


def _reference_sectors(n: int) -> tuple[float, float]:
    """(global sectors, of which c) of the reference SGEMM at size n, counted on the emulation."""
    (record,) = run_traced(PREAMBLE + INCLUDES + REFERENCE.replace("const int n = N;", f"const int n = {n};"))
    sites = {name: t for name, t in record["sites"].items() if int(name.split(":")[0]) in GLOBAL_SITES}
    return sum(t["cost"] for t in sites.values()), sum(t["cost"] for name, t in sites.items() if name[0] == "3")


def _matmul_sectors(point: dict):
    """(global sectors, the Measured) of matmul's cache(a, b) case with decision (3b) at point."""
    result = _analysed(MATMUL_CACHED, "matmul_cached.c").results[0]
    k = next(k for k, c in enumerate(result.tree.cases, 1) if {"(4a)", "(3b)"} <= set(c.decisions))
    m = measure(result, point, cases=[k])[k]
    sectors = m.blocks * sum(c.requests * c.cost for (key, _), c in m.requests.items() if key[-1] == "global")
    return sectors, m, result.tree.cases[k - 1], k


# The reference's 16 x 16 tile of c, and tiles at least as large (a smaller tile, 8 x 32, moves
# more per multiply-add whoever writes the kernel: 1/8 + 1/32 > 2/16).
@pytest.mark.parametrize("B0, ub1, s", [(16, 16, 1), (16, 16, 2), (16, 32, 2), (32, 32, 1)])
def test_matmul_cached_moves_no_more_sectors_per_multiply_add_than_a_textbook_sgemm(B0, ub1, s):
    n = 64
    reference, _ = _reference_sectors(n)
    sectors, m, case, k = _matmul_sectors({"n": n, "B0": B0, "ub1": ub1, "s": s})
    fma = n ** 3
    assert sectors / fma <= reference / fma
    # each c element: loaded once and stored once per thread, in global memory
    c = {kind: m.requests[key, kind] for key, kind in m.requests if key[0] == "access" and key[1] == "c"}
    assert set(c) == {"read", "write"} and all(x.per_thread == 1 for x in c.values())
    source = kernel_source(case, k, 0)
    assert source.count("c_acc = c[") == 1 and source.count("= c_acc;") == 1


def test_the_reference_sgemm_moves_what_a_tiled_sgemm_must():
    n = 64
    sectors, c = _reference_sectors(n)
    tiles = (n // 16) ** 2 * (n // 16)           # blocks x steps
    assert sectors == tiles * 2 * 16 * 16 * 4 / 32 + c and c == 2 * n * n * 4 / 32


def test_profile_point_of_the_matmul_comparison_is_one_the_facts_allow():
    s = _analysed(MATMUL_CACHED, "matmul_cached.c").results[0].schedule
    assert profile_point(s, {"n": 64, "B0": 16, "ub1": 16, "s": 1}) == {"n": 64, "B0": 16, "ub1": 16, "s": 1}


ON_VALUES = """void pick(int n, int B, float x[n], float y[n], float z[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++) {
                int p = i * B + j;
                if (x[p] > 0.0f)
                    y[p] = x[p] * 2.0f;
                else
                    z[p] = x[p] + 1.0f;
            }
    }
}
"""


def test_both_branches_of_an_if_on_array_values_are_counted_and_the_emulation_agrees():
    """The else of `if (x[p] > 0)` was left out of the static table (z was never stored): a warp
    whose lanes disagree runs both. The emulation's inputs take only one branch; what it does not
    see there is no difference."""
    result = _analysed(ON_VALUES, "v.c").results[0]
    point = {"n": 64, "B": 32}
    t = traffic(result.tree.cases[0].kernel, point)
    stores = {r.array: r for r in t.requests if r.kind == "write"}
    assert set(stores) == {"y", "z"} and stores["y"].on_values and stores["z"].on_values
    assert stores["z"].requests == stores["y"].requests == 1
    assert sum(1 for r in t.requests if r.array == "x") == 3 and "line 7 reads array values" in t.note
    assert _differences(t, measure(result, point)[1]) == []


SELECT = """void select_sign(int n, int B, float v[n], float a[n], float b[n], float c[n])
{
    meta_schedule {
        meta_for (int g = 0; g < n / B; g++)
            meta_for (int t = 0; t < B; t++) {
                int i = g * B + t;
                c[i] = v[i] > 0.0f ? a[i] : b[i];
            }
    }
}
"""


def test_both_values_of_a_select_on_array_values_are_counted_and_the_emulation_agrees():
    """`v[i] > 0 ? a[i] : b[i]`: the emulation's inputs read a[i] only, and profile --emulate
    called b[i] a difference (exit 1), as it had the else of an `if` on array values."""
    result = _analysed(SELECT, "s.c").results[0]
    point = {"n": 64, "B": 32}
    t = traffic(result.tree.cases[0].kernel, point)
    loads = {r.array: r for r in t.requests if r.kind == "read"}
    assert loads["a"].on_values and loads["b"].on_values and not loads["v"].on_values
    assert "line 7 reads array values: both values of its ?:" in t.note
    assert _differences(t, measure(result, point)[1]) == []
    # through a local, as an `if` on it is
    local = SELECT.replace("c[i] = v[i] > 0.0f ? a[i] : b[i];", "float w = v[i];\n                c[i] = w > 0.0f ? a[i] : b[i];")
    t = traffic(_analysed(local, "s.c").results[0].tree.cases[0].kernel, point)
    assert all(r.on_values for r in t.requests if r.array in "ab") and "reads array values" in t.note


def test_a_request_seen_on_the_emulation_only_is_named_in_words():
    """It printed the key: ('access', 'b', (15, 21, 15, 25), 'global') (write)."""
    from types import SimpleNamespace
    result = _analysed(ON_VALUES, "v.c").results[0]
    t = traffic(result.tree.cases[0].kernel, {"n": 64, "B": 32})
    stray = {(("access", "w", (15, 21, 15, 25), "global"), "write"): None,
             (("copy", "x", 0, 1, "shared"), "read"): None}
    known = {(r.key, r.kind): SimpleNamespace(requests=-1.0) for r in t.requests}
    assert _differences(t, SimpleNamespace(requests={**known, **stray})) == [
        "the access to 'w' at line 15, column 21 (global write): counted on the emulation only",
        "the copy of 'x' (shared read): counted on the emulation only"]


ROWS = """void f(int n, int B0, int B1, float a[n][n], float b[n][n], float c[n][n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B0; i++)
            meta_for (int j = 0; j < n / B1; j++)
                meta_for (int v = 0; v < B0; v++)
                    meta_for (int u = 0; u < B1; u++) {
                        float acc = 0.0f;
                        for (int k = 0; k < n; k++)
                            acc += a[i * B0 + v][k] * b[k][j * B1 + u];
                        c[i * B0 + v][j * B1 + u] = acc;
                    }
    }
}
"""


def test_a_coarsened_row_no_thread_has_is_not_counted():
    """(6) gives each thread 4 rows, those beyond B0 under `if (4*v + c < B0)`: at B0 = 2, rows
    2 and 3 never run, and the static table counted their loads and stores (the emulation
    saw none: 'not seen on the emulation')."""
    result = _analysed(ROWS, "rows.c").results[0]
    point = {"n": 64, "B0": 2, "B1": 32}
    measured = measure(result, point)
    (k,) = [k for k, case in enumerate(result.tree.cases, 1) if "(6)" in case.decisions][:1]
    t = traffic(result.tree.cases[k - 1].kernel, point)
    assert len([r for r in t.requests if r.array == "c"]) == 2     # rows 0 and 1
    assert _differences(t, measured[k]) == []


CLAMPED_WINDOW = """void f(int n, int W, int B, float a[n], float out[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++) {
                int p = i * B + j;
                float acc = 0.0f;
                for (int k = 0; k < (p < W ? p + 1 : W); k++)
                    acc += a[p - k];
                out[p] = acc;
            }
    }
}
"""


def test_a_loop_that_stops_where_a_lane_says_is_an_estimate_not_a_difference():
    """`k < (p < W ? p + 1 : W)`: lanes of the first block leave the loop early, which the cost
    of whole warps does not follow; 4.875 static against 4.744 emulated made profile --emulate
    exit 1. Such an access is marked inexact (an estimate), as an index with no value per lane is."""
    result = _analysed(CLAMPED_WINDOW, "w.c").results[0]
    point = {"n": 1024, "W": 4, "B": 32}
    measured = measure(result, point)
    for k, case in enumerate(result.tree.cases, 1):
        t = traffic(case.kernel, point)
        (window,) = [r for r in t.requests if r.array == "a"]
        assert not window.exact and all(r.exact for r in t.requests if r.array == "out")
        assert _differences(t, measured[k]) == []


BOTH_WAYS = """void f(int N, int Bx, int By, float a[N][N], float b[N][N])
{
    meta_schedule cache(a) {
        meta_for (int by = 0; by < N / By; by++)
            meta_for (int bx = 0; bx < N / Bx; bx++)
                meta_for (int ty = 0; ty < By; ty++)
                    meta_for (int tx = 0; tx < Bx; tx++) {
                        int i = by * By + ty, j = bx * Bx + tx;
                        b[i][j] = a[j][i] + a[i][j];
                    }
    }
}
"""


def test_an_access_an_earlier_tile_may_serve_is_an_estimate():
    """a[i][j] beside a[j][i]: an element of a[i][j]'s tile that a[j][i]'s tile holds is read
    there, so a warp may split between the two; the static count of its own tile said 1
    wavefront per request against 1.375 emulated, and profile --emulate exited 1."""
    result = _analysed(BOTH_WAYS, "t.c").results[0]
    point = {"N": 64, "Bx": 32, "By": 8}
    measured = measure(result, point)
    cached = [k for k, case in enumerate(result.tree.cases, 1) if case.kernel.cached]
    assert cached
    for k in cached:
        t = traffic(result.tree.cases[k - 1].kernel, point)
        shared = [r for r in t.requests if r.space == "shared" and r.array == "a" and r.kind == "read"]
        # a[j][i]'s request is an estimate (a warp may split between the two tiles); since tiles read
        # across their rows are padded (the pitch a rule in Bx), a[i][j]'s is counted as one too
        assert shared and not all(r.exact for r in shared)
        assert _differences(t, measured[k]) == []      # and the static count is what the emulation sees
