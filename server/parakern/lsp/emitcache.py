"""The comprehensive dispatcher of a schedule as an edit of its document.

Its code is generated once in a worker (tasks.emit) and kept under the schedule's
emit key (the cache key and the function's first line: the generated comments cite
source lines). Failures are not kept, so the next request tries again. No pygls.
"""
from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import TYPE_CHECKING

from parakern.frontend.generated import region_fingerprint
from parakern.lsp.documents import analysed_text
from parakern.lsp import region_edits, tasks
from parakern.lsp.documents import AnalysisError, Document, Snapshot
from parakern.lsp.jobs import JobCrashed, JobTimeout
from parakern.lsp.summary import emit_key
from parakern.lsp.views import ScheduleView

if TYPE_CHECKING:
    from parakern.lsp.engine import Engine

SIZE = 64


def _key(view: ScheduleView) -> str:
    return emit_key(view.key, view.origin)


class EmitCache:
    """Generated dispatchers of the engine's schedules (its documents, summaries and pool)."""

    def __init__(self, engine: "Engine"):
        self.engine = engine
        self.emitted: "OrderedDict[str, tuple[bool, str]]" = OrderedDict()
        self._running: dict[str, asyncio.Task] = {}

    def cached_edit(self, uri: str, schedule_id: str):
        """The edit when its code is already generated for the current version, else None."""
        doc = self.engine.docs.get(uri)
        if doc is None or doc.snapshot is None or doc.snapshot.version != doc.version:
            return None
        view = next((v for v in doc.snapshot.views if v.id == schedule_id), None)
        found = None if view is None else self.emitted.get(_key(view))
        if found is None or not found[0]:
            return None
        return _edit(doc, view, found[1])

    async def edit(self, uri: str, schedule_id: str):
        """(version, range, new text) that inserts or replaces the dispatcher region."""
        for _ in range(3):
            doc, snap, view = await self.engine.fresh_view(uri, schedule_id)
            summary = self.engine.cached(view)
            if summary is not None and not summary.has_tree:
                raise AnalysisError(f"meta_schedule {view.id} has no case tree ({summary.why_no_tree})")
            ok, code = await self._code(view, snap, doc)
            if not ok:
                raise AnalysisError(code)
            if doc.is_current(snap):
                return _edit(doc, view, code)
        raise AnalysisError("the document keeps changing")

    async def _code(self, view: ScheduleView, snap: Snapshot, doc: Document) -> tuple[bool, str]:
        key = _key(view)
        if key in self.emitted:
            return self.emitted[key]
        task = self._running.get(key)
        if task is None:
            task = self.engine.spawn(self._generate(key, self.engine.job_for(view, snap, doc)))
            self._running[key] = task
        return await asyncio.shield(task)

    async def _generate(self, key: str, job: tasks.AnalysisJob) -> tuple[bool, str]:
        limit = self.engine.settings.time_limit_seconds
        try:
            result = await self.engine.pool.run(tasks.emit, job, limit, urgent=True)   # the user waits for it
        except JobTimeout:
            result = (False, f"generating the dispatcher ran past {limit:g} s")
        except JobCrashed:
            result = (False, "the analysis process died while generating the dispatcher")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            result = (False, f"the dispatcher could not be generated ({type(exc).__name__}: {exc})")
        finally:
            self._running.pop(key, None)
        if result[0]:   # failures are tried again on the next request
            self.emitted[key] = result
            while len(self.emitted) > SIZE:
                self.emitted.popitem(last=False)
        return result


def _edit(doc: Document, view: ScheduleView, code: str):
    """On the document's own text: its line breaks are kept (CRLF stays CRLF)."""
    end = view.function_span[2:] if view.function_span else view.span[2:]
    # the fingerprint of the text as the front end reads it (lone surrogates replaced), which
    # PK041 compares with
    source = region_fingerprint(analysed_text(doc.text), view.function_span) if view.function_span else ""
    rng, text = region_edits.dispatcher_edit(doc.text, view.id, end, code, source)
    return doc.version, rng, text
