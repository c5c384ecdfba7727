"""An editor stand-in for the end-to-end tests: a pytest-lsp client that keeps every
document's text (applying incremental edits and workspace edits the way an editor
does, in the negotiated position encoding) and records every publishDiagnostics."""
from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SAMPLES = ROOT / "samples"
SERVER = [sys.executable, "-m", "parakern.lsp"]


def server_env(**extra: str) -> dict:
    env = dict(os.environ)
    env["PARAKERN_LSP_TEST_HOOKS"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    env.update(extra)
    return env


# ------------------------------------------------------------------ units

# An editor's lines end at \r\n, \r or \n, nothing else (LSP): not at form feed, U+2028…
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def lines_of(text: str) -> list[str]:
    return LINE_BREAK.split(text)


def units(text: str, encoding: str) -> int:
    """Code units of `text`; a lone surrogate (an editor may hold one) counts as one code point."""
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def to_client(text: str, line: int, character: int, encoding: str) -> types.Position:
    lines = lines_of(text)
    return types.Position(line=line, character=units(lines[line][:character], encoding))


def from_client(text: str, position: types.Position, encoding: str) -> tuple[int, int]:
    lines = lines_of(text)
    if position.line >= len(lines):
        return len(lines) - 1, len(lines[-1])
    line = lines[position.line]
    count = 0
    for k, ch in enumerate(line):
        if count >= position.character:
            return position.line, k
        count += units(ch, encoding)
    return position.line, len(line)


def offset(text: str, line: int, character: int) -> int:
    starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]
    if line >= len(starts):
        return len(text)
    return starts[line] + min(character, len(lines_of(text)[line]))


def apply_client_edit(text: str, rng: types.Range, new_text: str, encoding: str) -> str:
    s = offset(text, *from_client(text, rng.start, encoding))
    e = offset(text, *from_client(text, rng.end, encoding))
    return text[:s] + new_text + text[e:]


# ------------------------------------------------------------------ the client


