"""The whole analysis of a file: every failure is a diagnostic on its schedule."""
from parakern.pipeline import Options, analyze

GATHER = """void gather(int n, int B, float *a, int idx[n], float out[n])
{
    meta_schedule cache(a, out) {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                out[i * B + j] = a[idx[i * B + j]];
    }
}
"""

SHIFT = """void shift(int n, int B, float a[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                a[i * B + j + 1] = a[i * B + j];
    }
}
"""


def test_unstageable_array_is_read_from_global_memory_with_a_warning():
    analysis = analyze(GATHER, "g.c")
    (d,) = analysis.diagnostics
    assert d.code == "PK031" and d.severity.value == "warning"
    assert (d.span.line, d.span.col, d.span.end_col) == (3, 25, 26)
    assert "declare it with its size" in d.message
    (result,) = analysis.results
    assert result.tree is not None
    assert {c.kernel.cached for c in result.tree.cases} == {("out",), ()}


FLAT_BLUR = """void blur(int n, int Bx, int By, const float in[n * n], float *out)
{
    meta_schedule cache(in) {
        meta_for (int bi = 0; bi < n / By; bi++)
            meta_for (int bj = 0; bj < n / Bx; bj++)
                meta_for (int ti = 0; ti < By; ti++)
                    meta_for (int tj = 0; tj < Bx; tj++) {
                        int i = bi * By + ti, j = bj * Bx + tj;
                        if (i > 0 && j > 0 && i < n - 1 && j < n - 1)
                            out[i * n + j] = in[(i - 1) * n + j] + in[(i + 1) * n + j] + in[i * n + j - 1]
                                             + in[i * n + j + 1];
                    }
    }
}
"""


def test_a_flattened_stencil_is_advised_to_declare_its_rows_and_then_stages():
    (d,) = analyze(FLAT_BLUR, "b.c").diagnostics
    assert d.code == "PK031" and d.message.endswith(
        "declare 'in' with its rows, float in[n][n], and index it in[row][column]: its tile is then one box")
    rows = (FLAT_BLUR.replace("in[n * n]", "in[n][n]").replace("in[(i - 1) * n + j]", "in[i - 1][j]")
            .replace("in[(i + 1) * n + j]", "in[i + 1][j]").replace("in[i * n + j - 1]", "in[i][j - 1]")
            .replace("in[i * n + j + 1]", "in[i][j + 1]"))
    analysis = analyze(rows, "b.c")
    assert analysis.diagnostics == ()
    assert ("in",) in {c.kernel.cached for c in analysis.results[0].tree.cases}


def test_dependence_error_stops_the_schedule_but_not_the_file():
    analysis = analyze(SHIFT + GATHER.replace("gather", "other"), "s.c")
    codes = [d.code for d in analysis.diagnostics]
    assert "PK020" in codes
    trees = {r.schedule.id: r.tree is not None for r in analysis.results}
    assert trees == {"shift:0": False, "other:0": True}


def test_strategies_can_be_restricted():
    source = open("samples/jacobi1d.c").read()
    (result,) = analyze(source, "samples/jacobi1d.c", Options(strategies=("(4b)",))).results
    assert all("(3b)" not in c.decisions and "(1')" not in c.decisions for c in result.tree.cases)
    assert {str(c.counter("shared_memory")) for c in result.tree.cases} == {"8*B*s + 8", "0"}


ROW_SUMS = """
void rowsum(int n, int m, int B, float A[n][m], float y[n])
{
    int g = n / B;
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++)
                for (int k = 0; k < m; k++)
                    y[b * B + t] += A[b * B + t][k];
    }
}
"""


def test_strategies_that_cannot_apply_say_why():
    """Where a strategy never appears in the cases the analysis says why, so the user knows what
    to change: here the k loop is a reduction (no granularity reduction) and nothing is cached."""
    from parakern.reports.document import document, text
    analysis = analyze(ROW_SUMS, "rowsum.c")
    (result,) = analysis.results
    why = dict(result.not_applied)
    assert "(3b)" in why and "iterations of loop k share data" in why["(3b)"]
    assert "(4b)" in why and "no cache(...)" in why["(4b)"]
    assert "(5)" not in why            # y[b * B + t] is accumulated in a register over k
    doc = document(analysis)["schedules"][0]
    assert {"code": "(3b)", "why": why["(3b)"]} in doc["not_applied"]
    assert f"  not applied (3b): {why['(3b)']}" in text(analysis)
