"""Updates that iterations may make to one element at once (issue 35, point 1): histograms,
scatter-adds through an index array, an integer maximum into a cell, float sums. The dependence
test lets updates of one kind meet, every kernel makes them with CUDA's atomics (decision (7)),
and every other write that may meet another access is refused with an error (PK020), the
values read from arrays in its witness. The programs are run on the CPU emulation against the
serial C, compiled by nvcc, counted by the traffic analysis and the time model."""
from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import pytest

from parakern import syntax
from parakern.analysis.dependence import examine
from parakern.analysis.updates import update_of
from parakern.codegen.kernel_source import kernel_source
from parakern.codegen.trace import Sites
from parakern.frontend import analyze_source
from parakern.ir.ptx import kernel_ptx
from parakern.pipeline import Options, analyze
from parakern.source.diagnostics import Severity

ROOT = Path(__file__).resolve().parents[2]
NVCC = shutil.which("nvcc")
# ------------------------------------------------------------------ the programs, per class
HISTOGRAMS = {
    "int_hist": """
#include "metafork.h"
#define NBINS 16
void hist(int n, int B, const int in[n], int h[NBINS])
{
    meta_schedule {
        meta_for (int b = 0; b < (n + B - 1) / B; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n)
                    h[in[i] % NBINS] += 1;
            }
    }
}
""",
    "image_hist": """
#include "metafork.h"
void image_hist(int h, int w, int By, int Bx, unsigned img[h][w], unsigned hist[16])
{
    meta_schedule {
        meta_for (int by = 0; by < (h + By - 1) / By; by++)
            meta_for (int bx = 0; bx < (w + Bx - 1) / Bx; bx++)
                meta_for (int ty = 0; ty < By; ty++)
                    meta_for (int tx = 0; tx < Bx; tx++) {
                        int y = by * By + ty, x = bx * Bx + tx;
                        if (y < h && x < w) {
                            unsigned k = img[y][x] / 16;
                            hist[k % 16]++;
                        }
                    }
    }
}
""",
    "chunk_hist": """
#include "metafork.h"
void chunk_hist(int n, int s, int B, const int in[n * s], int h[64])
{
    meta_schedule {
        meta_for (int b = 0; b < (n + B - 1) / B; b++)
            meta_for (int t = 0; t < B; t++) {
                int p = b * B + t;
                if (p < n)
                    for (int k = 0; k < s; k++)
                        h[in[p * s + k] % 64] = h[in[p * s + k] % 64] + 1;
            }
    }
}
""",
    "weighted_hist": """
#include "metafork.h"
void weighted(int n, int B, const int bin[n], const float weight[n], float w[32])
{
    meta_schedule {
        meta_for (int b = 0; b < (n + B - 1) / B; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n)
                    w[bin[i] % 32] += weight[i];
            }
    }
}
""",
}
SCATTERS = {
    "coo_spmv": """
#include "metafork.h"
void coo_spmv(int nnz, int m, int B, const int row[nnz], const int col[nnz], const double val[nnz],
              const double x[m], double y[m])
{
    meta_schedule {
        meta_for (int b = 0; b < (nnz + B - 1) / B; b++)
            meta_for (int t = 0; t < B; t++) {
                int k = b * B + t;
                if (k < nnz)
                    y[row[k]] += val[k] * x[col[k]];
            }
    }
}
""",
    "scatter_sub": """
#include "metafork.h"
void scatter_sub(int n, int m, int B, const int idx[n], const int v[n], int out[m], long acc[m])
{
    meta_schedule {
        meta_for (int b = 0; b < (n + B - 1) / B; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n) {
                    out[idx[i]] -= v[i];
                    acc[idx[i]] = acc[idx[i]] + 2 * v[i];
                }
            }
    }
}
""",
    "embedding_backward": """
#include "metafork.h"
void embed_backward(int n, int d, int V, int B0, int B1, const int token[n], const float g[n][d], float grad[V][d])
{
    meta_schedule {
        meta_for (int bi = 0; bi < (n + B0 - 1) / B0; bi++)
            meta_for (int bj = 0; bj < (d + B1 - 1) / B1; bj++)
                meta_for (int ti = 0; ti < B0; ti++)
                    meta_for (int tj = 0; tj < B1; tj++) {
                        int i = bi * B0 + ti, j = bj * B1 + tj;
                        if (i < n && j < d)
                            grad[token[i]][j] += g[i][j];
                    }
    }
}
""",
}
MAXIMA = {
    "max_cell": """
#include "metafork.h"
void maxcell(int n, int B, const int v[n], int best[1], unsigned ub[1], int lo[1])
{
    meta_schedule {
        meta_for (int b = 0; b < (n + B - 1) / B; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n) {
                    if (v[i] > best[0])
                        best[0] = v[i];
                    if (ub[0] < (unsigned)v[i]) ub[0] = (unsigned)v[i];
                    lo[0] = lo[0] < v[i] ? lo[0] : v[i];
                }
            }
    }
}
""",
    "group_minmax": """
#include "metafork.h"
static int max(int a, int b) { return a > b ? a : b; }
static int min(int a, int b) { return a < b ? a : b; }
void group_minmax(int n, int B, const int g[n], const int v[n], int hi[8], int lo[8])
{
    meta_schedule {
        meta_for (int b = 0; b < (n + B - 1) / B; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n) {
                    hi[g[i] % 8] = max(hi[g[i] % 8], v[i]);
                    lo[g[i] % 8] = min(v[i], lo[g[i] % 8]);
                }
            }
    }
}
""",
    "column_max": """
#include "metafork.h"
void column_max(int n, int m, int B0, int B1, const long long a[n][m], long long top[m])
{
    meta_schedule {
        meta_for (int bi = 0; bi < (n + B0 - 1) / B0; bi++)
            meta_for (int bj = 0; bj < (m + B1 - 1) / B1; bj++)
                meta_for (int ti = 0; ti < B0; ti++)
                    meta_for (int tj = 0; tj < B1; tj++) {
                        int i = bi * B0 + ti, j = bj * B1 + tj;
                        if (i < n && j < m && top[j] < a[i][j])
                            top[j] = a[i][j];
                    }
    }
}
""",
}
SUMS = {
    "float_sums": """
#include "metafork.h"
void sums(int n, int m, int B, const float x[n], const double a[n], const double b[n], float total[1], double dot[1],
          float rows[n])
{
    meta_schedule {
        meta_for (int blk = 0; blk < (n + B - 1) / B; blk++)
            meta_for (int t = 0; t < B; t++) {
                int i = blk * B + t;
                if (i < n) {
                    total[0] += x[i];
                    dot[0] += a[i] * b[i];
                    rows[i / m] += x[i];
                }
            }
    }
}
""",
    "quarter_sums": """
#include "metafork.h"
void quarter_sums(int n, int s, int B, const float x[n * s], float q[4])
{
    meta_schedule {
        meta_for (int b = 0; b < (n + B - 1) / B; b++)
            meta_for (int t = 0; t < B; t++) {
                int p = b * B + t;
                if (p < n)
                    for (int k = 0; k < s; k++)
                        q[t % 4] += x[p * s + k];
            }
    }
}
""",
    "cached_hist": """
#include "metafork.h"
void cached_hist(int n, int B, const int in[n], double h[32])
{
    meta_schedule cache(h) {
        meta_for (int b = 0; b < (n + B - 1) / B; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n)
                    h[in[i] % 32] -= 0.5 * in[i];
            }
    }
}
""",
}
PROGRAMS = {**HISTOGRAMS, **SCATTERS, **MAXIMA, **SUMS}
# the atomic functions each program's kernels call, as emitted
EXPECTED = {
    "int_hist": ["atomicAdd(&h[in[i] % 16], 1);"],
    "image_hist": ["atomicAdd(&hist[k % 16], (unsigned)(1));"],
    "chunk_hist": ["atomicAdd(&h[in[p * s + k] % 64], 1);"],
    "weighted_hist": ["atomicAdd(&w[bin[i] % 32], weight[i]);"],
    "coo_spmv": ["atomicAdd(&y[row[k]], val[k] * x[col[k]]);"],
    "scatter_sub": ["atomicSub(&out[idx[i]], v[i]);",
                    "atomicAdd((unsigned long long *)&acc[idx[i]], (unsigned long long)(2 * v[i]));"],
    "embedding_backward": ["atomicAdd(&grad[(long long)token[i] * d + j], g[(long long)i * d + j]);"],
    "max_cell": ["atomicMax(&best[0], v[i]);", "atomicMax(&ub[0], (unsigned)v[i]);", "atomicMin(&lo[0], v[i]);"],
    "group_minmax": ["atomicMax(&hi[g[i] % 8], v[i]);", "atomicMin(&lo[g[i] % 8], v[i]);"],
    "column_max": ["atomicMax(&top[j], a[(long long)i * m + j]);"],
    "float_sums": ["atomicAdd(&total[0], x[i]);", "atomicAdd(&dot[0], a[i] * b[i]);", "atomicAdd(&rows[i / m], x[i]);"],
    "quarter_sums": ["atomicAdd(&q[t % 4], q_acc);"],
    "cached_hist": ["atomicAdd(&h[in[i] % 32], -(0.5 * in[i]));"],
}


