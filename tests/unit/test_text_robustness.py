"""What an editor may send, without a server: LSP's line breaks (and only those), lone
surrogates, generated regions in CRLF files, after comments that go on, and regions that
lost a marker; user text in generated comments; the worker pool's recycling."""
from __future__ import annotations

import os
import re

import pytest
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from conftest import SAMPLES
from parakern.frontend import analyze_source
from parakern.frontend.generated import generated_regions
from parakern.lsp.documents import build_snapshot
from parakern.lsp.positions import from_client_position, line_text, to_client_range
from parakern.lsp.region_edits import apply_edit, dispatcher_edit, region_fixes
from parakern.lsp.settings import Settings
from parakern.lsp.summary import cache_key
from parakern.lsp.textdocument import LspTextDocument
from parakern.source.ctext import in_comment, in_string
from parakern.source.text import line_starts, newline_of, offset_at, position_at, split_lines, without_lone_surrogates

CODE = "#ifndef PARAKERN_CPU\n#endif\n__global__ void k(void) { }\nint f_0_dispatch(int n)\n{\n    return 1;\n}\n"
# Not line breaks to LSP (nor to C), though str.splitlines breaks at each of them.
NOT_BREAKS = ["\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def _function_end(text: str):
    (schedule,) = analyze_source(text, "t.c").schedules
    span = schedule.function_span
    return schedule, (span.end_line - 1, span.end_col - 1)


def _lsp_lines(text: str) -> list[str]:
    """The reference: lines end at \\r\\n, \\r, \\n only."""
    return re.split(r"\r\n|\r|\n", text)


# ------------------------------------------------------------------ line breaks
@pytest.mark.parametrize("odd", NOT_BREAKS)
def test_lines_split_only_at_lsp_line_breaks(odd):
    text = f"a{odd}b\r\nc\rd\ne{odd}\n"
    assert split_lines(text) == _lsp_lines(text) == [f"a{odd}b", "c", "d", f"e{odd}", ""]
    assert "".join(split_lines(text, keepends=True)) == text
    assert split_lines(text, keepends=True) == [f"a{odd}b\r\n", "c\r", "d\n", f"e{odd}\n"]
    starts = line_starts(text)
    for line, content in enumerate(_lsp_lines(text)):
        for col in range(len(content) + 1):
            offset = offset_at(text, line, col, starts)
            assert position_at(text, offset, starts) == (line, col)
    assert offset_at(text, 0, 99) == len(f"a{odd}b")           # past the end of a line: its end
    assert offset_at(text, 99, 0) == len(text)
    assert newline_of("x\r\ny\n") == "\r\n" and newline_of("x\ry") == "\r" and newline_of("x") == "\n"


@pytest.mark.parametrize("odd", NOT_BREAKS + ["\r", "\r\n"])
def test_document_positions_and_incremental_edits_use_lsp_lines(odd):
    """pygls' TextDocument splits at U+2028 and the like: positions below shift by a line."""
    head = f"/* a{odd}b */\n"
    text = head + "int x;\nint y;\n"
    for encoding in ("utf-16", "utf-8"):
        doc = LspTextDocument("file:///t.c", text, position_codec=PositionCodec(encoding))
        y = len(_lsp_lines(head)) - 1 + 1           # the line of "int y;"
        assert line_text(doc, y) == "int y;"
        assert from_client_position(doc, types.Position(y, 4)) == (y, 4)
        assert to_client_range(doc, (y, 4, y, 5)) == types.Range(types.Position(y, 4), types.Position(y, 5))
        doc.apply_change(types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(y, 4), types.Position(y, 5)), text="z"))
        assert doc.source == head + "int x;\nint z;\n"
        # an edit past the end of the last line: at the end of the text
        doc.apply_change(types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(y + 1, 0), types.Position(y + 1, 0)), text="int w;"))
        assert doc.source == head + "int x;\nint z;\nint w;"


def test_lone_surrogates_keep_positions_and_can_be_encoded():
    text = "int x; /* \udfff \ud800 😀 */\nint y;\n"
    safe = without_lone_surrogates(text)
    assert len(safe) == len(text) and safe.encode("utf-8") and "😀" in safe
    for encoding in ("utf-16", "utf-8"):
        codec = PositionCodec(encoding)
        assert codec.client_num_units(safe) == codec.client_num_units(text)
    source = (SAMPLES / "saxpy.c").read_text().replace("int i = b * B + t;", "int i = b * B + t; /* \udfff */")
    (schedule,) = analyze_source(source, "t.c").schedules
    assert cache_key(source.split("\n"), schedule, "")          # UnicodeEncodeError before
    snap = build_snapshot("t.c", 1, source, Settings())
    assert [v.id for v in snap.views] == ["saxpy:0"] and not snap.frontend


