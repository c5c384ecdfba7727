"""An open document, the front-end's snapshot of one of its versions, and the error a
request about it answers with. No pygls: the engine keeps the documents."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from parakern.frontend.generated import mask_generated
from parakern.lsp.settings import Settings
from parakern.lsp.summary import DiagInfo, cache_key, diag_info
from parakern.lsp.views import view_of
from parakern.source.text import normalize_newlines, without_lone_surrogates
from parakern.source.diagnostics import error
from parakern.frontend import analyze_source

if TYPE_CHECKING:
    from parakern.lsp.parses import Run


class AnalysisError(Exception):
    """A request about a schedule cannot be answered (shown to the user as text)."""


@dataclass(frozen=True)
class Snapshot:
    """A document version as the front-end saw it."""
    version: Optional[int]
    text: str
    frontend: tuple            # DiagInfo, absolute
    views: tuple               # ScheduleView (with keys)
    source: str = ""           # analysed_text(text): what the analyses read (computed once per version)


@dataclass
class Document:
    uri: str
    file: str
    version: Optional[int]
    text: str
    snapshot: Optional[Snapshot] = None
    timer: Optional[asyncio.TimerHandle] = None
    published: tuple = ()
    lens_state: tuple = ()
    rounds: int = 0
    serial: int = 0            # the engine's count of rounds when this document's last one began
    frontend: "Optional[Run]" = None   # the front-end run of the latest version asked for

    def is_current(self, snap: Snapshot) -> bool:
        """Whether `snap` was made from this document's current version."""
        return snap.version == self.version and snap.text == self.text


def analysed_text(text: str) -> str:
    """What the pipeline reads of an editor's text: "\n" line ends, lone surrogates as
    U+FFFD (the same positions; an editor may send "\udfff"). The document keeps its own."""
    return without_lone_surrogates(normalize_newlines(text))


def build_snapshot(file: str, version, text: str, settings: Settings) -> Snapshot:
    """Front-end over the document (generated dispatcher regions masked): its
    diagnostics and the schedules with their cache keys. Pure; runs in a thread; never
    raises (a bug of ours is one diagnostic, so stale ones never stay on screen)."""
    try:
        source = analysed_text(text)
        result = analyze_source(source, file)
        lines = mask_generated(source).split("\n")
        diags = [diag_info(d, 0, file) for d in result.diagnostics]
    except Exception as exc:
        return Snapshot(version, text, (DiagInfo("error", "PK099", _internal(exc), (0, 0, 0, 1)),), (), text)
    views = []
    for s in result.schedules:   # a bug of ours on one schedule costs that schedule only
        try:
            views.append(view_of(s, cache_key(lines, s, settings.analysis_part(s.function), result.schedules)))
        except Exception as exc:
            diags.append(diag_info(error("PK099", _internal(exc), s.keyword_span), 0, file))
    return Snapshot(version, text, tuple(diags), tuple(views), source)


def _internal(exc: Exception) -> str:
    return (f"internal error in the parakern language server ({type(exc).__name__}: {exc}); "
            "please report it with this file")