def _analysis(name: str, target: str = "sm_80"):
    return analyze(PROGRAMS[name], f"{name}.c", Options(target=target))


def _schedule(text: str):
    result = analyze_source(textwrap.dedent(text), "t.c")
    assert not [d for d in result.diagnostics if d.severity == Severity.ERROR], result.diagnostics
    return result.schedules[0]


# ------------------------------------------------------------------ what an update is
def _stmt(body: str, params: str = "int n, int k, int v, int m[8], float f[8], int x[8]"):
    s = _schedule(f"""
        #include "metafork.h"
        static int max(int a, int b) {{ return a > b ? a : b; }}
        void g({params})
        {{
            meta_schedule {{
                meta_for (int i = 0; i < n; i++)
                    meta_for (int j = 0; j < 2; j++) {{
                        {body}
                    }}
            }}
        }}
        """)
    return s.body.stmts[0]


@pytest.mark.parametrize("body, op, value", [
    ("m[k] += v;", "add", "v"), ("m[k] -= v;", "sub", "v"), ("m[k]++;", "add", "1"),
    ("m[k] = m[k] + v;", "add", "v"), ("m[k] = v + m[k];", "add", "v"), ("m[k] = m[k] - v;", "sub", "v"),
    ("m[k] = max(m[k], v);", "max", "v"), ("m[k] = max(v, m[k]);", "max", "v"),
    ("if (v > m[k]) m[k] = v;", "max", "v"), ("if (m[k] < v) m[k] = v;", "max", "v"),
    ("if (v <= m[k]) m[k] = v;", "min", "v"), ("if (m[k] > v) { m[k] = v; }", "min", "v"),
    ("m[k] = m[k] < v ? v : m[k];", "max", "v"), ("m[k] = m[k] > v ? v : m[k];", "min", "v"),
    ("m[k] = v < m[k] ? v : m[k];", "min", "v"),
])
def test_updates_are_recognised(body, op, value):
    update = update_of(_stmt(body))
    assert update is not None and update.op == op and update.target.array == "m"
    assert syntax.same(update.value, _stmt(f"m[0] = {value};").value)


