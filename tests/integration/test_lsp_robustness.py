"""The server against a hostile editor.

1 000 random edit sequences against the running server: every request is answered,
the server never dies, and the text it holds never drifts from the editor's.

Each sequence applies 1-4 incremental edits (insert / delete / replace of random
ranges, with C tokens, MetaFork keywords, generated-region markers, preprocessor
lines and non-ASCII text) to one of the samples, sometimes saves (which analyses at
once, bypassing the debounce), then asks hover, codeLens and codeAction at a random
place. Every 50 sequences (10 with case trees on) the document starts again from a
fresh sample.

To keep the test fast the first 700 sequences run with `caseTrees: false` (front-end
only: the worker processes are idle); the last 300 turn the case trees on with a
short time limit, mostly benign edits (whitespace, comments: schedules survive but
move) and a pause every 25 sequences, so jobs start, finish, are superseded and time
out while the edits go on.
The snippets include what an editor may send and a C file rarely holds: NULs, lone
surrogates, form feed, U+0085, U+2028 (none of them line breaks to LSP), lone CRs,
5 000-deep parentheses, long lines. Every 50 sequences the same text is opened fresh
(full sync) beside it: both must get the same front-end diagnostics (no desync).
At the end the server must still analyse a sample completely.

Then, through a raw JSON-RPC client (tests/lsp/wire.py): lone surrogates, requests with
params that do not fit, line separators above the code, didSave of a FIFO that is not
open, SIGTERM and SIGKILL of the server (no worker survives it), a 200-schedule file
asked for code actions by a client without resolve, CRLF documents, and generated
regions damaged by hand.
"""
from __future__ import annotations

import asyncio
import json
import os
import random
import re
import signal
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp"))
from harness import SAMPLES, SERVER, Editor, lines_of, make_editor, server_env  # noqa: E402

SEQUENCES = 1000
WITH_TREES = 300          # the last sequences run with case trees on
TIME_BUDGET = 150.0       # seconds: the loop stops early (and says so) past this
SOURCES = ["matadd.c", "matmul.c", "jacobi1d.c", "transpose.c", "polydiv.c", "saxpy.c",
           "wrong/one_bad_one_good.c", "wrong/syntax_error.c", "wrong/nested_schedule.c"]
QUICK = ["matadd.c", "matmul.c", "saxpy.c", "wrong/one_bad_one_good.c"]   # case trees in about 1 s
SNIPPETS = ["meta_for", "meta_schedule", "meta_schedule cache(a) {", "cache(a, c)", "{", "}", "(", ")",
            ";", "\n", " ", "é", "😀", "ü😀ß", "int x = 1;", "#define Q 3\n", "#ifdef X\n", "/*", "*/",
            "// parakern:begin f:0\n", "// parakern:end f:0\n", "a[i][j]", "B0", "0", "\t", "\"", "'",
            "for (int k = 0; k < s; ++k)", "meta_for (int z = 0; z < B; z++)", "return;", "x = y +",
            "\r\n", "\\\n", "assert(N % 2 == 0);", "__global__"]
# What an editor may send and C rarely holds (none of these but \r is a line break to LSP).
HOSTILE = ["\x00", "\udfff", "\ud800x", "\u2028", "\f", "\x85", "\u2029", "\r", "\v", "(" * 5000, ")" * 5000,
           "/* " + "x" * 20_000 + " */"]

pytestmark = [
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
    pytest.mark.timeout(300),
]


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, client_factory=make_editor, server_env=server_env()),
    scope="module")
async def client(lsp_client: Editor):
    await lsp_client.start_session("visual_studio_code", client_capabilities("visual-studio-code"),
                                   {"caseTrees": False, "timeLimitSeconds": 3})
    yield
    await lsp_client.shutdown_session()


def _position(rnd: random.Random, text: str) -> tuple[int, int]:
    """A random place, lines as LSP counts them (never between the "\r" and "\n" of a CRLF)."""
    lines = lines_of(text)
    line = rnd.randrange(len(lines))
    return line, rnd.randint(0, len(lines[line]))


