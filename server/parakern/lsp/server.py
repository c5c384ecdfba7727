"""pygls 2 handlers: LSP in, LSP out. Everything else is in engine.py (state, jobs,
and what it delegates); positions are converted with the document's codec here.

    parakern serve               stdio
    parakern serve --tcp HOST:PORT
"""
from __future__ import annotations

import atexit
import logging
import os
import re
import signal
import sys
import threading
import time
from typing import Any, NoReturn, Optional

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from parakern.lsp.benchcommand import OFFERS
from parakern.lsp.documents import AnalysisError
from parakern.lsp.engine import Engine
from parakern.lsp.positions import from_client_position, from_client_range, line_text, to_client_range
from parakern.lsp.ranges import overlaps
from parakern.lsp.settings import section_of
from parakern.lsp.summary import CASE_CODE, SOURCE, DiagInfo
from parakern.lsp.textdocument import LspWorkspace
from parakern.lsp.texts import plain_text

log = logging.getLogger("parakern.lsp")
VERSION = "0.1.0"

CMD_INSERT = "parakern.insertDispatcher"
CMD_BENCH = "parakern.bench"
CMD_TREE = "parakern.showCaseTree"
SYNC_KIND = types.TextDocumentSyncKind.Incremental
EXIT_DEADLINE = 1.0     # seconds after exit (or the connection's end) by which the process has ended
PARENT_POLL = 0.5       # seconds between two looks at the editor's process (initialize's processId)

_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "information": types.DiagnosticSeverity.Information, "hint": types.DiagnosticSeverity.Hint}
_MESSAGE = {"error": types.MessageType.Error, "warning": types.MessageType.Warning,
            "info": types.MessageType.Info, "log": types.MessageType.Log}


class ParakernProtocol(LanguageServerProtocol):
    """pygls' protocol, made to answer every request: params that do not fit the method
    get -32602 (pygls drops the message), and no error response carries a traceback."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        """UTF-8 whenever the client offers it (Neovim >= 0.11), else pygls' choice
        (the client's first supported encoding, UTF-16 when it lists none)."""
        general = params.capabilities.general
        if general is not None and general.position_encodings:
            encodings = list(general.position_encodings)
            if types.PositionEncodingKind.Utf8 in encodings:
                encodings.remove(types.PositionEncodingKind.Utf8)
                general.position_encodings = [types.PositionEncodingKind.Utf8] + encodings
        result = yield from super().lsp_initialize(params)
        # Documents with LSP's line breaks (pygls' split at form feed, U+2028, …).
        self._workspace = LspWorkspace.like(self._workspace, SYNC_KIND)
        return result

    def structure_message(self, data):
        if isinstance(data, dict) and "error" in data and "method" not in data:
            self._result_types.pop(data.get("id"), None)   # pygls forgets it for a result only
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if not (isinstance(data, dict) and "id" in data and "method" in data):
                raise       # a notification or a response: nothing to answer
            why = exc.message
            try:       # which field, in cattrs' words (lsprotocol's converter is cattrs)
                from cattrs import transform_error
                why = "; ".join(transform_error(exc.__cause__)) or why
            except Exception:
                pass
            self._send_response(data["id"], error=types.ResponseError(
                code=exc.code, message=f"{data.get('method')}: {why}"))
            return _ANSWERED

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        """pygls' own, but the handler's future leaves pygls' table of requests under way once
        it is done: pygls removes a request's when it answers it, never a notification's nor
        that of a command's own handler (the server grew by about 1 KB per edit, for good)."""
        def done(future) -> None:
            if self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]
            callback(future)

        super()._execute_handler(msg_id, handler, done, args, kwargs)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args):
        """pygls' own, but cancelling the requests under way over a copy of their table: a
        cancelled command's callback removes it from the table pygls iterated, and shutdown
        failed (-32603 'dictionary changed size during iteration') while a command ran."""
        try:
            if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
                yield user_handler, args, None
            current = self.msg_id
            for msg_id, future in list(self._request_futures.items()):
                if msg_id != current and not future.done():
                    future.cancel()
        finally:
            self._shutdown = True
        return None

    def handle_message(self, message):
        if message is _ANSWERED:
            return
        if self._shutdown and getattr(message, "id", None) is not None and getattr(message, "method", None):
            # LSP: a request after shutdown gets InvalidRequest; pygls drops it (the client waits)
            self._send_response(message.id, error=types.ResponseError(
                code=types.ErrorCodes.InvalidRequest, message=f"{message.method}: the server is shutting down"))
            return
        super().handle_message(message)

    def _send_response(self, msg_id, result=None, error=None):
        if error is not None and isinstance(error.data, dict) and "traceback" in error.data:
            log.error("request %s failed: %s\n%s", msg_id, error.message, "".join(error.data["traceback"]))
            error = types.ResponseError(code=error.code, message=error.message)   # never a traceback
        super()._send_response(msg_id, result, error)