@pytest.mark.parametrize("body", [
    "m[k] = v;", "m[k] *= v;", "m[k] = m[k] * v;", "m[k] = v - m[k];", "m[k] = m[k + 1] + v;",
    "if (v > m[k]) m[k] = v; else m[k] = 0;", "if (v > m[k]) m[k] = v + 1;", "if (v > m[k]) m[0] = v;",
    "m[k] = max(m[k], m[k + 1]);", "m[k] = m[k] < v ? m[k] : m[k];", "if (v == m[k]) m[k] = v;",
])
def test_other_statements_are_not_updates(body):
    assert update_of(_stmt(body)) is None


# ------------------------------------------------------------------ the dependence test
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_updates_that_may_meet_are_made_atomic_in_every_case(name):
    (result,) = _analysis(name).results
    assert result.tree is not None, [d.format() for d in result.diagnostics]
    assert not [d for d in result.diagnostics if d.code in ("PK020", "PK021")]
    functions = [a.function for a in result.schedule.atomics]
    assert sorted(functions) == sorted(re.match(r"(\w+)\(", e).group(1) for e in EXPECTED[name])
    for case in result.tree.cases:
        assert "(7)" in case.decisions
        kernel = kernel_source(case, 1)
        for call in EXPECTED[name]:
            assert call in kernel, (name, call, kernel)


