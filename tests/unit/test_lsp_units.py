"""The language server's pure parts, without a server: the dispatcher edit, masking of
generated regions, cache keys, settings, texts, and position conversion."""
from __future__ import annotations

import re

import pytest
import sympy
from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec

from conftest import SAMPLES
from parakern.frontend import analyze_source
from parakern.frontend.generated import mask_generated
from parakern.lsp.positions import from_client_position, to_client_range
from parakern.lsp.region_edits import apply_edit, dispatcher_edit
from parakern.lsp.settings import Settings, update
from parakern.lsp.summarize import chain_text
from parakern.lsp.summary import CaseInfo, ScheduleSummary, cache_key
from parakern.lsp.texts import case_message, lens_title
from parakern.lsp.views import token_at, view_of
from parakern.symbolic.symbols import sym

CODE = "__global__ void k(void) { }\nint k_dispatch(void) { return 1; }\n"


def _schedule(text: str, file: str = "t.c"):
    (schedule,) = analyze_source(text, file).schedules
    return schedule


def test_dispatcher_edit_is_idempotent_and_leaves_the_rest_alone():
    text = (SAMPLES / "matadd.c").read_text() + "\nint after(void) { return 0; }\n"
    schedule = _schedule(text)
    end = (schedule.function_span.end_line - 1, schedule.function_span.end_col - 1)
    once = apply_edit(text, *dispatcher_edit(text, schedule.id, end, CODE))
    twice = apply_edit(once, *dispatcher_edit(once, schedule.id, end, CODE))
    assert once == twice
    begin = once.index("// parakern:begin matadd:0")
    assert once[:begin].rstrip("\n") == text[:text.index("\nint after")].rstrip("\n")
    assert once.endswith("// parakern:end matadd:0\n\nint after(void) { return 0; }\n")
    # A new generation replaces the region only.
    other = apply_edit(once, *dispatcher_edit(once, schedule.id, end, "int changed;\n"))
    assert "int changed;" in other and "__global__" not in other and other.endswith("int after(void) { return 0; }\n")


