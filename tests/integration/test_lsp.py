"""End-to-end tests of `parakern serve` with pytest-lsp, as Neovim 0.11 and as VS Code.

Every test runs against both client capability profiles (one server per profile,
shared by the tests of this module). Warnings about messages the client did not
advertise (pytest_lsp.LspSpecificationWarning) are errors. Worker faults (crash,
delay) are injected with the test-only setting `testFault`, honoured because the
server runs with PARAKERN_LSP_TEST_HOOKS=1.
"""
from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, client_capabilities

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp"))
from harness import SERVER, Editor, make_editor, sample, server_env, units  # noqa: E402

from unit.test_frontend_errors import EXPECTED  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "lsp" / "fixtures"
PROFILES = ["neovim", "visual_studio_code"]
OPTIONS = {"timeLimitSeconds": 60, "gpuProfiles": ["h100", "a100", "t4"]}

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
    pytest.mark.timeout(120),
]


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, client_factory=make_editor, server_env=server_env()),
    scope="module", params=PROFILES)
async def client(lsp_client: Editor, request):
    await lsp_client.start_session(request.param, client_capabilities(request.param), dict(OPTIONS))
    yield
    await lsp_client.shutdown_session()


def fixture(name: str) -> tuple[str, str]:
    path = FIXTURES / name
    return path.as_uri(), path.read_text()


def rng(d: types.Diagnostic) -> tuple[int, int, int, int]:
    r = d.range
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def cases(ds) -> list[types.Diagnostic]:
    return [d for d in ds if d.code == "PK100"]


async def configure(client: Editor, **settings) -> None:
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"parakern": settings}))
    await asyncio.sleep(0.05)


# ------------------------------------------------------------------ session


async def test_initialize_negotiates_encoding_and_capabilities(client: Editor):
    caps = client.result.capabilities
    expected = "utf-8" if client.profile == "neovim" else "utf-16"
    assert caps.position_encoding == expected
    assert set(caps.execute_command_provider.commands) == {
        "parakern.insertDispatcher", "parakern.bench", "parakern.showCaseTree"}
    assert caps.code_lens_provider.resolve_provider is True
    assert caps.hover_provider
    kinds = caps.code_action_provider.code_action_kinds
    assert types.CodeActionKind.Refactor in kinds and types.CodeActionKind.QuickFix in kinds


# ------------------------------------------------------------------ diagnostics


WRONG = ["write_param.c", "syntax_error.c", "cache_unused.c", "while_inside.c", "ifdef.c",
         "broken_function_beside_good.c", "redeclared_loop_variable.c"]


@pytest.mark.parametrize("name", WRONG)
async def test_frontend_diagnostics_have_exact_ranges(client: Editor, name: str):
    uri, text = sample(f"wrong/{name}")
    code, (line, col, end_line, end_col), _, words = EXPECTED[name]
    client.open(uri, text)
    try:
        ds = await client.wait_diagnostics(uri, lambda ds: any(d.code == code for d in ds), timeout=10)
        (d,) = [d for d in ds if d.severity == types.DiagnosticSeverity.Error]
        assert d.code == code and words in d.message
        assert d.source == "parakern"
        assert rng(d) == (line - 1, col - 1, end_line - 1, end_col - 1)   # ASCII files: units = code points
        if name == "write_param.c":
            (related,) = d.related_information
            assert related.location.uri == uri and related.location.range.start.line == 0
            assert "declared here" in related.message
    finally:
        client.close(uri)