_ANSWERED = object()     # a request already answered with an error (its params did not fit)


class ParakernServer(LanguageServer):
    def __init__(self):
        super().__init__("parakern", VERSION, protocol_cls=ParakernProtocol,
                         text_document_sync_kind=SYNC_KIND)
        self.engine = Engine(_Client(self))
        self.pending_warnings: list[str] = []
        self.exit_status: "int | None" = None   # 0 once shut down; 1 on exit without a shutdown

    def shutdown(self):
        """Also when the connection ends without a shutdown request: stop the workers."""
        self.engine.close()
        super().shutdown()

    # capabilities of the client
    def cap(self, path: str, default=None):
        obj: Any = self.client_capabilities
        for part in path.split("."):
            obj = getattr(obj, part, None) if obj is not None else None
        return default if obj is None else obj

    def document(self, uri: str):
        """The open document of `uri`, or None: never read from disk (pygls would)."""
        return self.workspace.opened(uri)

    def diagnostic(self, document, uri: str, d: DiagInfo) -> types.Diagnostic:
        related = None
        if d.related and self.cap("text_document.publish_diagnostics.related_information", False):
            related = [types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri, range=to_client_range(document, r)), message=m)
                for r, m in d.related]
        return types.Diagnostic(range=to_client_range(document, d.range), message=d.message,
                                severity=_SEVERITY.get(d.severity, types.DiagnosticSeverity.Error),
                                code=d.code, source=SOURCE, related_information=related)


class _Client:
    """engine.Client over the pygls server."""

    def __init__(self, ls: ParakernServer):
        self.ls = ls

    def publish(self, uri: str, version: Optional[int], diagnostics: list) -> None:
        document = self.ls.document(uri) if diagnostics else None
        if diagnostics and document is None:
            return        # closed meanwhile (its close published an empty list)
        items = [self.ls.diagnostic(document, uri, d) for d in diagnostics]
        self.ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=version))

    def refresh_lenses(self) -> None:
        if self.ls.cap("workspace.code_lens.refresh_support", False):
            self.ls.workspace_code_lens_refresh(None)

    def progress_supported(self) -> bool:
        return bool(self.ls.cap("window.work_done_progress", False))

    async def progress_begin(self, token: str, title: str, message: str, cancellable: bool = False) -> bool:
        try:
            await self.ls.work_done_progress.create_async(token)
        except Exception as exc:   # the client refused: no progress, nothing else changes
            log.info("work done progress refused: %s", exc)
            return False
        self.ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title=title, message=message, percentage=0, cancellable=cancellable))
        return True

    def progress_report(self, token: str, message: str, percentage: int) -> None:
        self.ls.work_done_progress.report(token, types.WorkDoneProgressReport(
            message=message, percentage=percentage))

    def progress_end(self, token: str, message: str) -> None:
        self.ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
        self.ls.work_done_progress.tokens.pop(token, None)

    def progress_cancelled(self, token: str) -> bool:
        future = self.ls.work_done_progress.tokens.get(token)
        return future is not None and future.cancelled()

    def show_message(self, kind: str, text: str) -> None:
        self.ls.window_show_message(types.ShowMessageParams(
            type=_MESSAGE.get(kind, types.MessageType.Info), message=text))


server = ParakernServer()


def _file_of(uri: str) -> str:
    try:
        return to_fs_path(uri) or uri
    except Exception:
        return uri


# ------------------------------------------------------------------ lifecycle


@server.feature(types.INITIALIZE)
def initialize(ls: ParakernServer, params: types.InitializeParams):
    _watch_parent(params.process_id)
    options = params.initialization_options
    if isinstance(options, dict):
        section = section_of(options)
        ls.pending_warnings += ls.engine.update_settings(section if section is not None else options)


@server.feature(types.INITIALIZED)
def initialized(ls: ParakernServer, params: types.InitializedParams):
    ls.engine.start()
    for warning in ls.pending_warnings:
        ls.engine.client.show_message("warning", warning)
    ls.pending_warnings.clear()