def test_a_failing_view_costs_its_schedule_only(monkeypatch):
    """One schedule whose view raised (float b[n][], while typing b[n][m]) dropped every view of
    the file for one PK099 at 1:1: the good function lost its lenses and hovers."""
    import parakern.lsp.documents as documents
    source = (SAMPLES / "saxpy.c").read_text() + (SAMPLES / "saxpy.c").read_text().replace("saxpy", "other")
    real = documents.view_of

    def failing(schedule, key):
        if schedule.function == "other":
            raise AttributeError("'NoneType' object has no attribute 'is_Integer'")
        return real(schedule, key)

    monkeypatch.setattr(documents, "view_of", failing)
    snap = build_snapshot("t.c", 1, source, Settings())
    assert [v.id for v in snap.views] == ["saxpy:0"]
    (d,) = snap.frontend
    other = source.index("meta_schedule", source.index("other("))
    assert d.code == "PK099" and d.range[0] == source.count("\n", 0, other)


# ------------------------------------------------------------------ the inserted region
@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_dispatcher_region_keeps_the_files_line_breaks(newline):
    text = ((SAMPLES / "saxpy.c").read_text() + "\nint after(void) { return 0; }\n").replace("\n", newline)
    schedule, end = _function_end(text)
    once = apply_edit(text, *dispatcher_edit(text, schedule.id, end, CODE))
    assert once.replace(newline, "").count("\n") == 0 and once.replace(newline, "").count("\r") == 0
    assert (f"// parakern:begin saxpy:0{newline}#if defined(__CUDACC__) || defined(PARAKERN_CPU){newline}"
            f"#ifndef PARAKERN_CPU{newline}") in once
    assert once.endswith(f"// parakern:end saxpy:0{newline}{newline}int after(void) {{ return 0; }}{newline}")
    assert apply_edit(once, *dispatcher_edit(once, schedule.id, end, CODE)) == once


def test_dispatcher_region_goes_after_a_comment_that_goes_on():
    """`} /* …` continued on the next line: the region must not land inside the comment."""
    base = (SAMPLES / "saxpy.c").read_text().rstrip("\n")
    for tail in [" /* a comment\n   that goes on */\n", " // a comment \\\n   spliced\n",
                 ' /* one */ /* two\n */ const char *s = "x\\\ny";\n']:
        text = base + tail + '#include "other.h"\nint after(void) { return 0; }\n'
        schedule, end = _function_end(text)
        once = apply_edit(text, *dispatcher_edit(text, schedule.id, end, CODE))
        begin = once.index("// parakern:begin saxpy:0")
        assert once[:begin] == base + tail + "\n", tail
        assert once.endswith('// parakern:end saxpy:0\n#include "other.h"\nint after(void) { return 0; }\n')
        assert [s.id for s in analyze_source(once, "t.c").schedules] == ["saxpy:0"]
    # The file ends inside a comment opened after the brace: the region goes between.
    text = base + " /* never closed\n"
    schedule, end = _function_end(text)
    once = apply_edit(text, *dispatcher_edit(text, schedule.id, end, CODE))
    assert once.startswith(base + "\n// parakern:begin saxpy:0") and once.endswith("saxpy:0\n /* never closed\n")


def _inserted(name: str = "jacobi1d.c"):
    """A sample with the real generated region of its schedule after it, and a function after."""
    from parakern.codegen import emit_schedule
    from parakern.pipeline import analyze
    text = (SAMPLES / name).read_text() + "\nint after(void) { return 0; }\n"
    (result,) = analyze(text, name).results
    schedule, end = _function_end(text)
    code = emit_schedule(result)
    return text, apply_edit(text, *dispatcher_edit(text, schedule.id, end, code)), schedule, end, code


