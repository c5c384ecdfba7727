"""1 000 random edit sequences against the running server: every request is answered,
the server never dies.

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
At the end the server must still analyse a sample completely.
"""
from __future__ import annotations

import asyncio
import random
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

sys.path.insert(0, str(Path(__file__).resolve().parent / "lsp"))
from harness import SAMPLES, SERVER, Editor, make_editor, server_env  # noqa: E402

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

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
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
    """A random place; never between the "\r" and "\n" of a CRLF (LSP has no such place)."""
    lines = text.split("\n")
    line = rnd.randrange(len(lines))
    return line, rnd.randint(0, len(lines[line].rstrip("\r")))


def _ordered(a, b):
    return (a, b) if a <= b else (b, a)


def _benign_edit(rnd: random.Random, client: Editor, uri: str) -> None:
    """Whitespace or a comment at the start or end of a line: the schedules survive (and move)."""
    lines = client.texts[uri].split("\n")
    line = rnd.randrange(len(lines))
    if rnd.random() < 0.5:
        client.edit(uri, (line, 0), (line, 0), rnd.choice(["  ", "\t", "/* ü 😀 */ ", "\n"]))
    else:
        end = len(lines[line].rstrip("\r"))
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
            line = text.split("\n")[start[0]].rstrip("\r")
            end = (start[0], min(len(line), start[1] + rnd.randint(0, 12)))
        else:
            end = _position(rnd, text)
        start, end = _ordered(start, end)
    new = "" if kind == "delete" else "".join(rnd.choice(SNIPPETS) for _ in range(rnd.randint(1, 3)))
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
        assert action.title.startswith("Insert comprehensive dispatcher")


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