@server.feature(types.SHUTDOWN)
def shutdown(ls: ParakernServer, params):
    ls.exit_status = 0
    ls.engine.close()


@server.feature(types.EXIT)
def exit_(ls: ParakernServer, params):
    """LSP: exit after a shutdown request ends with status 0, without one with 1 (pygls's own
    sys.exit of that status is caught by its start_io, so `run` returns it). The workers are
    stopped now, and the process ends within EXIT_DEADLINE whatever still runs in it."""
    if ls.exit_status is None:
        ls.exit_status = 1
    ls.engine.close()
    _end_within(EXIT_DEADLINE)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: ParakernServer, params: types.DidChangeConfigurationParams):
    section = section_of(params.settings)
    if section is None and ls.cap("workspace.configuration", False):
        try:
            (section,) = await ls.workspace_configuration_async(types.ConfigurationParams(
                items=[types.ConfigurationItem(section="parakern")]))
        except Exception as exc:
            log.info("workspace/configuration failed: %s", exc)
            section = None
    if section is None:
        return
    for warning in ls.engine.update_settings(section):
        ls.engine.client.show_message("warning", warning)


# ------------------------------------------------------------------ documents


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: ParakernServer, params: types.DidOpenTextDocumentParams):
    doc = params.text_document
    ls.engine.open(doc.uri, _file_of(doc.uri), doc.version, doc.text)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: ParakernServer, params: types.DidChangeTextDocumentParams):
    doc, document = params.text_document, ls.document(params.text_document.uri)
    if document is not None:
        ls.engine.change(doc.uri, doc.version, document.source)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
def did_save(ls: ParakernServer, params: types.DidSaveTextDocumentParams):
    document = ls.document(params.text_document.uri)
    if document is not None:       # a document that is not open is not read (a FIFO, /dev/zero…)
        ls.engine.save(params.text_document.uri, document.source)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: ParakernServer, params: types.DidCloseTextDocumentParams):
    ls.engine.close_document(params.text_document.uri)


# ------------------------------------------------------------------ hover, lenses


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: ParakernServer, params: types.HoverParams):
    uri = params.text_document.uri
    document = ls.document(uri)
    if document is None or uri not in ls.engine.docs:
        return None
    line, character = from_client_position(document, params.position)
    text = await ls.engine.hover(uri, line, character, line_text(document, line))
    if text is None:
        return None
    formats = ls.cap("text_document.hover.content_format", []) or []
    if not formats or types.MarkupKind.Markdown in formats:
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.PlainText, value=plain_text(text)))


def _summary_lens(ls: ParakernServer, uri: str, view, title: str, document) -> types.CodeLens:
    return types.CodeLens(range=to_client_range(document, view.keyword),
                          command=types.Command(title=title, command=CMD_TREE,
                                                arguments=[uri, view.id, "markdown"]),
                          data={"uri": uri, "id": view.id, "kind": "summary"})


@server.feature(types.TEXT_DOCUMENT_CODE_LENS)
def code_lens(ls: ParakernServer, params: types.CodeLensParams):
    uri = params.text_document.uri
    document = ls.document(uri)
    if document is None or uri not in ls.engine.docs:
        return []
    # Where the client resolves lenses, the summary lens is filled in codeLens/resolve.
    lazy = "command" in (ls.cap("text_document.code_lens.resolve_support.properties", []) or [])
    lenses = []
    for view, title in ls.engine.lenses(uri):
        where = to_client_range(document, view.keyword)
        summary = _summary_lens(ls, uri, view, title, document)
        if lazy:
            summary.command = None
        lenses += [
            summary,
            types.CodeLens(range=where, command=types.Command(
                title="Insert dispatcher", command=CMD_INSERT, arguments=[uri, view.id])),
            types.CodeLens(range=where, command=types.Command(
                title="Bench", command=CMD_BENCH, arguments=[uri, view.id])),
        ]
    return lenses


@server.feature(types.CODE_LENS_RESOLVE)
def code_lens_resolve(ls: ParakernServer, lens: types.CodeLens):
    data = lens.data if isinstance(lens.data, dict) else {}
    uri, ident = data.get("uri"), data.get("id")
    if lens.command is not None or not uri or uri not in ls.engine.docs:
        if lens.command is None:
            lens.command = types.Command(title="parakern", command="")
        return lens
    for view, title in ls.engine.lenses(uri):
        if view.id == ident:
            lens.command = types.Command(title=title, command=CMD_TREE, arguments=[uri, view.id, "markdown"])
            return lens
    lens.command = types.Command(title="analysing…", command="")
    return lens