def test_a_region_made_from_an_earlier_version_of_its_function_is_said_to_be_stale():
    """A schedule edited after its kernels were inserted kept the old kernels with no word; a
    schedule added above renumbered the others, and a region named f:1 ran another one's code."""
    from parakern.frontend.generated import region_fingerprint
    from parakern.lsp.ranges import span_range
    text = (SAMPLES / "saxpy.c").read_text()
    schedule = _schedule(text)
    fs = schedule.function_span
    end = (fs.end_line - 1, fs.end_col - 1)
    inserted = apply_edit(text, *dispatcher_edit(text, schedule.id, end, CODE, region_fingerprint(text, span_range(fs))))
    marker = next(line for line in inserted.split("\n") if line.startswith("// parakern:begin saxpy:0 from="))
    assert not [d for d in analyze_source(inserted, "t.c").diagnostics if d.code == "PK041"]
    # white space is no change, even between tokens; an edit of the body is, and of a #define
    for spaced in (inserted.replace("    ", "\t"), inserted.replace("alpha * x[i]", "alpha*x[i]")):
        assert spaced != inserted
        assert not [d for d in analyze_source(spaced, "t.c").diagnostics if d.code == "PK041"]
    defined = inserted.replace('#include "metafork.h"', '#include "metafork.h"\n#define SCALE 2')
    assert [d for d in analyze_source(defined, "t.c").diagnostics if d.code == "PK041"]
    edited = inserted.replace("alpha * x[i]", "alpha * x[i] + 1.0f")
    assert edited != inserted
    (stale,) = [d for d in analyze_source(edited, "t.c").diagnostics if d.code == "PK041"]
    line = inserted.split("\n").index(marker) + 1
    assert (stale.span.line, stale.span.col, stale.span.end_line, stale.span.end_col) == (line, 1, line, len(marker) + 1)
    assert "earlier version of function saxpy" in stale.message and stale.severity.value == "warning"
    # inserted again: up to date
    schedule = _schedule(edited)
    again = apply_edit(edited, *dispatcher_edit(edited, schedule.id, end, CODE,
                                                region_fingerprint(edited, span_range(schedule.function_span))))
    assert again.count("// parakern:begin") == 1
    assert not [d for d in analyze_source(again, "t.c").diagnostics if d.code == "PK041"]
    # a fingerprint edited by hand: still a begin marker (no PK019, no second one after inserting)
    for junk in ("from=zzzz", "from=", "from=2EF3EC7F991C", "from=0123456789ab extra"):
        marked = re.sub(r"from=[0-9a-f]{12}", junk, again)
        assert not [d for d in analyze_source(marked, "t.c").diagnostics if d.code in ("PK019", "PK041")], junk
        schedule = _schedule(marked)
        replaced = apply_edit(marked, *dispatcher_edit(marked, schedule.id, end, CODE, "0123456789ab"))
        assert replaced.count("// parakern:begin") == 1 and "begin saxpy:0 from=0123456789ab\n" in replaced, junk
    # a second region of one id: the copy is named (inserting replaced the first only)
    twice = again + again[again.index("// parakern:begin"):again.index("// parakern:end saxpy:0") + 24]
    (copy,) = [d for d in analyze_source(twice, "t.c").diagnostics if d.code == "PK041"]
    assert copy.message.startswith("a second generated region of saxpy:0 (the first begins at line ")
    assert copy.span.line == twice.count("\n", 0, twice.rindex("// parakern:begin")) + 1
    # a region of a schedule the file no longer has
    gone = again.replace("// parakern:begin saxpy:0", "// parakern:begin saxpy:1").replace(
        "// parakern:end saxpy:0", "// parakern:end saxpy:1")
    (stale,) = [d for d in analyze_source(gone, "t.c").diagnostics if d.code == "PK041"]
    assert "no meta_schedule saxpy:1 in this file" in stale.message
    # a schedule with an error is still there: no word of its region being gone
    broken = again.replace("alpha * x[i] + 1.0f", "alpha * q[i] + 1.0f")
    assert "PK010" in {d.code for d in analyze_source(broken, "t.c").diagnostics}
    assert not [d for d in analyze_source(broken, "t.c").diagnostics
                if d.code == "PK041" and "no meta_schedule" in d.message]


def test_dispatcher_edit_at_the_end_of_a_file_without_newline():
    text = (SAMPLES / "saxpy.c").read_text().rstrip("\n")
    schedule = _schedule(text)
    end = (schedule.function_span.end_line - 1, schedule.function_span.end_col - 1)
    once = apply_edit(text, *dispatcher_edit(text, schedule.id, end, CODE))
    assert once.startswith(text) and once.endswith("// parakern:end saxpy:0")
    assert apply_edit(once, *dispatcher_edit(once, schedule.id, end, CODE)) == once


def test_generated_regions_are_masked_position_for_position():
    text = (SAMPLES / "matadd.c").read_text()
    schedule = _schedule(text)
    end = (schedule.function_span.end_line - 1, schedule.function_span.end_col - 1)
    inserted = apply_edit(text, *dispatcher_edit(text, schedule.id, end, "#include <cuda.h>\n" + CODE))
    masked = mask_generated(inserted)
    assert len(masked) == len(inserted) and masked.count("\n") == inserted.count("\n")
    assert "__global__" not in masked and masked.startswith(text)
    result = analyze_source(masked, "t.c")
    assert not result.diagnostics and [s.id for s in result.schedules] == ["matadd:0"]


def test_cache_key_ignores_lines_above_but_not_declarations():
    text = (SAMPLES / "jacobi1d.c").read_text()
    part = Settings().analysis_part("jacobi1d")

    def key(source: str) -> str:
        return cache_key(source.split("\n"), _schedule(source), part)

    base = key(text)
    assert key("// a comment\n\n" + text) == base
    assert key(text + "\nint unrelated(void) { return 1; }\n") == base
    assert key("#define EXTRA 3\n" + text) != base
    assert key(text.replace("i * s * B", "i * B * s")) != base
    other = Settings(target="sm_90").analysis_part("jacobi1d")
    assert cache_key(text.split("\n"), _schedule(text), other) != base