def _ordered(a, b):
    return (a, b) if a <= b else (b, a)


def _benign_edit(rnd: random.Random, client: Editor, uri: str) -> None:
    """Whitespace or a comment at the start or end of a line: the schedules survive (and move)."""
    lines = lines_of(client.texts[uri])
    line = rnd.randrange(len(lines))
    if rnd.random() < 0.5:
        client.edit(uri, (line, 0), (line, 0), rnd.choice(["  ", "\t", "/* ü 😀 */ ", "\n"]))
    else:
        end = len(lines[line])
        client.edit(uri, (line, end), (line, end), rnd.choice([" // ü 😀", "\n", " "]))


def _random_edit(rnd: random.Random, client: Editor, uri: str, benign: float = 0.0) -> None:
    text = client.texts[uri]
    if rnd.random() < benign:
        _benign_edit(rnd, client, uri)
        return
    kind = rnd.choice(("insert", "insert", "delete", "replace"))
    start = _position(rnd, text)
    if kind == "insert":
        end = start
    else:
        # mostly short ranges on one line, sometimes across lines
        if rnd.random() < 0.8:
            line = lines_of(text)[start[0]]
            end = (start[0], min(len(line), start[1] + rnd.randint(0, 12)))
        else:
            end = _position(rnd, text)
        start, end = _ordered(start, end)
    pool = HOSTILE if rnd.random() < 0.15 else SNIPPETS
    new = "" if kind == "delete" else "".join(rnd.choice(pool) for _ in range(rnd.randint(1, 3)))
    client.edit(uri, start, end, new)


async def _requests(rnd: random.Random, client: Editor, uri: str) -> None:
    line, character = _position(rnd, client.texts[uri])
    doc = types.TextDocumentIdentifier(uri)
    hover, lenses, actions = await asyncio.wait_for(asyncio.gather(
        client.hover(uri, line, character),
        client.text_document_code_lens_async(types.CodeLensParams(doc)),
        client.actions(uri, line, character)), timeout=20)
    assert hover is None or isinstance(hover, types.Hover)
    assert isinstance(lenses, (list, tuple))
    assert actions is None or isinstance(actions, (list, tuple))
    for action in actions or ():
        assert action.title.startswith(("Insert comprehensive dispatcher", "Restore", "Delete")), action.title


def _frontend(ds) -> list:
    return sorted((d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)
                  for d in ds if d.code not in ("PK100", "PK097", "PK098"))


async def _same_as_a_fresh_open(client: Editor, uri: str) -> None:
    """No desync: the edited document and the same text sent whole get the same diagnostics."""
    fresh = (SAMPLES / "robustness-fresh.c").as_uri()
    client.open(fresh, client.texts[uri])
    edited = await client.wait_diagnostics(uri, timeout=30)
    whole = await client.wait_diagnostics(fresh, timeout=30)
    client.close(fresh)
    assert _frontend(edited) == _frontend(whole)