# ------------------------------------------------------------------ code actions


ACTION_TITLE = "Insert comprehensive dispatcher"
STALE_VIEWS_AFTER_S = 0.3  # how long a code action waits for the current version's schedules
REGION_CODE = "PK019"      # a generated region that lost a marker (frontend.generated)
STALE_CODE = "PK041"       # a generated region made from other code: inserting it again fixes it


def _workspace_edit(ls: ParakernServer, uri: str, version, rng, new_text: str) -> types.WorkspaceEdit:
    document = ls.document(uri)
    if document is None:
        raise AnalysisError(f"{uri} is not open")
    edit = types.TextEdit(range=to_client_range(document, rng), new_text=new_text)
    if ls.cap("workspace.workspace_edit.document_changes", False):
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
            edits=[edit])])
    return types.WorkspaceEdit(changes={uri: [edit]})


def _wants(only, kind: str) -> bool:
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.Refactor, types.CodeActionKind.QuickFix], resolve_provider=True))
async def code_action(ls: ParakernServer, params: types.CodeActionParams):
    """Answers at once: an edit already generated is given; otherwise the client resolves
    it (codeAction/resolve), or the action runs the insert command, which generates the
    code when chosen; only a client with neither waits here, for its cursor's schedules.
    The schedules are the current version's, or the last round's where the front-end has
    not finished the current one within STALE_VIEWS_AFTER_S (a file of thousands of lines);
    before the document's first parse, that parse is waited for (Engine.answering_views)."""
    uri = params.text_document.uri
    document = ls.document(uri)
    if document is None or uri not in ls.engine.docs:
        return None
    wanted = from_client_range(document, params.range)
    only = params.context.only
    ours = [d for d in params.context.diagnostics or () if d.source == SOURCE]
    actions = _region_fixes(ls, uri, wanted, ours) if _wants(only, types.CodeActionKind.QuickFix) else []
    ours = [d for d in ours if d.code != REGION_CODE]
    resolvable = "edit" in (ls.cap("text_document.code_action.resolve_support.properties", []) or [])
    by_command = not resolvable and bool(ls.cap("workspace.apply_edit", False))
    # the edit is made later on the text of then (resolve, or the insert command): when the
    # front-end is still busy with a large file, the last round's schedules do to offer it
    views = await ls.engine.answering_views(uri, STALE_VIEWS_AFTER_S if resolvable or by_command else None)
    marked = ls.engine.regions_marked_at(uri, wanted)   # a region's begin marker (PK041): insert it again there
    for view in views:
        if not overlaps(view.span, wanted) and view.id not in marked:
            continue
        summary = ls.engine.cached(view)
        disabled = None
        if summary is not None and not summary.has_tree:
            if not ls.cap("text_document.code_action.disabled_support", False):
                continue
            disabled = types.CodeActionDisabled(reason=f"{view.id} has no case tree: {summary.why_no_tree}")
        # a quick fix of the case diagnostics only (inserting the kernels is what they describe),
        # not of a warning it leaves as it is (PK040's uncoalesced access)
        cases = [d for d in ours if d.code in (CASE_CODE, STALE_CODE)]
        kind = _action_kind(only, bool(cases))
        if kind is None:
            continue
        action = types.CodeAction(
            title=f"{ACTION_TITLE} ({view.id})", kind=kind, disabled=disabled,
            diagnostics=cases if kind == types.CodeActionKind.QuickFix else None,
            data={"uri": uri, "id": view.id})
        if disabled is None:
            cached = ls.engine.dispatcher_cached(uri, view.id)
            if cached is not None:
                action.edit = _workspace_edit(ls, uri, *cached)
            elif by_command:
                action.command = types.Command(title=action.title, command=CMD_INSERT, arguments=[uri, view.id])
            elif not resolvable:
                try:
                    action.edit = _workspace_edit(ls, uri, *await ls.engine.dispatcher_edit(uri, view.id))
                except AnalysisError as exc:
                    action.disabled = types.CodeActionDisabled(reason=str(exc)) \
                        if ls.cap("text_document.code_action.disabled_support", False) else None
                    if action.disabled is None:
                        continue
        actions.append(action)
    return actions