def test_updates_that_cannot_meet_stay_plain(tmp_path):
    text = PROGRAMS["int_hist"].replace("h[in[i] % NBINS] += 1", "h[i % NBINS] += in[i]").replace(
        "(n + B - 1) / B", "1").replace("meta_for (int t = 0; t < B; t++)", "meta_for (int t = 0; t < NBINS; t++)")
    (result,) = analyze(text, "plain.c").results
    assert result.schedule.atomics == () and result.tree is not None
    assert all("(7)" not in c.decisions and "atomic" not in kernel_source(c, 1) for c in result.tree.cases)


REFUSED = [
    # a scatter: plain stores through an index read from an array
    ("int p = i * B + j; a[idx[p]] = x[p];", "a scatter", "idx[p] = "),
    ("int p = i * B + j; a[idx[p] % 7] = x[p] + 1;", "a scatter", "idx[p] % 7 = "),
    # a gather from the array the iterations write
    ("int p = i * B + j; a[p] = a[idx[p]] + 1;", "may name an element another iteration writes", "idx[p] = "),
    # no atomic for *=, nor for a float maximum
    ("int p = i * B + j; a[idx[p]] *= 2;", "no atomic for `*=`", "idx[p] = "),
    ("int p = i * B + j; if (w[p] > f[0]) f[0] = w[p];", "integers only", ""),
    # an update and a plain access of one element
    ("int p = i * B + j; a[idx[p]] += 1; x[p] = a[p];", "not an update of that kind", ""),
    # updates of two kinds on one element
    ("int p = i * B + j; a[idx[p]] += 1; a[idx[p] + 1] = max(a[idx[p] + 1], 3);", "different kinds", ""),
    # an int element that takes a float value: C rounds the sum, no atomic does
    ("int p = i * B + j; a[idx[p]] += 0.5f;", "convert the value to int first", ""),
]


@pytest.mark.parametrize("body, why, values", REFUSED,
                         ids=["scatter", "scatter-mod", "gather", "times", "float-max", "plain-read", "two-kinds", "rounding"])
def test_writes_that_may_meet_without_an_atomic_are_errors(body, why, values):
    s = _schedule(f"""
        #include "metafork.h"
        static int max(int a, int b) {{ return a > b ? a : b; }}
        void f(int N, int B, int a[N], int x[N], int idx[N], float f[N], float w[N])
        {{
            int dim = N / B;
            meta_schedule {{
                meta_for (int i = 0; i < dim; i++)
                    meta_for (int j = 0; j < B; j++) {{
                        {body}
                    }}
            }}
        }}
        """)
    verdict = examine(s)
    errors = [d for d in verdict.diagnostics if d.severity == Severity.ERROR]
    assert [d.code for d in errors] == ["PK020"] and verdict.atomics == ()
    assert why in errors[0].message and values in errors[0].message
    assert "(i = " in errors[0].message   # the two iterations


