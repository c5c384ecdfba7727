"""Independence of meta_for iterations: every sample is proved independent, real
collisions are errors at the meta_for that carries them with both accesses as related
information, undecided ones are warnings; serial loops for granularity reduction."""
import time

import pytest

from conftest import SAMPLES, sample_files, text_at
from parakern.analysis.dependence import check, iterations_independent
from parakern.frontend import analyze_file
from parakern.source.diagnostics import CODES, Severity, Span


def schedule_of(name):
    return analyze_file(SAMPLES / f"{name}.c").schedules[0]


def snippet(tmp_path, body, pre="int dim = N / B;"):
    """A two-level schedule (grid i < dim at line 6, block j < B at line 7), body at line 8."""
    path = tmp_path / "snippet.c"
    path.write_text(f"""#include "metafork.h"
void f(int N, int B, int a[N])
{{
    {pre}
    meta_schedule {{
        meta_for (int i = 0; i < dim; i++)
            meta_for (int j = 0; j < B; j++) {{
{body}
            }}
    }}
}}
""")
    result = analyze_file(path)
    assert [d.format() for d in result.diagnostics if d.severity == Severity.ERROR] == []
    return path, result.schedules[0]


GRID = (6, 9, 17)    # line, columns of the `meta_for` keyword of i
BLOCK = (7, 13, 21)  # ... of j


def keyword(span):
    return (span.line, span.col, span.end_col)


def test_codes_are_registered():
    assert "PK020" in CODES and "PK021" in CODES


# ------------------------------------------------------------------ samples
@pytest.mark.parametrize("path", sample_files(), ids=lambda p: p.stem)
def test_samples_are_independent_within_a_second(path):
    for schedule in analyze_file(path).schedules:
        start = time.perf_counter()
        diagnostics = check(schedule)
        elapsed = time.perf_counter() - start
        print(f"{path.stem}: {elapsed * 1000:.0f} ms")
        assert [d.format() for d in diagnostics] == []
        assert elapsed < 1.0


# ------------------------------------------------------------------ collisions
def test_shift_is_an_error_at_the_grid_level_with_both_accesses(tmp_path):
    path, s = snippet(tmp_path, "                a[i * B + j + 1] = a[i * B + j];")
    (d,) = check(s)
    assert d.code == "PK020" and d.severity == Severity.ERROR
    assert keyword(d.span) == GRID and text_at(path, d.span) == "meta_for"
    assert "a[i * B + j + 1] written at line 8 and a[i * B + j] read at line 8" in d.message
    assert "make this loop serial" in d.message
    write, read = d.related
    assert write.span == Span(str(path), 8, 17, 8, 33) and text_at(path, write.span) == "a[i * B + j + 1]"
    assert read.span == Span(str(path), 8, 36, 8, 48) and text_at(path, read.span) == "a[i * B + j]"


def test_element_shared_by_every_grid_iteration(tmp_path):
    path, s = snippet(tmp_path, "                a[j] = i;")
    (d,) = check(s)
    assert d.code == "PK020" and keyword(d.span) == GRID
    assert "a[j] written at line 8 by two different iterations" in d.message
    assert [r.span for r in d.related] == [Span(str(path), 8, 17, 8, 21)] * 2


def test_collision_inside_one_block_is_carried_by_the_block_level(tmp_path):
    path, s = snippet(tmp_path, "                a[i * B] = j;")
    (d,) = check(s)
    assert d.code == "PK020" and keyword(d.span) == BLOCK
    assert text_at(path, d.related[0].span) == "a[i * B]"


def test_collision_hidden_in_a_strided_serial_loop(tmp_path):
    _, s = snippet(tmp_path, "                for (int k = 0; k < 4; k += 2) a[i * B + j + k] = k;")
    (d,) = check(s)
    assert d.code == "PK020" and keyword(d.span) == GRID


def test_guards_are_used(tmp_path):
    # only thread 0 of each block writes a[i]: no collision
    _, s = snippet(tmp_path, "                if (j == 0) a[i] = 1;")
    assert check(s) == ()
    # a bounds check does not make a shift safe
    _, s = snippet(tmp_path, "                if (i * B + j + 1 < N) a[i * B + j + 1] = a[i * B + j] + 1;")
    assert [d.code for d in check(s)] == ["PK020"]


def test_data_dependent_guard_is_dropped_and_the_collision_reported(tmp_path):
    _, s = snippet(tmp_path, "                if (a[j] > 0) a[i * B + j] = 0;")
    (d,) = check(s)
    assert d.code == "PK020"
    assert "a[i * B + j] written at line 8 and a[j] read at line 8" in d.message


def test_independent_snippets(tmp_path):
    for body in ("                a[i * B + j] = a[i * B + j] + 1;",
                 "                a[(i * B + j) % N] = 1;",              # i*B + j < dim*B <= N
                 "                for (int k = 0; k < 4; k++) a[4 * (i * B + j) + k] = k;"):
        _, s = snippet(tmp_path, body)
        assert check(s) == (), body