async def test_case_diagnostics_lenses_and_hover(client: Editor):
    uri, text = sample("jacobi1d.c")
    # a text no server analysed before (both profiles' servers share the summaries on disk,
    # which the server reads at once): this test sees the analysis run
    text = text.replace("(s * B);", f"(s * B);  // {client.profile}", 1)
    start = time.monotonic()
    client.open(uri, text)
    first = await client.wait_diagnostics(uri, timeout=10)
    assert time.monotonic() - start < 5 and not cases(first)   # front-end result at once

    # Before the case tree: the lens says so and the hover answers at once.
    hover = await client.hover(uri, 8, 12)
    assert "parakern" in hover.contents.value

    ds = await client.wait_diagnostics(uri, lambda ds: len(cases(ds)) >= 2, timeout=90)
    found = cases(ds)
    keyword = (8, 8, 8, 21)    # `meta_schedule` on line 9
    assert all(rng(d) == keyword and d.severity == types.DiagnosticSeverity.Information for d in found)
    n = len(found)
    assert found[0].message.startswith(f"case 1/{n}: ") and "8·B·s + 8 ≤ Z" in found[0].message
    assert any("granularity reduced (3b)" in d.message for d in found)
    assert any(re.search(r"8·B \+ 8 ≤ Z < 8·B·s \+ 8", d.message) for d in found)   # chained relation

    # The cases come first; which GPU runs which case, the no-fit regions and traffic follow.
    lenses = await client.lenses(uri)
    deadline = time.monotonic() + 60
    while " on h100" not in lenses[0].command.title and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        lenses = await client.lenses(uri)
    titles = [lens.command.title for lens in lenses]
    # What the default dispatcher launches on the configured GPUs at the bench's sizes, then the count.
    assert re.fullmatch(rf"runs case \d on h100, a100, t4 · \d+ regs · (smem .* B|no smem) · {n} cases", titles[0]), titles
    assert titles[1:] == ["Insert dispatcher", "Bench"]
    assert lenses[1].command.command == "parakern.insertDispatcher"
    assert list(lenses[1].command.arguments) == [uri, "jacobi1d:0"]
    assert all(rng(types.Diagnostic(range=lens.range, message="")) == keyword for lens in lenses)
    # Only a client that supports workspace/codeLens/refresh is asked to refresh (VS Code, not Neovim).
    assert (client.lens_refreshes > 0) == (client.profile == "visual_studio_code")

    value = (await client.hover(uri, 8, 12)).contents.value
    # the answer first: which case runs on each GPU, its time, registers and shared memory; then the table
    runs = value.split("\n\n")[1:3]
    assert runs[0].startswith("**Runs** (`jacobi1d_0_dispatch`: the time model's fastest case that fits"), value
    assert [line.split(":")[0] for line in runs[1].splitlines()] == ["- **H100**", "- **A100**", "- **T4**"], value
    assert all(re.match(r"- \*\*\w+\*\*: case \d · [\d.]+ [µm]?s · \d+ regs · ", line) for line in runs[1].splitlines())
    assert value.index("**Runs**") < value.index(
        "| case | constraints | its kernel needs | decisions | registers | shared memory | z3 witness |")
    assert "**H100**: case 1 when 8·B·s + 8 ≤ 232448 ∧ B ≤ 1024" in value   # the tree's order, in the details
    assert "**T4**" in value and "never case 3" in value
    meta_for = (await client.hover(uri, 9, 14)).contents.value
    assert "`meta_for i` → `blockIdx.x`" in meta_for and "| case |" in meta_for
    cached = (await client.hover(uri, 8, 28)).contents.value      # the `a` of cache(a)
    assert "`a`: in shared memory in case" in cached
    assert (await client.hover(uri, 8, 24)).contents.value.startswith("**parakern**")   # `cache`
    assert await client.hover(uri, 4, 10) is None                 # not one of ours
    # The time model's recommendation follows the cases, in the background.
    deadline = time.monotonic() + 60
    while "**Recommended values**" not in value and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        value = (await client.hover(uri, 8, 12)).contents.value
    assert re.search(r"- \*\*H100\*\* at N=\d+: case \d+: .*· predicted ", value), value
    client.close(uri)