def test_double_atomic_add_needs_sm60():
    (result,) = _analysis("coo_spmv", "sm_52").results
    (error,) = [d for d in result.diagnostics if d.code == "PK020"]
    assert result.tree is None and error.severity == Severity.ERROR
    assert "atomicAdd on double needs sm_60 or later, and the target is sm_52" in error.message
    assert "--target sm_60" in error.message and "row[k] = " in error.message
    spmv = analyze_source(PROGRAMS["coo_spmv"], "s.c").schedules[0]
    assert [a.function for a in examine(spmv, target="sm_60").atomics] == ["atomicAdd"]
    # float and int atomics exist below sm_60
    assert examine(analyze_source(PROGRAMS["weighted_hist"], "w.c").schedules[0], target="sm_52").atomics


# ------------------------------------------------------------------ interplay with the strategies
def test_an_atomically_updated_array_is_not_staged():
    (result,) = _analysis("cached_hist").results
    (warning,) = [d for d in result.diagnostics if d.code == "PK031"]
    assert "other blocks may update the same elements" in warning.message and "atomicAdd" in warning.message
    assert all(not c.kernel.cached for c in result.tree.cases)


def test_a_loops_additions_are_summed_in_a_register_and_added_once():
    (result,) = _analysis("quarter_sums").results
    for case in result.tree.cases:
        kernel = kernel_source(case, 1)
        assert "(5)" in case.decisions and "float q_acc = 0.0f;" in kernel and "q_acc += x[p * s + k];" in kernel
        assert kernel.count("atomicAdd(") == 1 and kernel.index("atomicAdd(") > kernel.index("q_acc +=")


def test_maxima_and_indirect_updates_are_not_accumulated():
    text = PROGRAMS["quarter_sums"].replace("q[t % 4] += x[p * s + k];", "q[t % 4] = max(q[t % 4], (int)x[p * s + k]);")
    text = text.replace("float q[4]", "int q[4]").replace('#include "metafork.h"', '#include "metafork.h"\n'
                                                          'static int max(int a, int b) { return a > b ? a : b; }')
    (result,) = analyze(text, "m.c").results
    assert all("(5)" not in c.decisions for c in result.tree.cases)
    assert "maxima or minima of q are made with atomics" in dict(result.not_applied)["(5)"]
    (result,) = _analysis("chunk_hist").results
    assert all("(5)" not in c.decisions and "atomicAdd" in kernel_source(c, 1) for c in result.tree.cases)


def test_thread_coarsening_leaves_atomic_updates_as_written():
    (result,) = _analysis("embedding_backward").results
    assert "updates grad atomically" in dict(result.not_applied)["(6)"]


# ------------------------------------------------------------------ the IR, the trace, the reports
@pytest.mark.parametrize("name, instructions", [
    ("int_hist", ["atom.global.add.u32"]),
    ("weighted_hist", ["atom.global.add.f32"]),
    ("coo_spmv", ["atom.global.add.f64"]),
    ("max_cell", ["atom.global.max.s32", "atom.global.max.u32", "atom.global.min.s32"]),
    ("column_max", ["atom.global.max.s64"]),
])
def test_the_ir_the_registers_are_counted_on_makes_the_atomics(name, instructions):
    (result,) = _analysis(name).results
    ptx = kernel_ptx(result.tree.cases[0].kernel)
    for instruction in instructions:
        assert re.search(instruction.replace(".", r"\.") + r"\b", ptx.replace("red.", "atom.")), (instruction, ptx)


def test_the_traced_kernel_takes_the_address_of_an_atomic_lvalue():
    (result,) = _analysis("max_cell").results
    sites = Sites()
    kernel = kernel_source(result.tree.cases[0], 1, trace=sites)
    assert re.search(r"atomicMax\(&PARAKERN_AT_ATOMIC\(\d+, 0, best, 0\), PARAKERN_AT\(\d+, 0, v, i\)\);", kernel)
    assert "best[0]" not in kernel