TILED = """enum { TILE = 32 };
  #define SCALE \\
      2
void f(int n, float a[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / TILE; i++)
            meta_for (int t = 0; t < TILE; t++)
                a[i * TILE + t] *= SCALE;
    }
}
"""


@pytest.mark.parametrize("old, new", [("TILE = 32", "TILE = 4096"),      # an enumerator
                                      ("      2", "      3"),            # a #define's continuation line
                                      ("  #define", "  #define SCALE2 1\n  #define")])   # an indented directive
def test_cache_key_follows_what_the_function_reads_from_file_scope(old, new):
    """A stale key kept the tree of TILE = 32 after the edit to 4096, and the dispatcher
    inserted then launched 32 threads: every line of file scope is in the key, not the lines
    a pattern recognised."""
    part = Settings().analysis_part("f")
    edited = TILED.replace(old, new)
    assert edited != TILED
    assert cache_key(edited.split("\n"), _schedule(edited), part) != cache_key(TILED.split("\n"), _schedule(TILED), part)


def test_cache_key_names_the_file_its_generated_code_cites():
    part = Settings().analysis_part("f")
    first = analyze_source(TILED, "first.c").schedules[0]
    second = analyze_source(TILED, "second.c").schedules[0]
    assert cache_key(TILED.split("\n"), first, part) != cache_key(TILED.split("\n"), second, part)


def test_chained_relations_and_case_message():
    B, s, Z, R = sym("B"), sym("s"), sym("Z"), sym("R")
    text = chain_text([sympy.Le(8 * B + 8, Z), sympy.Lt(Z, 8 * B * s + 8), sympy.Le(20, R)])
    assert text == "8·B + 8 ≤ Z < 8·B·s + 8 ∧ 20 ≤ R"
    case = CaseInfo(2, (), (), text, ("(1)", "(4a)", "(3b)"), "20", "8·B + 8", "B", None, ("a",),
                    (), True)
    summary = ScheduleSummary("k", "f:0", "f", "ok", cases=(case, case, case))
    assert case_message(summary, case) == \
        "case 2/3: 8·B + 8 ≤ Z < 8·B·s + 8 ∧ 20 ≤ R — shared memory (4a), granularity reduced (3b)"
    assert lens_title(summary) == "3 cases · 20 regs · smem 8·B + 8 B"
    assert lens_title(None) == "analysing…"


def test_tokens_for_hover():
    text = (SAMPLES / "jacobi1d.c").read_text()
    view = view_of(_schedule(text))
    lines = text.split("\n")
    assert token_at([view], lines[8], 8, 10)[1:] == ("meta_schedule", "")
    assert token_at([view], lines[8], 8, 24)[1:] == ("cache", "")
    assert token_at([view], lines[8], 8, 28)[1:] == ("cached", "a")
    assert token_at([view], lines[10], 10, 18)[1:] == ("meta_for", "j")
    assert token_at([view], lines[4], 4, 8) is None


def test_positions_in_utf16_and_utf8():
    source = "int x; /* ü😀 */ int y;\n"
    col = source.index("int y")
    for encoding, expected in (("utf-16", col + 1), ("utf-8", len(source[:col].encode()))):
        doc = TextDocument("file:///t.c", source, position_codec=PositionCodec(encoding))
        r = to_client_range(doc, (0, col, 0, col + 5))
        assert (r.start.character, r.end.character) == (expected, expected + 5)
        assert from_client_position(doc, types.Position(0, expected)) == (0, col)
        # past the end of the line stays past it
        end = len(source) - 1
        assert to_client_range(doc, (0, end, 0, end + 1)).end.character == \
            to_client_range(doc, (0, end, 0, end)).end.character + 1