@pytest.mark.asyncio(loop_scope="module")
async def test_random_edit_sequences(client: Editor):
    rnd = random.Random(1_000)
    uri = (SAMPLES / "robustness-scratch.c").as_uri()   # never written: the editor holds the text
    start = time.monotonic()
    done = 0
    for sequence in range(SEQUENCES):
        if sequence == SEQUENCES - WITH_TREES:
            client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
                settings={"parakern": {"caseTrees": True}}))
        trees = sequence >= SEQUENCES - WITH_TREES
        if sequence % (10 if trees else 50) == 0:
            text = (SAMPLES / rnd.choice(QUICK if trees else SOURCES)).read_text()
            if uri in client.texts:
                client.replace_all(uri, text)
            else:
                client.open(uri, text)
        for _ in range(rnd.randint(1, 4)):
            _random_edit(rnd, client, uri, benign=0.95 if trees else 0.1)
        if rnd.random() < 0.25:
            client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
        await _requests(rnd, client, uri)
        if not trees and sequence % 50 == 49:
            await _same_as_a_fresh_open(client, uri)
        if trees and sequence % 25 == 24:
            await asyncio.sleep(2.5)     # let some jobs finish (or time out) between bursts
        done += 1
        if time.monotonic() - start > TIME_BUDGET:
            break
    elapsed = time.monotonic() - start
    published = [p for _, p in client.published if p.uri == uri]
    with_cases = sum(1 for p in published if any(d.code == "PK100" for d in p.diagnostics))
    print(sorted({d.code for p in published for d in p.diagnostics}))
    print(f"\n{done} random edit sequences in {elapsed:.1f} s; {len(published)} diagnostics "
          f"published, {with_cases} with case diagnostics")
    assert done >= 300, f"only {done} sequences in {TIME_BUDGET} s"
    assert client.error is None
    assert client._server is not None and client._server.returncode is None   # still running

    # Still healthy: a fresh sample gets its front-end and case diagnostics.
    client.replace_all(uri, (SAMPLES / "matadd.c").read_text())
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"parakern": {"timeLimitSeconds": 60}}))
    ds = await client.wait_diagnostics(uri, lambda ds: any(d.code == "PK100" for d in ds), timeout=90)
    assert not [d for d in ds if d.severity == types.DiagnosticSeverity.Error]
    client.close(uri)


# ------------------------------------------------------------------ a raw client

from harness import apply_client_edit  # noqa: E402
from wire import Wire, wait_gone  # noqa: E402


def _no_traceback(wire: Wire) -> None:
    for message in wire.raw_errors:
        assert "traceback" not in json.dumps(message).lower(), message


def _action_params(uri: str, line: int, character: int, diagnostics=()) -> dict:
    at = {"line": line, "character": character}
    return {"textDocument": {"uri": uri}, "range": {"start": at, "end": at},
            "context": {"diagnostics": list(diagnostics)}}


@pytest.fixture(scope="module")
def wire():
    server = Wire(options={"timeLimitSeconds": 60})
    yield server
    server.close()
    _no_traceback(server)


def test_lone_surrogates_are_analysed_and_every_request_answered(wire: Wire):
    """A \\udfff typed into a comment: diagnostics for that version, no -32603, no traceback."""
    uri = (SAMPLES / "surrogate.c").as_uri()
    text = (SAMPLES / "saxpy.c").read_text().replace("int i = b * B + t;", "int i = b * B + t; /* \udfff */")
    wire.open(uri, text)
    ds = wire.wait_published(uri, 1, lambda ds: any(d["code"] == "PK100" for d in ds), timeout=90)
    assert not [d for d in ds if d["severity"] == 1]
    line = lines_of(text).index("    meta_schedule {")
    actions = wire.request("textDocument/codeAction", _action_params(uri, line, 6), timeout=30)
    assert [a["title"] for a in actions] == ["Insert comprehensive dispatcher (saxpy:0)"]
    tree = wire.request("workspace/executeCommand", {"command": "parakern.showCaseTree",
                                                     "arguments": [uri, "saxpy:0"]}, timeout=60)
    assert "saxpy:0" in tree
    hover = wire.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                "position": {"line": line, "character": 6}})
    assert "saxpy:0" in hover["contents"]["value"]
    result = wire.request("workspace/executeCommand", {"command": "parakern.insertDispatcher",
                                                       "arguments": [uri, "saxpy:0"]}, timeout=120)
    assert result["applied"] is True
    wire.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert not wire.raw_errors


def test_every_request_gets_an_answer(wire: Wire):
    """Params that do not fit the method: -32602 (pygls dropped them: the editor waited forever)."""
    uri = (SAMPLES / "answers.c").as_uri()
    wire.open(uri, (SAMPLES / "matadd.c").read_text())
    wire.wait_published(uri, 1)
    bad = [("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}}),
           ("textDocument/hover", {"textDocument": {"uri": uri}}),
           ("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": "everything"}),
           ("textDocument/codeLens", {}),
           ("workspace/executeCommand", {"command": "parakern.insertDispatcher", "arguments": [1, None]}),
           ("workspace/executeCommand", {"command": "parakern.nothing", "arguments": []}),
           ("textDocument/noSuchMethod", {})]
    for method, params in bad:
        message = wire.answer(wire.ask(method, params), timeout=10)
        assert message is not None, f"{method} {params} got no answer"
        if "error" in message:
            assert message["error"]["code"] in (-32602, -32601), message
    assert [m["error"]["code"] for m in wire.raw_errors[:4]] == [-32602, -32602, -32602, -32602]
    # the server goes on
    assert wire.request("textDocument/codeLens", {"textDocument": {"uri": uri}}) is not None
    wire.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