async def test_edit_above_function_reuses_the_cached_result(client: Editor):
    uri, text = sample("jacobi1d.c")
    client.open(uri, text)
    ds = await client.wait_diagnostics(uri, lambda ds: len(cases(ds)) >= 2, timeout=90)
    before = [rng(d) for d in cases(ds)]
    start = time.monotonic()
    version = client.edit(uri, (0, 0), (0, 0), "// a new first line\n// and another\n")
    ds = await client.wait_diagnostics(uri, lambda ds: len(cases(ds)) >= 2, timeout=10)
    elapsed = time.monotonic() - start
    assert [rng(d) for d in cases(ds)] == [(a + 2, b, c + 2, e) for a, b, c, e in before]
    assert elapsed < 3.0, elapsed      # debounce + front-end + cache: no new case tree
    assert client.last(uri, version) is not None
    client.close(uri)


async def test_utf16_and_utf8_ranges_on_non_ascii_lines(client: Editor):
    uri, text = fixture("unicode.c")
    lines = text.split("\n")
    client.open(uri, text)
    ds = await client.wait_diagnostics(uri, lambda ds: any(d.code == "PK004" for d in ds)
                                       and cases(ds), timeout=90)
    (err,) = [d for d in ds if d.code == "PK004"]
    line = lines[6]
    col = line.index("n = 0;")
    u = units(line[:col], client.encoding)
    assert rng(err) == (6, u, 6, u + 1)
    assert u != col    # the comment holds ü and 😀: the units differ from code points
    line = lines[13]
    col = line.index("meta_schedule")
    u = units(line[:col], client.encoding)
    assert {rng(d) for d in cases(ds)} == {(13, u, 13, u + len("meta_schedule"))}
    hover = await client.hover(uri, 13, col + 3)
    assert hover is not None and "`g:0`" in hover.contents.value
    client.close(uri)


# ------------------------------------------------------------------ code action, commands


async def _dispatcher_action(client: Editor, uri: str, line: int, character: int, diagnostics=(), only=None):
    actions = await client.actions(uri, line, character, diagnostics, only)
    found = [a for a in actions if a.title.startswith("Insert comprehensive dispatcher")]
    return found