def test_cache_key_of_a_schedule_ignores_edits_inside_its_siblings():
    from parakern.frontend import analyze_source
    body = ("    meta_schedule {{\n        meta_for (int i = 0; i < n / B; i++)\n"
            "            meta_for (int j = 0; j < B; j++)\n                x[i * B + j] = {value} * x[i * B + j];\n    }}\n")
    text = ("void scale(int n, int B, float x[n])\n{\n    assert(n % B == 0);\n"
            + "".join(body.format(value=v) for v in ("2.0f", "3.0f", "4.0f")) + "}\n")
    part = Settings().analysis_part("scale")

    def keys(source: str) -> list:
        schedules = analyze_source(source, "t.c").schedules
        assert len(schedules) == 3
        return [cache_key(source.split("\n"), s, part, schedules) for s in schedules]

    base = keys(text)
    assert len(set(base)) == 3
    edited = keys(text.replace("3.0f", "5.0f"))          # inside the second schedule only
    assert edited[0] == base[0] and edited[2] == base[2] and edited[1] != base[1]
    host = keys(text.replace("assert(n % B == 0);", "assert(n % B == 0 && n > 0);"))
    assert all(h != b for h, b in zip(host, base))       # the function's own code: every one
    longer = keys(text.replace("3.0f * x[i * B + j];", "3.0f *\n x[i * B + j];"))
    assert longer[0] == base[0] and longer[2] != base[2]  # the third one moved down a line


def test_recommendations_tuned_one_profile_at_a_time_merge_in_the_configured_order():
    from parakern.lsp.summary import TuneInfo, merged
    h100, a100, t4 = (TuneInfo(k, "N=1", f"case 1 on {k}") for k in ("h100", "a100", "t4"))
    tuning = merged(merged((), (t4,), ("h100", "a100", "t4")), (h100,), ("h100", "a100", "t4"))
    assert [t.key for t in tuning] == ["h100", "t4"]
    again = TuneInfo("t4", "N=1", "case 2 on t4")
    assert merged(tuning + (a100,), (again,), ("h100", "a100", "t4")) == (h100, a100, again)
    assert merged((a100,), (h100,)) == (a100, h100)        # no order given: as they came


class _QuietClient:
    """The editor connection, as far as a document's rounds use it."""
    def publish(self, uri, version, diagnostics): pass
    def refresh_lenses(self): pass
    def progress_supported(self): return False
    def show_message(self, kind, text): pass


def test_a_request_waits_for_the_rounds_front_end_run_instead_of_running_its_own(monkeypatch):
    """A code action right after an edit of a large file: before, its snapshot queued a second
    front-end run behind the round's (seconds each on thousands of lines)."""
    import asyncio
    import threading

    from parakern.lsp import engine as engine_module
    calls, release = [], threading.Event()
    real = engine_module.build_snapshot

    def slow(*args):
        calls.append(args[1])
        release.wait(10)
        return real(*args)

    monkeypatch.setattr(engine_module, "build_snapshot", slow)

    async def scenario():
        engine = engine_module.Engine(_QuietClient(), Settings(case_trees=False))
        try:
            engine.open("file:///s.c", "s.c", 1, (SAMPLES / "saxpy.c").read_text())
            await asyncio.sleep(0.05)                        # the round's run has started
            views = asyncio.ensure_future(engine.current_views("file:///s.c"))
            await asyncio.sleep(0.05)
            release.set()
            return await views
        finally:
            engine.close()

    views = asyncio.run(scenario())
    assert [v.id for v in views] == ["saxpy:0"] and calls == [1]