@pytest.mark.parametrize("separator", ["\u2028", "\f", "\x85"])
def test_line_separators_above_the_code_shift_nothing(wire: Wire, separator: str):
    """Not line breaks to LSP: hover still finds the keyword, an incremental edit lands on its
    line (a write to a parameter is PK004 there, not a PK001 on the next line)."""
    uri = (SAMPLES / "separators.c").as_uri()
    text = f"/* a{separator}b */\n" + (SAMPLES / "saxpy.c").read_text()
    wire.open(uri, text)
    wire.wait_published(uri, 1)
    lines = lines_of(text)
    keyword = lines.index("    meta_schedule {")
    hover = wire.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                "position": {"line": keyword, "character": 8}})
    assert hover is not None and "saxpy:0" in hover["contents"]["value"]
    target = next(k for k, line in enumerate(lines) if "y[i] = alpha" in line)
    column = lines[target].index("y[i]")
    wire.change(uri, 2, [{"range": {"start": {"line": target, "character": column},
                                    "end": {"line": target, "character": column}}, "text": "n = 1; "}])
    ds = wire.wait_published(uri, 2)
    assert [(d["code"], d["range"]["start"]["line"]) for d in ds if d["severity"] == 1] == [("PK004", target)]
    wire.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


def test_did_save_of_a_document_that_is_not_open_reads_nothing(wire: Wire, tmp_path):
    """pygls read the path from disk: a FIFO blocked the server for good."""
    fifo = tmp_path / "pipe.c"
    os.mkfifo(fifo)
    uri = (SAMPLES / "still-answers.c").as_uri()
    wire.open(uri, (SAMPLES / "saxpy.c").read_text())
    wire.wait_published(uri, 1)
    wire.notify("textDocument/didSave", {"textDocument": {"uri": fifo.as_uri()}})
    wire.notify("textDocument/didChange", {"textDocument": {"uri": fifo.as_uri(), "version": 2},
                                           "contentChanges": [{"text": "x"}]})
    started = time.monotonic()
    assert wire.request("textDocument/codeLens", {"textDocument": {"uri": uri}}, timeout=10) is not None
    assert time.monotonic() - started < 5
    wire.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


def test_a_crlf_document_gets_a_crlf_region(wire: Wire):
    uri = (SAMPLES / "crlf.c").as_uri()
    text = (SAMPLES / "saxpy.c").read_text().replace("\n", "\r\n")
    wire.open(uri, text)
    wire.wait_published(uri, 1)
    applied = len(wire.applied)
    result = wire.request("workspace/executeCommand", {"command": "parakern.insertDispatcher",
                                                       "arguments": [uri, "saxpy:0"]}, timeout=120)
    assert result["applied"] is True
    (edit,) = wire.applied[applied]["edit"]["changes"][uri]
    new = edit["newText"]
    assert re.search(r"\r\n// parakern:begin saxpy:0 from=[0-9a-f]{12}\r\n", new)
    assert new.replace("\r\n", "").count("\n") == 0
    wire.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


def _apply(text: str, edit: dict) -> str:
    r = edit["range"]
    return apply_client_edit(text, types.Range(types.Position(**r["start"]), types.Position(**r["end"])),
                             edit["newText"], "utf-16")