async def test_code_action_inserts_dispatcher_idempotently(client: Editor):
    uri, text = sample("matadd.c")
    client.open(uri, text)
    await client.wait_diagnostics(uri, lambda ds: len(cases(ds)) >= 1, timeout=90)
    (action,) = await _dispatcher_action(client, uri, 9, 8)
    assert action.kind == types.CodeActionKind.Refactor
    if action.edit is None:
        action = await client.code_action_resolve_async(action)
    assert action.edit is not None
    client.apply_workspace_edit(action.edit)
    once = client.texts[uri]
    assert once.startswith(text.rstrip("\n"))       # the original text is untouched
    assert re.search(r"^// parakern:begin matadd:0 from=[0-9a-f]{12}\n", once, re.M)
    assert once.rstrip().endswith("// parakern:end matadd:0")
    region = once[once.index("// parakern:begin"):]
    assert "__global__" in region
    # ... and the file still builds as the serial C it was (gcc refused <cuda_runtime.h>)
    if shutil.which("gcc"):
        samples = Path(__file__).resolve().parents[2] / "samples"
        done = subprocess.run(["gcc", "-fsyntax-only", "-I", str(samples), "-x", "c", "-"], input=once,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr

    # The new version is analysed without complaints about the inserted CUDA.
    ds = await client.wait_diagnostics(uri, lambda ds: len(cases(ds)) >= 1, timeout=30)
    assert not [d for d in ds if d.severity == types.DiagnosticSeverity.Error]
    (again,) = await _dispatcher_action(client, uri, 9, 8)
    if again.edit is None:
        again = await client.code_action_resolve_async(again)
    client.apply_workspace_edit(again.edit)
    assert client.texts[uri] == once

    # On one of our case diagnostics it is a quick fix of it, listed once (the same edit as a
    # quickfix and a refactor was listed twice: under Quick Fix and under More Actions)
    ds = await client.wait_diagnostics(uri, lambda ds: len(cases(ds)) >= 1, timeout=30)
    actions = await _dispatcher_action(client, uri, 9, 8, diagnostics=cases(ds)[:1])
    assert [a.kind for a in actions] == [types.CodeActionKind.QuickFix]
    assert [d.code for d in actions[0].diagnostics] == ["PK100"]
    # ... a refactor where the client asks for refactors only (VS Code's Refactor… menu)
    actions = await _dispatcher_action(client, uri, 9, 8, diagnostics=cases(ds)[:1],
                                       only=[types.CodeActionKind.Refactor])
    assert [a.kind for a in actions] == [types.CodeActionKind.Refactor] and actions[0].diagnostics is None
    # ... nothing where it asks for what the action is not
    assert await _dispatcher_action(client, uri, 9, 8, only=[types.CodeActionKind.Source]) == []
    # ... and not on a warning it does not fix (it was offered on PK040, which stayed)
    warning = types.Diagnostic(range=cases(ds)[0].range, message="uncoalesced", source="parakern", code="PK040",
                               severity=types.DiagnosticSeverity.Warning)
    actions = await _dispatcher_action(client, uri, 9, 8, diagnostics=[warning])
    assert [a.kind for a in actions] == [types.CodeActionKind.Refactor]

    # The function edited: PK041 on the begin marker, where inserting again is offered, and fixes it
    edited = once.replace("c[i][j] = a[i][j] + b[i][j];", "c[i][j] = a[i][j] - b[i][j];", 1)
    assert edited != once
    client.replace_all(uri, edited)
    marker = edited[:edited.index("// parakern:begin")].count("\n")
    ds = await client.wait_diagnostics(uri, lambda ds: any(d.code == "PK041" for d in ds), timeout=60)
    (stale,) = [d for d in ds if d.code == "PK041"]
    assert stale.range.start.line == marker
    actions = await _dispatcher_action(client, uri, marker, 3, diagnostics=[stale])
    (fix,) = actions
    assert fix.kind == types.CodeActionKind.QuickFix and list(fix.diagnostics) == [stale]
    if fix.edit is None:
        fix = await client.code_action_resolve_async(fix)
    client.apply_workspace_edit(fix.edit)
    assert client.texts[uri].count("// parakern:begin") == 1
    ds = await client.wait_diagnostics(uri, lambda ds: len(cases(ds)) >= 1, timeout=60)
    assert not [d for d in ds if d.code == "PK041"]
    client.close(uri)


async def test_insert_dispatcher_command_applies_the_same_edit(client: Editor):
    uri, text = sample("matadd.c")
    client.open(uri, text)
    await client.wait_diagnostics(uri, lambda ds: len(cases(ds)) >= 1, timeout=90)
    result = await client.command("parakern.insertDispatcher", uri, "matadd:0")
    assert result["applied"] is True
    once = client.texts[uri]
    assert "// parakern:begin matadd:0" in once
    await client.wait_diagnostics(uri, timeout=10)
    result = await client.command("parakern.insertDispatcher", uri, "matadd:0")
    assert result["applied"] is True and client.texts[uri] == once
    client.close(uri)


async def test_show_case_tree_markdown_and_dot(client: Editor):
    uri, text = sample("jacobi1d.c")
    client.open(uri, text)
    markdown = await client.command("parakern.showCaseTree", uri, "jacobi1d:0", "markdown")
    assert markdown.startswith("# Case tree of `jacobi1d:0`")
    assert "| case | constraints |" in markdown and "coverage proved by z3" in markdown
    dot = await client.command("parakern.showCaseTree", uri, "jacobi1d:0", "dot")
    assert dot.startswith('digraph "jacobi1d:0"') and "->" in dot
    missing = await client.command("parakern.showCaseTree", uri, "nothere:3", "dot")
    assert "no meta_schedule 'nothere:3'" in missing
    client.close(uri)


async def test_bench_says_what_is_missing(client: Editor):
    """This machine has no GPU (no CUDA driver) and no pycuda: the message says the GPU is what is
    missing, as plain text (no markdown backticks), and offers as buttons what needs no GPU (the
    emulated bench is tested in test_lsp_bench.py)."""
    uri, text = sample("matadd.c")
    client.open(uri, text)
    client.messages.clear()
    asked = len(client.asked)
    result = await client.command("parakern.bench", uri, "matadd:0")   # the request closed: nothing runs
    (request,) = client.asked[asked:]
    assert result["status"] == "missing" and result["message"] == request.message
    assert request.type == types.MessageType.Warning
    assert request.message.startswith("parakern bench: no NVIDIA GPU here: there is no CUDA driver "
                                      "(libcuda.so.1 not found).")
    assert "Without a GPU: show the plan (the case each point runs) or tune (the time model's best values) " \
        "for h100, a100, t4." in request.message
    assert "Traceback" not in request.message and "\n" not in request.message and "`" not in request.message
    assert "pip install -e" not in request.message and "pycuda" not in request.message
    assert [a.title for a in request.actions] == result["offers"] == ["Show the plan", "Tune"]
    assert not client.messages      # the request is the message: not shown twice
    bad = await client.command("parakern.bench", uri, "matadd:0", {"sweep": {"B0": [0]}})
    assert bad["status"] == "error" and "parakern.bench.sweep.B0 must be a positive integer" in bad["message"]
    gone = await client.command("parakern.bench", uri, "nothere:0")
    assert gone["status"] == "error" and "no meta_schedule 'nothere:0'" in gone["message"]
    client.close(uri)


async def test_bench_without_a_gpu_offers_the_plan_and_tune(client: Editor):
    """The buttons run what needs no GPU, on parakern.gpuProfiles, and the command's result is it:
    the plan (the case of each point, as `bench --plan-only` prints it) and tune's ranking."""
    await configure(client, gpuProfiles=["h100", "t4"], bench={"data": {"N": 2048}, "sweep": {"B0": [8, 32], "B1": [32]}})
    uri, text = sample("matadd.c")
    client.open(uri, text)
    client.messages.clear()
    client.answers[:] = ["Show the plan"]
    plan = await client.command("parakern.bench", uri, "matadd:0")
    assert plan["status"] == "done" and plan["mode"] == "plan" and plan["schedule"] == "matadd:0"
    assert plan["summary"] == ["h100: case 1 at 2 of 2 points", "t4: case 1 at 2 of 2 points"]
    markdown = plan["markdown"]
    assert markdown.startswith("Points: N=2048 B0=[8, 32] B1=32\n")
    assert "## h100 (NVIDIA H100 SXM5 80GB)" in markdown and "## t4 (NVIDIA T4)" in markdown
    assert re.search(r"N=2048 B0=32 B1=32 +case 1  grid \(32, 64, 1\) block \(32, 32, 1\)", markdown), markdown
    await client.wait_for(lambda: client.messages, what="window/showMessage")
    assert client.messages[-1].message == \
        "parakern plan of matadd:0: h100: case 1 at 2 of 2 points; t4: case 1 at 2 of 2 points"

    client.answers[:] = ["Tune"]
    tuned = await client.command("parakern.bench", uri, "matadd:0")
    assert tuned["status"] == "done" and tuned["mode"] == "tune"
    assert [line.split(":")[0] for line in tuned["summary"]] == ["h100 at N=2048", "t4 at N=2048"]
    assert re.match(r"h100 at N=2048: case 1: B0=\d+ B1=\d+, [\d.]+ µs$", tuned["summary"][0]), tuned["summary"]
    assert "matadd:0 on h100 (NVIDIA H100 SXM5 80GB) at N=2048: tuned B0, B1" in tuned["markdown"]
    assert "rank  case  B0  B1    predicted" in tuned["markdown"]

    # a data parameter not given: the default, said; an unknown profile cannot be asked for (settings)
    await configure(client, gpuProfiles=["a100"], bench={})
    client.answers[:] = ["Tune"]
    tuned = await client.command("parakern.bench", uri, "matadd:0")
    assert tuned["status"] == "done" and tuned["defaulted"] == ["N"], tuned["message"]
    assert tuned["message"].startswith("parakern tune of matadd:0 (defaults: N=[1024]; set parakern.bench.data")
    await configure(client, gpuProfiles=["h100", "a100", "t4"])
    client.close(uri)


# ------------------------------------------------------------------ jobs: progress, cancel, faults


async def test_progress_is_reported_for_long_analyses(client: Editor):
    await configure(client, testFault={"function": "sleepy", "mode": "sleep", "seconds": 1.5})
    uri, text = fixture("sleepy.c")
    before = set(client.progress_reports)
    client.open(uri, text)
    await client.wait_diagnostics(uri, lambda ds: len(cases(ds)) >= 1, timeout=60)
    await client.wait_for(lambda: any(
        reports and reports[-1].kind == "end"
        for token, reports in client.progress_reports.items() if token not in before),
        timeout=10, what="progress end")
    (token,) = [t for t in client.progress_reports if t not in before]
    kinds = [r.kind for r in client.progress_reports[token]]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    assert "parakern" in client.progress_reports[token][0].title
    client.close(uri)
    await configure(client, testFault=None)


async def test_cancelling_a_long_request(client: Editor):
    await configure(client, testFault={"function": "sleepy", "mode": "sleep", "seconds": 4})
    uri, text = fixture("sleepy.c")
    text = text.replace("3.0f", "4.0f")      # a schedule not analysed yet
    client.open(uri, text)
    msg_id = "long-request-1"
    future = client.protocol.send_request(types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams(
        command="parakern.showCaseTree", arguments=[uri, "sleepy:0", "markdown"]), msg_id=msg_id)
    await asyncio.sleep(0.5)
    assert not future.done()
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    with pytest.raises(JsonRpcException) as error:
        await asyncio.wait_for(asyncio.wrap_future(future), 5)
    assert error.value.code == -32800      # RequestCancelled
    start = time.monotonic()
    hover = await client.hover(uri, 4, 6)          # alive, and answers at once meanwhile
    assert time.monotonic() - start < 1.0
    assert "case tree: analysing" in hover.contents.value and "**Grid**" in hover.contents.value
    client.close(uri)
    await configure(client, testFault=None)


async def test_change_during_analysis_drops_the_old_result(client: Editor):
    await configure(client, testFault={"function": "sleepy", "mode": "sleep", "seconds": 2})
    uri, text = fixture("sleepy.c")
    text = text.replace("3.0f", "5.0f")
    client.open(uri, text)
    await client.wait_diagnostics(uri, timeout=10)
    await asyncio.sleep(0.4)
    changed_at = time.monotonic()
    version = client.edit(uri, (9, 27), (9, 31), "6.0f")      # inside the schedule: a new case tree
    assert client.texts[uri].split("\n")[9].strip() == "y[i] = 6.0f * x[i] + y[i];"
    ds = await client.wait_diagnostics(uri, lambda ds: len(cases(ds)) >= 1, timeout=60)
    assert client.last(uri).version == version and cases(ds)
    stale = [p for t, p in client.published if t > changed_at + 0.05 and p.uri == uri
             and p.version == 1 and cases(p.diagnostics)]
    assert not stale, "a result for version 1 was published after version 2 arrived"
    client.close(uri)
    await configure(client, testFault=None)


@pytest.mark.parametrize("mode", ["crash", "raise"])
async def test_worker_crash_is_one_diagnostic_and_the_server_lives(client: Editor, mode: str):
    await configure(client, testFault={"function": "crashy", "mode": mode})
    uri, text = fixture("crashy.c")
    client.open(uri, text)
    ds = await client.wait_diagnostics(uri, lambda ds: any(d.code == "PK098" for d in ds), timeout=60)
    (crash,) = [d for d in ds if d.code == "PK098"]
    assert rng(crash) == (4, 4, 4, 17)
    assert ("analysis process died" if mode == "crash" else "internal error") in crash.message
    assert "Traceback" not in crash.message
    assert len(ds) == 1
    assert "analysis failed" in [lens.command.title for lens in await client.lenses(uri)]
    # A fresh worker analyses the next schedule.
    other_uri, other = fixture("sleepy.c")
    other = other.replace("3.0f", "7.0f" if mode == "crash" else "9.0f")
    client.open(other_uri, other)
    await client.wait_diagnostics(other_uri, lambda ds: len(cases(ds)) >= 1, timeout=60)
    client.close(uri)
    client.close(other_uri)
    await configure(client, testFault=None)


async def test_timeout_is_one_diagnostic(client: Editor):
    await configure(client, testFault={"function": "sleepy", "mode": "sleep", "seconds": 30},
                    timeLimitSeconds=1)
    uri, text = fixture("sleepy.c")
    text = text.replace("3.0f", "8.0f")
    client.open(uri, text)
    ds = await client.wait_diagnostics(uri, lambda ds: any(d.code == "PK097" for d in ds), timeout=30)
    assert len(ds) == 1 and rng(ds[0]) == (4, 4, 4, 17)
    assert "stopped after 1 s" in ds[0].message and "timeLimitSeconds" in ds[0].message
    client.close(uri)
    await configure(client, testFault=None, timeLimitSeconds=60)


async def test_settings_change_reanalyses_open_documents(client: Editor):
    uri, text = sample("matadd.c")
    client.open(uri, text)
    await client.wait_diagnostics(uri, lambda ds: len(cases(ds)) >= 1, timeout=90)
    client.messages.clear()
    await configure(client, caseDiagnostics=False, target="sm_99")
    await client.wait_diagnostics(uri, lambda ds: not cases(ds), version=client.versions[uri], timeout=10)
    await client.wait_for(lambda: client.messages, what="a warning about the bad target")
    assert "parakern.target" in client.messages[-1].message
    # With no settings in the notification the server pulls its section (workspace/configuration).
    client.set_configuration({"caseDiagnostics": True}, section="parakern")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await client.wait_diagnostics(uri, lambda ds: len(cases(ds)) >= 1, timeout=10)
    client.set_configuration({}, section="parakern")
    client.close(uri)


async def test_closing_clears_diagnostics(client: Editor):
    uri, text = sample("wrong/write_param.c")
    client.open(uri, text)
    await client.wait_diagnostics(uri, lambda ds: bool(ds), timeout=10)
    client.close(uri)
    await client.wait_for(lambda: client.published[-1][1].uri == uri and not client.published[-1][1].diagnostics,
                          what="empty diagnostics after close")


# ------------------------------------------------------------------ `parakern serve --tcp`


async def test_parakern_serve_over_tcp():
    import socket
    import subprocess

    from harness import make_editor as make
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "parakern", "serve", "--tcp", f"127.0.0.1:{port}"],
                               env=server_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    editor = make()
    try:
        for _ in range(200):
            try:
                await editor.start_tcp("127.0.0.1", port)
                break
            except OSError:
                assert process.poll() is None, process.stderr.read().decode()
                await asyncio.sleep(0.05)
        await editor.start_session("visual_studio_code", client_capabilities("visual-studio-code"),
                                   {"caseTrees": False})
        uri, text = sample("wrong/write_param.c")
        editor.open(uri, text)
        ds = await editor.wait_diagnostics(uri, lambda ds: any(d.code == "PK004" for d in ds), timeout=15)
        assert rng(ds[0]) == (6, 16, 6, 17)
        await editor.shutdown_async(None)
        editor.exit(None)
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
        await editor.stop()