def test_a_lens_that_moves_is_refreshed():
    """A line added above a schedule moves its lens: a client that asked for lenses before the
    round's front end ran got the old line, and only a refresh makes it ask again (the titles
    alone were compared)."""
    import asyncio

    from parakern.lsp import engine as engine_module

    class Counting(_QuietClient):
        refreshed = 0

        def refresh_lenses(self):
            Counting.refreshed += 1

    async def scenario():
        engine = engine_module.Engine(Counting(), Settings(case_trees=False))
        try:
            text = (SAMPLES / "saxpy.c").read_text()
            engine.open("file:///s.c", "s.c", 1, text)
            await engine.current_views("file:///s.c")
            for _ in range(100):       # the first round's refresh
                if Counting.refreshed:
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)
            before = Counting.refreshed
            engine.change("file:///s.c", 2, "\n" + text)
            (view,) = await engine.current_views("file:///s.c")
            for _ in range(100):       # the round's own refresh follows its front end
                if Counting.refreshed > before:
                    break
                await asyncio.sleep(0.05)
            return before, view
        finally:
            engine.close()

    before, view = asyncio.run(scenario())
    assert Counting.refreshed > before and view.keyword[0] == next(
        k for k, line in enumerate(("\n" + (SAMPLES / "saxpy.c").read_text()).split("\n")) if "meta_schedule" in line)


def test_the_bench_commands_argument_is_checked_like_the_setting():
    from parakern.lsp.benchjob import BenchSettingsError, bench_values
    with pytest.raises(BenchSettingsError, match="unknown key 'foo'"):
        bench_values({}, {"foo": 1})
    with pytest.raises(BenchSettingsError, match="device must be a GPU index"):
        bench_values({}, {"device": -1})
    assert bench_values({"device": 1}, {"repeat": 3})["device"] == 1


def test_a_target_the_installed_ptxas_cannot_build_is_refused_with_the_ones_it_can(monkeypatch, capsys):
    """sm_70 with CUDA 13's ptxas: every schedule was an internal error (PK099) "to report"."""
    from parakern.commands import cli
    from parakern.machine import targets
    monkeypatch.setattr(targets.shutil, "which", lambda name: "/opt/cuda/bin/ptxas")
    monkeypatch.setattr(targets, "_ptxas_targets", lambda ptxas: frozenset({"sm_75", "sm_80", "sm_90"}))
    kept, warnings = update(Settings(), {"target": "sm_70"})
    assert kept.target == Settings().target and warnings == [
        "parakern.target: the installed ptxas (/opt/cuda/bin/ptxas) cannot build for sm_70; "
        "choose one it can: sm_75, sm_80, sm_90"]
    assert update(Settings(), {"target": "sm_90"})[0].target == "sm_90"
    assert cli.main(["optimize", str(SAMPLES / "saxpy.c"), "--target", "sm_70"]) == 2
    assert "--target sm_70: the installed ptxas" in capsys.readouterr().err


def test_a_schedule_without_a_tree_says_why_in_the_words_of_its_error():
    """The disabled code action said "(no-tree)", a status word nobody can act on."""
    from parakern.lsp.summary import DiagInfo
    error = DiagInfo("error", "PK020", "two iterations of meta_for j may write b[i]", ((3, 4), (3, 8)))
    hint = DiagInfo("information", "PK100", "case 1", ((3, 4), (3, 8)))
    assert ScheduleSummary("k", "f:0", "f", "no-tree", diagnostics=(hint, error)).why_no_tree == error.message
    assert ScheduleSummary("k", "f:0", "f", "timeout", "analysis ran past 60 s").why_no_tree == "analysis ran past 60 s"
    assert "fix the errors" in ScheduleSummary("k", "f:0", "f", "no-tree").why_no_tree


def test_the_extensions_settings_offer_every_strategy_code():
    """package.json's enum lacked "(6)": VS Code flagged a valid value and could not offer it."""
    import json

    from conftest import ROOT
    from parakern.lsp.settings import STRATEGY_CODES
    package = json.loads((ROOT / "vscode-extension" / "package.json").read_text())
    setting = package["contributes"]["configuration"]["properties"]["parakern.strategies"]
    assert setting["items"]["enum"] == list(STRATEGY_CODES)

