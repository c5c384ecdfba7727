"""The whole analysis of a file: every failure is a diagnostic on its schedule."""
from parakern.pipeline import Options, analyze
from unit.test_pipeline import FLAT_BLUR, GATHER, ROW_SUMS


def test_unstageable_array_is_read_from_global_memory_with_a_warning():
    analysis = analyze(GATHER, "g.c")
    (d,) = analysis.diagnostics
    assert d.code == "PK031" and d.severity.value == "warning"
    assert (d.span.line, d.span.col, d.span.end_col) == (3, 25, 26)
    assert "declare it with its size" in d.message
    (result,) = analysis.results
    assert result.tree is not None
    assert {c.kernel.cached for c in result.tree.cases} == {("out",), ()}


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


def test_strategies_can_be_restricted():
    source = open("samples/jacobi1d.c").read()
    (result,) = analyze(source, "samples/jacobi1d.c", Options(strategies=("(4b)",))).results
    assert all("(3b)" not in c.decisions and "(1')" not in c.decisions for c in result.tree.cases)
    assert {str(c.counter("shared_memory")) for c in result.tree.cases} == {"8*B*s + 8", "0"}


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