def test_a_region_that_lost_its_end_marker(wire: Wire):
    """jacobi1d: the generated CUDA stays out of the front-end (the schedule does not vanish),
    one PK019 with quick fixes, and inserting again replaces the region: never two copies."""
    uri = (SAMPLES / "damaged.c").as_uri()
    text = (SAMPLES / "jacobi1d.c").read_text() + "\nint after(void) { return 0; }\n"
    wire.open(uri, text)
    wire.wait_published(uri, 1, lambda ds: any(d["code"] == "PK100" for d in ds), timeout=120)
    applied = len(wire.applied)
    assert wire.request("workspace/executeCommand", {"command": "parakern.insertDispatcher",
                                                     "arguments": [uri, "jacobi1d:0"]}, timeout=120)["applied"]
    (edit,) = wire.applied[applied]["edit"]["changes"][uri]
    once = _apply(text, edit)
    marker = lines_of(once).index("// parakern:end jacobi1d:0")
    damaged = once.replace("// parakern:end jacobi1d:0\n", "")
    wire.change(uri, 2, [{"text": damaged}])
    ds = wire.wait_published(uri, 2, lambda ds: any(d["code"] == "PK100" for d in ds), timeout=120)
    assert sorted({d["code"] for d in ds}) == ["PK019", "PK100"], [(d["code"], d["message"]) for d in ds]
    (warning,) = [d for d in ds if d["code"] == "PK019"]
    line = warning["range"]["start"]["line"]
    actions = wire.request("textDocument/codeAction", _action_params(uri, line, 3, [warning]), timeout=30)
    fixes = {a["title"]: a for a in actions if a["kind"] == "quickfix"}
    restore = fixes["Restore '// parakern:end jacobi1d:0' (repair the generated region)"]
    (repair,) = restore["edit"]["changes"][uri]
    assert _apply(damaged, repair) == once and lines_of(once)[marker] == "// parakern:end jacobi1d:0"
    assert "Delete the generated region of jacobi1d:0" in fixes
    applied = len(wire.applied)
    assert wire.request("workspace/executeCommand", {"command": "parakern.insertDispatcher",
                                                     "arguments": [uri, "jacobi1d:0"]}, timeout=120)["applied"]
    (edit,) = wire.applied[applied]["edit"]["changes"][uri]
    again = _apply(damaged, edit)
    assert again == once and again.count("// parakern:begin") == 1 and again.count("// parakern:end") == 1
    wire.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_no_process_outlives_the_server(signum):
    """The analysis workers (and multiprocessing's resource tracker) end with the server
    whatever ends it: they were orphaned, ~175 MB each, after SIGTERM or SIGKILL."""
    server = Wire(options={"timeLimitSeconds": 60})
    uri = (SAMPLES / "signals.c").as_uri()
    server.open(uri, (SAMPLES / "matadd.c").read_text())
    server.wait_published(uri, 1, lambda ds: any(d["code"] == "PK100" for d in ds), timeout=120)
    children = server.children()
    assert children
    server.kill(signum)
    assert wait_gone(children, 5) == []


@pytest.mark.parametrize("ending", ["eof", "exit"])
def test_an_editor_that_goes_away_mid_analysis_leaves_a_quiet_exit(tmp_path, ending):
    """stdin closed (the editor crashed) or exit without shutdown while a case tree was being
    computed: 'RuntimeError: Event loop is closed' and 'Task was destroyed but it is pending!' on
    stderr, exit status 1 (pygls shuts the server down after its event loop has closed)."""
    log = (tmp_path / "stderr").open("wb")
    server = Wire(options={"timeLimitSeconds": 60}, stderr=log)
    uri = (SAMPLES / "gone.c").as_uri()
    server.open(uri, (SAMPLES / "matmul.c").read_text())
    time.sleep(1.0)
    children = server.children()
    if ending == "exit":
        server.notify("exit", None)
    server.process.stdin.close()
    assert server.process.wait(timeout=60) == (0 if ending == "eof" else 1)   # exit before shutdown: 1 (LSP)
    err = (tmp_path / "stderr").read_text()
    assert "Traceback" not in err and "Task was destroyed" not in err and "Event loop is closed" not in err, err
    assert wait_gone(children, 5) == []