class Editor(LanguageClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.published: list[tuple[float, types.PublishDiagnosticsParams]] = []
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.applied: list[types.ApplyWorkspaceEditParams] = []
        self.lens_refreshes = 0
        self.encoding = "utf-16"
        self.profile = ""
        self.result: "types.InitializeResult | None" = None
        self.opened_at: dict[str, int] = {}
        self.asked: list[types.ShowMessageRequestParams] = []   # window/showMessageRequest, in order
        self.answers: list["str | None"] = []    # the button titles it answers with, in order (then: closed)

    async def start_session(self, profile: str, capabilities, options: dict) -> types.InitializeResult:
        self.profile = profile
        self.result = await self.initialize_session(types.InitializeParams(
            capabilities=capabilities, initialization_options=options, root_uri=ROOT.as_uri()))
        self.encoding = str(self.result.capabilities.position_encoding or "utf-16")
        return self.result

    # documents
    def open(self, uri: str, text: str) -> None:
        self.texts[uri], self.versions[uri] = text, 1
        self.opened_at[uri] = len(self.published)     # earlier sessions of this uri do not count
        self.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="c", version=1, text=text)))

    def close(self, uri: str) -> None:
        self.texts.pop(uri, None)
        self.versions.pop(uri, None)
        self.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))

    def replace_all(self, uri: str, text: str) -> int:
        self.texts[uri] = text
        self.versions[uri] += 1
        self.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            [types.TextDocumentContentChangeWholeDocument(text=text)]))
        return self.versions[uri]

    def edit(self, uri: str, start: tuple[int, int], end: tuple[int, int], new_text: str) -> int:
        """An incremental change; start/end in code points (converted to the encoding)."""
        text = self.texts[uri]
        rng = types.Range(start=to_client(text, *start, self.encoding), end=to_client(text, *end, self.encoding))
        self.texts[uri] = text[:offset(text, *start)] + new_text + text[offset(text, *end):]
        self.versions[uri] += 1
        self.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            [types.TextDocumentContentChangePartial(range=rng, text=new_text)]))
        return self.versions[uri]

    def apply_workspace_edit(self, edit: types.WorkspaceEdit) -> None:
        changes: list[tuple[str, list]] = []
        for change in edit.document_changes or ():
            changes.append((change.text_document.uri, list(change.edits)))
        for uri, edits in (edit.changes or {}).items():
            changes.append((uri, list(edits)))
        for uri, edits in changes:
            text = self.texts[uri]
            # last first, so earlier ranges stay valid
            for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
                text = apply_client_edit(text, e.range, e.new_text, self.encoding)
            self.replace_all(uri, text)

    # waiting
    def last(self, uri: str, version: "int | None" = None):
        for _, params in reversed(self.published[self.opened_at.get(uri, 0):]):
            if params.uri == uri and (version is None or params.version == version):
                return params
        return None

    async def wait_diagnostics(self, uri: str, predicate=lambda ds: True, timeout: float = 60.0,
                               version: "int | None" = None) -> list[types.Diagnostic]:
        """The diagnostics of the document's current version once `predicate` holds."""
        deadline = time.monotonic() + timeout
        while True:
            want = self.versions.get(uri) if version is None else version
            params = self.last(uri, want)
            if params is not None and predicate(list(params.diagnostics)):
                return list(params.diagnostics)
            if time.monotonic() > deadline:
                shown = [(d.code, d.message) for d in (params.diagnostics if params else ())]
                raise AssertionError(f"no matching diagnostics for {uri} v{want} in {timeout} s: {shown}")
            await asyncio.sleep(0.02)

    async def wait_for(self, predicate, timeout: float = 30.0, what: str = "condition"):
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            await asyncio.sleep(0.02)

    # requests
    async def hover(self, uri: str, line: int, character: int):
        """Hover at a code-point position."""
        pos = to_client(self.texts[uri], line, character, self.encoding)
        return await self.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), pos))

    async def lenses(self, uri: str) -> list[types.CodeLens]:
        lenses = await self.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
        resolved = []
        for lens in lenses or ():
            if lens.command is None:
                lens = await self.code_lens_resolve_async(lens)
            resolved.append(lens)
        return resolved

    async def actions(self, uri: str, line: int, character: int, diagnostics=(), only=None):
        pos = to_client(self.texts[uri], line, character, self.encoding)
        return await self.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(uri), types.Range(pos, pos),
            types.CodeActionContext(diagnostics=list(diagnostics), only=only)))

    async def command(self, name: str, *arguments):
        return await self.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=list(arguments)))


def _publish(client: Editor, params: types.PublishDiagnosticsParams):
    client.published.append((time.monotonic(), params))
    client.diagnostics[params.uri] = params.diagnostics


def _apply_edit(client: Editor, params: types.ApplyWorkspaceEditParams):
    client.applied.append(params)
    client.apply_workspace_edit(params.edit)
    return types.ApplyWorkspaceEditResult(applied=True)


def _message_request(client: Editor, params: types.ShowMessageRequestParams):
    client.asked.append(params)
    title = client.answers.pop(0) if client.answers else None
    return None if title is None else types.MessageActionItem(title=title)


def _refresh(client: Editor, params):
    client.lens_refreshes += 1
    return None


def make_editor() -> Editor:
    client = Editor(converter_factory=default_converter)
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _publish
    features[types.WORKSPACE_APPLY_EDIT] = _apply_edit
    features[types.WORKSPACE_CODE_LENS_REFRESH] = _refresh
    features[types.WINDOW_SHOW_MESSAGE_REQUEST] = _message_request
    register_lsp_features(client, features)
    return client


def sample(name: str) -> tuple[str, str]:
    """(uri, text) of samples/NAME (or samples/wrong/NAME)."""
    path = SAMPLES / name
    return path.as_uri(), path.read_text()