def _action_kind(only, fixes_cases: bool) -> "str | None":
    """One action per schedule (an editor lists each kind in its own group: the same edit as a
    quickfix and a refactor showed twice): a quick fix where it fixes the case diagnostics (or
    PK041) given, else a refactor; None where the client asked for neither."""
    for kind in ([types.CodeActionKind.QuickFix] if fixes_cases else []) + [types.CodeActionKind.Refactor]:
        if _wants(only, kind):
            return kind
    return None


def _region_fixes(ls: ParakernServer, uri: str, wanted, ours) -> list[types.CodeAction]:
    """Quick fixes of generated regions that lost a marker (PK019): restore it, or delete."""
    actions = []
    for title, version, rng, new_text in ls.engine.region_fixes(uri, wanted):
        related = [d for d in ours if d.code == REGION_CODE]
        actions.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix,
                                        diagnostics=related or None, is_preferred=title.startswith("Restore"),
                                        edit=_workspace_edit(ls, uri, version, rng, new_text)))
    return actions


@server.feature(types.CODE_ACTION_RESOLVE)
async def code_action_resolve(ls: ParakernServer, action: types.CodeAction):
    data = action.data if isinstance(action.data, dict) else {}
    uri, ident = data.get("uri"), data.get("id")
    if action.edit is not None or not uri or not ident:
        return action
    try:
        action.edit = _workspace_edit(ls, uri, *await ls.engine.dispatcher_edit(uri, ident))
    except AnalysisError as exc:
        ls.engine.client.show_message("warning", f"{ACTION_TITLE}: {exc}")
    return action


# ------------------------------------------------------------------ commands


def _args(args, count: int, name: str) -> list:
    values = list(args)
    if len(values) < count or not all(isinstance(v, str) for v in values[:count]):
        raise AnalysisError(f"{name} takes {count} string arguments, got {values!r}")
    return values


@server.command(CMD_INSERT)
async def insert_dispatcher(ls: ParakernServer, *args):
    try:
        uri, ident = _args(args, 2, CMD_INSERT)[:2]
        version, rng, text = await ls.engine.dispatcher_edit(uri, ident)
    except AnalysisError as exc:
        ls.engine.client.show_message("warning", f"{ACTION_TITLE}: {exc}")
        return {"applied": False, "message": str(exc)}
    if not ls.cap("workspace.apply_edit", False):
        message = "this editor does not accept workspace edits from the server (workspace/applyEdit)"
        ls.engine.client.show_message("warning", f"{ACTION_TITLE}: {message}")
        return {"applied": False, "message": message}
    result = await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(
        edit=_workspace_edit(ls, uri, version, rng, text), label=f"{ACTION_TITLE} ({ident})"))
    return {"applied": bool(result.applied), "message": result.failure_reason or ""}


@server.command(CMD_BENCH)
async def bench(ls: ParakernServer, *args):
    """[uri, schedule id, optional {data, sweep, repeat, device}]: the bench's tables and figures.
    Where it cannot run (no GPU, no pycuda), the message offers what needs no GPU as buttons
    (window/showMessageRequest); the one chosen runs, and its result is the command's."""
    try:
        values = _args(args, 2, CMD_BENCH)
        uri, ident, override = values[0], values[1], values[2] if len(values) > 2 else None
        result = await ls.engine.bench(uri, ident, override)
        if result["status"] == "missing" and result.get("offers"):
            mode = OFFERS.get(await _ask(ls, types.MessageType.Warning, result["message"], result["offers"]))
            if mode is None:
                return result
            result = await ls.engine.bench(uri, ident, override, mode)
            if result["status"] == "done":
                result["schedule"] = ident
    except AnalysisError as exc:
        ls.engine.client.show_message("warning", f"parakern bench: {exc}")
        return {"status": "error", "message": f"parakern bench: {exc}"}
    kind = {"done": "info", "cancelled": "info", "missing": "warning", "busy": "warning"}.get(result["status"], "error")
    if result["status"] == "done" and not result.get("correct", True):
        kind = "error"
    ls.engine.client.show_message(kind, result["message"])
    return result


async def _ask(ls: ParakernServer, kind: types.MessageType, message: str, titles: list) -> "str | None":
    """The title of the button chosen, or None (closed, or a client that cannot ask)."""
    try:
        chosen = await ls.window_show_message_request_async(types.ShowMessageRequestParams(
            type=kind, message=message, actions=[types.MessageActionItem(title=t) for t in titles]))
    except Exception as exc:   # the client refused the request: the message is all it gets
        log.info("window/showMessageRequest failed: %s", exc)
        ls.engine.client.show_message("warning", message)
        return None
    return chosen.title if chosen is not None else None


