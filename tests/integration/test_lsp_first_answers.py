"""A hover or a code action sent right after didOpen, before the front end has parsed the
document, waits for that parse and answers (issue 39: hover `null` and code actions `[]`
in the first second). Through `parakern serve` with pytest-lsp, as Neovim 0.11 and as
VS Code (one server per profile; every test opens a document the server has not seen)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp"))
from harness import ROOT, SERVER, Editor, lines_of, make_editor, sample, server_env  # noqa: E402

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
    pytest.mark.timeout(180),
]

ACTION = "Insert comprehensive dispatcher"


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, client_factory=make_editor, server_env=server_env()),
    scope="module", params=["neovim", "visual_studio_code"])
async def client(lsp_client: Editor, request):
    await lsp_client.start_session(request.param, client_capabilities(request.param),
                                   {"timeLimitSeconds": 60, "gpuProfiles": ["h100"]})
    yield
    await lsp_client.shutdown_session()


def many(count: int, tag: str) -> str:
    """`count` functions of one schedule each (saxpy renamed): its parse takes a second or
    more, longer than a code action waits for a newer version's schedules (0.3 s)."""
    body = (ROOT / "samples" / "saxpy.c").read_text().split("\n", 2)[2]
    return f"// {tag}\n" + "\n".join(body.replace("saxpy", f"saxpy{k}") for k in range(count))


def keyword(text: str, nth: int = 0) -> tuple[int, int]:
    """(line, column) inside the nth `meta_schedule` keyword."""
    rows = [(k, line.index("meta_schedule")) for k, line in enumerate(lines_of(text)) if line.lstrip().startswith("meta_schedule")]
    line, col = rows[nth]
    return line, col + 3


async def test_a_hover_right_after_did_open_waits_for_the_parse(client: Editor):
    uri, text = sample("jacobi1d.c")
    uri = uri.replace("jacobi1d.c", f"first_hover_{client.profile}.c")
    text = text.replace("(s * B);", f"(s * B);  // first hover {client.profile}", 1)
    client.open(uri, text)
    hover = await client.hover(uri, *keyword(text))       # sent before the server parsed it
    assert hover is not None, "the hover before the first parse answered null"
    assert hover.contents.value.startswith("**parakern** · `jacobi1d:0`"), hover.contents.value
    client.close(uri)


async def test_a_hover_on_a_long_file_right_after_did_open(client: Editor):
    text = many(60, f"hover {client.profile}")
    uri = (ROOT / "samples" / f"first_hover_many_{client.profile}.c").as_uri()
    client.open(uri, text)
    hover = await client.hover(uri, *keyword(text, 41))
    assert hover is not None and "`saxpy41:0`" in hover.contents.value, hover
    client.close(uri)


async def test_a_code_action_right_after_did_open_waits_for_the_parse(client: Editor):
    text = many(60, f"action {client.profile}")
    uri = (ROOT / "samples" / f"first_action_{client.profile}.c").as_uri()
    client.open(uri, text)
    actions = await client.actions(uri, *keyword(text, 17))    # sent before the server parsed it
    titles = [a.title for a in actions or ()]
    assert titles == [f"{ACTION} (saxpy17:0)"], titles
    # and the action is the one for that version: resolved (VS Code) or its command (Neovim)
    (action,) = actions
    if action.edit is None and action.command is None:
        action = await client.code_action_resolve_async(action)
    if action.edit is not None:
        (change,) = action.edit.document_changes or [types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=1),
            edits=action.edit.changes[uri])]
        assert "// parakern:begin saxpy17:0" in change.edits[0].new_text
    else:
        assert action.command.arguments == [uri, "saxpy17:0"]
    client.close(uri)