def test_json_text_and_hover_say_which_updates_are_atomic():
    from parakern.lsp.summarize import summarize
    from parakern.lsp.texts import atomics_markdown, case_message
    from parakern.reports.document import document, text
    analysis = _analysis("max_cell")
    (schedule,) = document(analysis)["schedules"]
    assert [(a["line"], a["function"], a["statement"]) for a in schedule["atomics"]] == [
        (10, "atomicMax", "if (v[i] > best[0]) best[0] = v[i];"),
        (12, "atomicMax", "if (ub[0] < (unsigned)v[i]) ub[0] = (unsigned)v[i];"),
        (13, "atomicMin", "lo[0] = lo[0] < v[i] ? lo[0] : v[i];")]
    assert all(c["decisions"][-1] == "(7)" for c in schedule["cases"])
    assert "  atomic lo[0] = lo[0] < v[i] ? lo[0] : v[i]; (line 13): atomicMin" in text(analysis)
    summary = summarize(analysis.results[0], "k", 0, (), tune=False)
    markdown = atomics_markdown(summary)
    assert markdown.startswith("**Atomic updates** (7)")
    assert "- line 13: `lo[0] = lo[0] < v[i] ? lo[0] : v[i];` → `atomicMin`" in markdown
    assert "atomic updates (7)" in case_message(summary, summary.cases[0])


# ------------------------------------------------------------------ the time model
def test_the_time_model_counts_atomics_that_meet():
    import sympy

    from parakern.machine.devices import get_profile
    from parakern.symbolic.symbols import sym
    from parakern.tuning.time_model import modelled, predict, quantities
    device = modelled(get_profile("h100"))
    times = {}
    for bins in (16, 1024, 1 << 20):
        text = PROGRAMS["int_hist"].replace("#define NBINS 16", f"#define NBINS {bins}")
        (result,) = analyze(text, "h.c").results
        q = quantities(result.tree.cases[0])
        assert sympy.simplify(q.atomics - sym("B")) == 0 and q.atomic_spread == bins
        values = {sym("n"): sympy.Integer(1 << 24), sym("B"): sympy.Integer(256)}
        prediction = predict(q, values, device)
        times[bins] = prediction
    # 2^24 updates of 16 bins: one a clock per bin, 2^20 clocks
    assert times[16].limiting == "atomic"
    assert times[16].step("t_atomic") == pytest.approx((1 << 20) / device.clock, rel=0.05)
    assert times[16].time >= times[16].step("t_atomic")
    # spread over 2^20 bins, the updates wait for none; the bins' 4 MB moved from DRAM lengthen a
    # thread's wait for its loads a little (the time model's miss latency)
    assert times[1 << 20].limiting != "atomic" and times[1 << 20].time == pytest.approx(times[1024].time, rel=0.01)
    assert times[1024].time < times[16].time
    assert times[1 << 20].step("t_atomic") < times[1024].step("t_atomic") < times[16].step("t_atomic")


# ------------------------------------------------------------------ by execution and by nvcc
def _write(tmp_path, name: str) -> Path:
    (tmp_path / "metafork.h").write_text((ROOT / "samples" / "metafork.h").read_text())
    path = tmp_path / f"{name}.c"
    path.write_text(PROGRAMS[name])
    return path


def test_the_cli_refuses_a_double_atomic_below_sm60(tmp_path, monkeypatch, capsys):
    """`--target sm_52` (a ptxas that builds for it, CUDA 12's): the error, at the update, exit 0."""
    from parakern.commands import cli
    from parakern.machine import targets
    monkeypatch.setattr(targets, "_ptxas_targets", lambda ptxas: frozenset({"sm_52", "sm_80"}))
    path = _write(tmp_path, "coo_spmv")
    assert cli.main(["optimize", str(path), "--target", "sm_52"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"coo_spmv\.c:7:9: error: iterations of this meta_for may both access an element of y: "
                     r"y\[row\[k\]\] read and written at line 11 by two different iterations .*atomicAdd on double "
                     r"needs sm_60 or later, and the target is sm_52.*\[PK020\]", out), out