@server.command(CMD_TREE)
async def show_case_tree(ls: ParakernServer, *args):
    try:
        values = _args(args, 2, CMD_TREE)
        fmt = values[2] if len(values) > 2 and isinstance(values[2], str) else "markdown"
        return await ls.engine.case_tree(values[0], values[1], fmt)
    except AnalysisError as exc:
        return f"parakern: {exc}"


# ------------------------------------------------------------------ entry point


def _end_within(seconds: float) -> None:
    """Ends the process `seconds` from now unless it has ended by itself: nothing left
    running in it (a thread reading stdin, a library's join at exit) may keep it, nor its
    workers and resource tracker, which end with it."""
    def end() -> None:
        time.sleep(seconds)
        log.warning("parakern: the server did not end by itself within %g s of its end; ending it", seconds)
        os._exit(server.exit_status or 0)

    threading.Thread(target=end, name="parakern-exit", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:          # exists, but not ours to signal
        return True
    return True


def _watch_parent(pid) -> None:
    """LSP: the server ends once the process that started it (initialize's processId) is
    gone, even when its pipes live on in another process. Only a process alive now is
    watched: a client in another pid namespace (a container) sends one that is not."""
    if not isinstance(pid, int) or pid <= 0 or pid == os.getpid() or not _alive(pid):
        return

    def watch() -> None:
        while _alive(pid):
            time.sleep(PARENT_POLL)
        log.warning("parakern: the editor's process %d is gone; the server ends", pid)
        _end_within(EXIT_DEADLINE)
        os.kill(os.getpid(), signal.SIGTERM)     # handled in the main thread: _terminated

    threading.Thread(target=watch, name="parakern-parent", daemon=True).start()


def _terminated(signum, frame) -> None:
    """SIGTERM / SIGHUP: stop the analysis and bench processes now, then exit. (They
    would notice the server's end by themselves within a second: parakern.process.lifeline.)"""
    _finish(128 + signum)


def _finish(status: int) -> None:
    """Ends the process now, its workers stopped first. The interpreter's own end would wait
    for every thread: pygls' reading stdin (an editor may keep the pipe open after exit), a
    front-end run. The exit handlers do run (multiprocessing's removes the workers' semaphores,
    which its resource tracker would otherwise report as leaked), unless they take past
    EXIT_DEADLINE."""
    try:
        _end_within(EXIT_DEADLINE)
        server.engine.close()
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    finally:
        os._exit(status)


class _OneLine(logging.Filter):
    """pygls' records of a client's bad message in one line: it logs each with the traceback of
    its deserialisation (pages of an ExceptionGroup on stderr per request; the client already
    got its -32602 answer). --verbose keeps them whole."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("pygls"):
            return True
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text = f"{text}: {type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        elif "Traceback" in text:   # formatted into the message (json_rpc's 'Unable to deserialize')
            lines = [line.strip(" |+") for line in text.splitlines() if line.strip(" |+")]
            raised = [line for line in lines[1:] if re.match(r"[\w.]*(Error|Exception)\b", line)]
            text = f"{lines[0]}: {(raised or lines)[-1]}"
        record.msg, record.args, record.exc_info, record.exc_text = text, (), None, None
        return True


def run(args, pool=None) -> NoReturn:
    """Serves until the connection ends, then ends the process (_finish), with status 0 after
    shutdown and exit or the connection's end, 1 after exit alone."""
    logging.basicConfig(filename=args.log_file, level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if not args.verbose:
        for handler in logging.getLogger().handlers:   # a logger's filter would miss its children's records
            handler.addFilter(_OneLine())
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            signal.signal(signum, _terminated)
    server.engine.prestart(pool)  # the workers warm up while this process goes on importing
    # deferred: the front end loads once the workers have started, not before (lsp/start.py)
    import parakern.frontend  # noqa: F401
    try:
        if args.tcp:   # checked before the workers started (lsp/start.py)
            host, _, port = args.tcp.rpartition(":")
            server.start_tcp(host or "127.0.0.1", int(port))
        else:
            server.start_io()
    finally:
        _finish(server.exit_status or 0)   # the connection's end (EOF) is a normal end