def test_a_lone_marker_is_reported_and_only_itself_removed():
    text = (SAMPLES / "saxpy.c").read_text()
    stray = text + "\n// parakern:begin saxpy:0\nint after(void) { return 0; }\n"
    (region,) = generated_regions(stray)
    assert region.missing == "code"
    assert [d.code for d in analyze_source(stray, "t.c").diagnostics] == ["PK019"]
    (delete,) = region_fixes(stray, region)
    assert apply_edit(stray, *delete[1:]) == text + "\nint after(void) { return 0; }\n"


# ------------------------------------------------------------------ user text in generated code
def test_paths_cannot_end_a_comment_or_a_string():
    path = 'dir*/x = 1; /*"quote"\\ \nnew\rline\u2028\udcff.c'
    commented = f"/* {in_comment(path)} */"
    assert commented.count("*/") == 1 and commented.count("/*") == 1
    assert "\n" not in commented and "\r" not in commented and "\u2028" not in commented
    commented.encode("utf-8")
    literal = f'"{in_string(path)}"'
    assert re.fullmatch(r'"(?:[^"\\\n\r]|\\.)*"', literal), literal
    assert "\\377" in literal          # the undecodable byte 0xff, as the bytes it was


# ------------------------------------------------------------------ the worker pool
def _grow(megabytes: int) -> int:
    global _BALLAST
    _BALLAST = bytearray(megabytes * 2 ** 20)
    for i in range(0, len(_BALLAST), 4096):
        _BALLAST[i] = 1
    return os.getpid()


def _pid(_) -> int:
    return os.getpid()


# ------------------------------------------------------------------ front-end recovery
SAXPY = (SAMPLES / "saxpy.c").read_text().split("\n", 2)[2]       # without the comment and the include


def _broken(k: int) -> str:
    return f"int broken{k}(int n)\n{{\n    int x = n +;\n    return x;\n}}\n"


def test_many_broken_functions_do_not_cost_the_others_their_analysis():
    """Recovery gave up after 8 syntax errors: every schedule of the file was lost."""
    parts = [_broken(k) for k in range(12)]
    parts.insert(6, SAXPY.replace("saxpy", "middle"))
    text = "\n".join(parts) + "\n" + SAXPY + "\n" + _broken(99)
    result = analyze_source(text, "t.c")
    assert [s.id for s in result.schedules] == ["middle:0", "saxpy:0"]
    errors = [d for d in result.diagnostics if d.code == "PK001"]
    assert len(errors) == 13 and all("expected an expression" in d.message or "before" in d.message
                                     for d in errors), [d.format() for d in errors]
    lines = text.split("\n")
    assert all("n +;" in lines[d.span.line - 1] for d in errors)


def test_deep_parentheses_elsewhere_cost_only_their_function():
    """150 nested parentheses in another function: PK001 at 1:1 and no schedule at all before."""
    deep = "int deep(int n)\n{\n    return " + "(" * 150 + "n" + ")" * 150 + ";\n}\n"
    for text, line in [(deep + "\n" + SAXPY, 3), (SAXPY + "\n" + deep + "\n" + SAXPY.replace("saxpy", "after"), 17)]:
        result = analyze_source(text, "t.c")
        assert [s.id for s in result.schedules] == [s for s in ("saxpy:0", "after:0") if s.split(":")[0] in text]
        (diag,) = [d for d in result.diagnostics if d.severity.value == "error"]
        assert diag.code == "PK001" and diag.span.line == line and "nested too deeply" in diag.message, diag.format()


def test_a_huge_sum_elsewhere_is_no_recursion_error():
    """A 500-term sum in another function: PK099 (RecursionError in collect_writes) before."""
    terms = " + ".join(f"x[{k}]" for k in range(500))
    text = f"float sum(float *x)\n{{\n    return {terms};\n}}\n\n" + SAXPY
    result = analyze_source(text, "t.c")
    assert [s.id for s in result.schedules] == ["saxpy:0"]
    assert not result.diagnostics, [d.format() for d in result.diagnostics]


def test_a_huge_sum_inside_a_schedule_is_a_clear_error_at_its_place():
    terms = " + ".join(f"x[{k}]" for k in range(500))
    text = SAXPY.replace("y[i] = alpha * x[i] + y[i];", f"y[i] = {terms};")
    result = analyze_source(text, "t.c")
    (diag,) = result.diagnostics
    line = next(k for k, content in enumerate(text.split("\n"), 1) if "x[499]" in content)
    assert diag.code == "PK013" and diag.span.line == line and "nested too deeply" in diag.message, diag.format()
    assert "Traceback" not in diag.message and "Recursion" not in diag.message