def test_a_clients_bad_request_is_one_line_on_stderr(tmp_path):
    """A negative position or an unknown command got its -32602 answer, and pages of an
    ExceptionGroup traceback on stderr each (editors show stderr in their log)."""
    log = (tmp_path / "stderr").open("wb")
    server = Wire(stderr=log)
    uri = (SAMPLES / "bad.c").as_uri()
    server.open(uri, (SAMPLES / "saxpy.c").read_text())
    hover = server.ask("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}})
    command = server.ask("workspace/executeCommand", {"command": "no.such.command", "arguments": []})
    assert server.answer(hover, 60)["error"]["code"] == -32602
    assert server.answer(command, 60)["error"]["code"] == -32602
    server.close()
    err = (tmp_path / "stderr").read_text()
    assert "Traceback" not in err, err
    assert "Position.line should be in range" in err and "'no.such.command' is not defined" in err
    assert len([line for line in err.splitlines() if " ERROR " in line]) == len(err.splitlines()), err


def test_a_request_after_shutdown_is_answered_invalid_request():
    """pygls dropped it (logging 'No more requests!'), and the client waited for ever."""
    server = Wire()
    uri = (SAMPLES / "late.c").as_uri()
    server.open(uri, (SAMPLES / "saxpy.c").read_text())
    assert server.request("shutdown", None, timeout=30) is None
    late = server.answer(server.ask("textDocument/hover", {"textDocument": {"uri": uri},
                                                           "position": {"line": 0, "character": 0}}), 30)
    assert late is not None and late["error"]["code"] == -32600
    server.notify("exit", None)
    assert server.process.wait(10) == 0


def test_a_plain_text_client_gets_its_hover_in_plain_text():
    """kind plaintext was sent with markdown in it: **bold**, backticks, |---| tables, <sub>."""
    from wire import CAPABILITIES
    capabilities = json.loads(json.dumps(CAPABILITIES))
    capabilities["textDocument"]["hover"] = {"contentFormat": ["plaintext"]}
    server = Wire(capabilities=capabilities)
    uri = (SAMPLES / "plain.c").as_uri()
    text = (SAMPLES / "saxpy.c").read_text()
    server.open(uri, text)
    server.wait_published(uri, 1, lambda ds: any(d["code"] == "PK100" for d in ds), timeout=120)
    line = text.split("\n").index(next(t for t in text.split("\n") if "meta_schedule" in t))
    hover = server.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {
        "line": line, "character": text.split("\n")[line].index("meta_schedule") + 2}}, timeout=60)
    server.close()
    contents = hover["contents"]
    assert contents["kind"] == "plaintext" and "case 1" in contents["value"] and "  constraints: " in contents["value"]
    assert not any(mark in contents["value"] for mark in ("**", "`", "|---", "<sub>", "\\|")), contents["value"]


def test_code_actions_on_200_schedules_answer_at_once():
    """A client without code-action resolve (Neovim 0.7): the action carries the insert
    command instead of an edit computed behind 200 analyses (it took two minutes)."""
    server = Wire(options={"timeLimitSeconds": 60})
    try:
        uri = (SAMPLES / "many.c").as_uri()
        body = (SAMPLES / "saxpy.c").read_text().split("\n", 2)[2]
        text = "\n".join(body.replace("saxpy", f"saxpy{k}") for k in range(200))
        server.open(uri, text)
        server.wait_published(uri, 1, timeout=60)
        line = [k for k, line in enumerate(lines_of(text)) if "meta_schedule" in line][150]
        started = time.monotonic()
        actions = server.request("textDocument/codeAction", _action_params(uri, line, 6), timeout=60)
        elapsed = time.monotonic() - started
        (action,) = actions
        assert action["command"]["arguments"] == [uri, "saxpy150:0"] and elapsed < 1.0, elapsed
        applied = len(server.applied)
        result = server.request("workspace/executeCommand", action["command"], timeout=120)
        assert result["applied"] is True
        (edit,) = server.applied[applied]["edit"]["changes"][uri]
        assert "// parakern:begin saxpy150:0" in edit["newText"]
    finally:
        server.kill()
    _no_traceback(server)