# ------------------------------------------------------------------ undecided
def test_opaque_subscript_is_a_warning(tmp_path):
    """`^` by a variable has no form in the analysis: a permutation here, but nothing proves it
    (by a constant it has its value: test_shift_mask_subscripts.py)."""
    path, s = snippet(tmp_path, "                a[(i * B + j) ^ N] = 1;")
    (d,) = check(s)
    assert d.code == "PK021" and d.severity == Severity.WARNING and keyword(d.span) == GRID
    assert d.message.startswith("independence of this meta_for could not be proved")
    assert [text_at(path, r.span) for r in d.related] == ["a[(i * B + j) ^ N]"] * 2


def test_a_subscript_read_from_an_array_is_an_error_with_the_values_read(tmp_path):
    """The values of a[i] may be anything: a collision the data decides is a race, with the
    values of the witness (it was a warning, and verify said "verified")."""
    path, s = snippet(tmp_path, "                a[a[i]] = 1;")
    (d,) = check(s)
    assert d.code == "PK020" and d.severity == Severity.ERROR and keyword(d.span) == GRID
    assert [text_at(path, r.span) for r in d.related] == ["a[a[i]]", "a[i]"]
    assert "a scatter" in d.message and "a[i] = " in d.message


def test_solver_giving_up_is_a_warning_not_a_proof(tmp_path):
    cube = "(i * B + j) * (i * B + j) * (i * B + j)"
    path, s = snippet(tmp_path, f"                a[{cube}] = 1;")
    diagnostics = check(s, work=50_000)
    assert diagnostics and {d.code for d in diagnostics} == {"PK021"}
    assert all(text_at(path, r.span) == f"a[{cube}]" for d in diagnostics for r in d.related)
    assert "gave up" in diagnostics[0].message


def test_tiny_resource_limit_on_jacobi_gives_warnings():
    diagnostics = check(schedule_of("jacobi1d"), work=1)
    assert diagnostics and all(d.code == "PK021" for d in diagnostics)


# ------------------------------------------------------------------ serial loops
@pytest.mark.parametrize("name, var, expected", [
    ("jacobi1d", "k", "proved"),
    ("transpose", "k", "proved"),
    ("polydiv", "k", "proved"),
    ("matmul", "w", "proved"),
    ("matmul", "z", "refuted"),     # c[p][q + x] += ... over z: a reduction on c
    ("matmul", "k", "refuted"),     # the same reduction across the tiles of k
    ("matvec", "j", "refuted"),     # acc += ...: a loop-carried local scalar
])
def test_serial_loop_iterations(name, var, expected):
    start = time.perf_counter()
    assert iterations_independent(schedule_of(name), var) == expected
    assert time.perf_counter() - start < 1.0


def test_unknown_loop_name_is_a_caller_error():
    with pytest.raises(ValueError):
        iterations_independent(schedule_of("jacobi1d"), "i")   # a meta_for, not a serial loop


# ------------------------------------------------------------------ ?: is the if it is
@pytest.mark.parametrize("conditional, statement", [
    # the else never runs (p < dim*B always holds): no thread reads its neighbour's element
    ("int p = i * B + j; a[p] = (p < dim * B) ? a[p] + 1 : a[p + 1];",
     "int p = i * B + j; if (p < dim * B) a[p] = a[p] + 1; else a[p] = a[p + 1];"),
    # j < 0 never holds: a[2p + 2], another thread's even element, is never read
    ("int p = i * B + j; a[2 * p] = (j < 0) ? a[2 * p + 2] : a[2 * p + 1];",
     "int p = i * B + j; if (j < 0) a[2 * p] = a[2 * p + 2]; else a[2 * p] = a[2 * p + 1];"),
    # a condition on parameters only, and the branch it takes reads the thread's own element
    ("int p = i * B + j; if (N > 0) a[p] = (N > 0) ? a[p] : a[p + 1];",
     "int p = i * B + j; if (N > 0) { if (N > 0) a[p] = a[p]; else a[p] = a[p + 1]; }"),
])
def test_a_conditional_expression_guards_its_branches_as_an_if_does(tmp_path, conditional, statement):
    for body in (conditional, statement):
        _, s = snippet(tmp_path, "                " + body)
        assert check(s) == (), body


@pytest.mark.parametrize("body, read", [
    ("int p = i * B + j; a[p] = (j > 0) ? a[p - 1] : 0;", "a[p - 1]"),
    ("int p = i * B + j; a[2 * p] = (j == 0) ? 0 : a[2 * p - 2];", "a[2 * p - 2]"),
    ("int p = i * B + j; a[2 * p] = (a[2 * p + 1] > 0) ? a[2 * p + 2] : 0;", "a[2 * p + 2]"),  # on data
])
def test_a_race_under_a_conditional_expression_is_refused_with_a_witness_that_takes_the_branch(tmp_path, body, read):
    """The witness's reading iteration takes the branch: j = 1 reads a[p - 1], which j = 0
    writes (the condition ignored, the witness was j = 0 reading a[-1])."""
    import re
    _, s = snippet(tmp_path, "                " + body)
    (d,) = check(s)
    assert d.code == "PK020" and read in d.message
    if "j > 0" in body or "j == 0" in body:
        js = [int(v) for v in re.findall(r"j = (\d+)", d.message)]
        assert len(js) == 2 and max(js) >= 1 and js[0] != js[1]
        assert d.message.count("B = ") == 1 and "B = 1:" not in d.message

