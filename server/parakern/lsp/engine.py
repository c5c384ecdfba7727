"""The language server's state and scheduling, without pygls: documents, debounce,
front-end snapshots, the results cache, analysis jobs, publishing.

The pygls layer (server.py) calls these methods and implements `Client` (publish,
progress, lens refresh, messages); everything here speaks code-point ranges
(analysis.Range) and summaries (analysis.ScheduleSummary).

Flow for a document: open/save analyse at once, a change after DEBOUNCE seconds.
A round runs the front-end in a thread (milliseconds), publishes its diagnostics
with whatever the cache already holds for the schedules, then starts one job per
schedule whose key is not cached. When a job ends its summary goes into the cache
and every open document showing that key is published again, but only if the
document is still at the version the snapshot was made from: a result for an old
version is never published (the newer round publishes it from the cache).
"""
from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Optional, Protocol

from parakern.lsp import analysis, benchjob, dispatcher, worker
from parakern.lsp.analysis import DiagInfo, ScheduleSummary, ScheduleView
from parakern.lsp.jobs import JobCrashed, JobPool, JobTimeout
from parakern.lsp.settings import Settings, update
from parakern.text import normalize_newlines

log = logging.getLogger(__name__)

DEBOUNCE = 0.3            # seconds after the last change
PROGRESS_AFTER = 0.5      # work-done progress only for analyses longer than this
CACHE_SIZE = 512


class Client(Protocol):
    """What the engine needs from the editor connection (server.py implements it)."""

    def publish(self, uri: str, version: Optional[int], diagnostics: list) -> None: ...
    def refresh_lenses(self) -> None: ...
    def progress_supported(self) -> bool: ...
    async def progress_begin(self, token: str, title: str, message: str, cancellable: bool = False) -> bool: ...
    def progress_report(self, token: str, message: str, percentage: int) -> None: ...
    def progress_end(self, token: str, message: str) -> None: ...
    def progress_cancelled(self, token: str) -> bool: ...
    def show_message(self, kind: str, text: str) -> None: ...


@dataclass(frozen=True)
class Snapshot:
    """A document version as the front-end saw it."""
    version: Optional[int]
    text: str
    frontend: tuple            # DiagInfo, absolute
    views: tuple               # ScheduleView (with keys)


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


class AnalysisError(Exception):
    """A request about a schedule cannot be answered (shown to the user as text)."""


def build_snapshot(file: str, version, text: str, settings: Settings) -> Snapshot:
    """Front-end over the document (generated dispatcher regions masked): its
    diagnostics and the schedules with their cache keys. Pure; runs in a thread."""
    from parakern.frontend import analyze_source
    masked = analysis.mask_generated(normalize_newlines(text))
    result = analyze_source(masked, file)
    lines = masked.split("\n")
    views = tuple(analysis.view_of(s, analysis.cache_key(lines, s, settings.analysis_part(s.function)))
                  for s in result.schedules)
    diags = tuple(analysis.diag_info(d, 0, file) for d in result.diagnostics)
    return Snapshot(version, text, diags, views)


def _emit_key(view: ScheduleView) -> str:
    """The generated code cites source lines: keyed by where the function starts too."""
    return f"{view.key}@{analysis.view_origin(view)}"


@dataclass
class _Job:
    key: str
    view: ScheduleView
    task: asyncio.Task
    started: float = field(default_factory=time.perf_counter)


class Engine:
    def __init__(self, client: Client, settings: Settings = Settings(), pool: "JobPool | None" = None):
        self.client = client
        self.settings = settings
        self.docs: dict[str, Document] = {}
        self.cache: "OrderedDict[str, ScheduleSummary]" = OrderedDict()
        self.emitted: "OrderedDict[str, tuple[bool, str]]" = OrderedDict()
        self.jobs: dict[str, _Job] = {}
        self._emits: dict[str, asyncio.Task] = {}
        self._pool = pool
        self._frontend = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parakern-frontend")
        self._tasks: set = set()
        self._closed = False
        self._bench_running: "str | None" = None   # one bench at a time: two on one GPU time each other
        self.stats = {"jobs": 0, "cache_hits": 0, "dropped": 0, "timeouts": 0, "crashes": 0}

    # ------------------------------------------------------------ lifecycle

    @property
    def pool(self) -> JobPool:
        if self._pool is None:
            self._pool = JobPool()
        return self._pool

    def start(self) -> None:
        """Starts the analysis processes (they warm up in the background)."""
        if self.settings.case_trees:
            self.pool.start()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for doc in self.docs.values():
            if doc.timer:
                doc.timer.cancel()
        for task in list(self._tasks):
            task.cancel()
        if self._pool is not None:
            self._pool.close()
        self._frontend.shutdown(wait=False, cancel_futures=True)

    def _spawn(self, coro) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("parakern: background task failed", exc_info=task.exception())

    # ------------------------------------------------------------ documents

    def open(self, uri: str, file: str, version, text: str) -> None:
        self.docs[uri] = Document(uri, file, version, text)
        self.analyse_now(uri)

    def change(self, uri: str, version, text: str) -> None:
        doc = self.docs.get(uri)
        if doc is None:
            return
        doc.version, doc.text = version, text
        if doc.timer:
            doc.timer.cancel()
        loop = asyncio.get_running_loop()
        doc.timer = loop.call_later(DEBOUNCE, self.analyse_now, uri)

    def save(self, uri: str, text: "str | None" = None) -> None:
        doc = self.docs.get(uri)
        if doc is None:
            return
        if text is not None and text != doc.text:
            doc.text = text
        self.analyse_now(uri)

    def close_document(self, uri: str) -> None:
        doc = self.docs.pop(uri, None)
        if doc is None:
            return
        if doc.timer:
            doc.timer.cancel()
        self.client.publish(uri, None, [])

    def analyse_now(self, uri: str) -> None:
        doc = self.docs.get(uri)
        if doc is None or self._closed:
            return
        if doc.timer:
            doc.timer.cancel()
            doc.timer = None
        self._spawn(self._round(doc))

    def reanalyse_all(self) -> None:
        for uri in list(self.docs):
            self.analyse_now(uri)

    def update_settings(self, raw) -> list[str]:
        settings, warnings = update(self.settings, raw)
        changed = settings != self.settings or settings.bench != self.settings.bench \
            or settings.test_fault != self.settings.test_fault
        if settings.time_limit_seconds != self.settings.time_limit_seconds:
            for key in [k for k, v in self.cache.items() if v.status == "timeout"]:
                del self.cache[key]
        self.settings = settings
        if changed:
            if settings.case_trees:
                self.pool.start()
            self.reanalyse_all()
        return warnings

    async def snapshot(self, doc: Document) -> Snapshot:
        """A snapshot of the document's current version (from the last round if fresh)."""
        for _ in range(5):
            snap = doc.snapshot
            if snap is not None and snap.version == doc.version and snap.text == doc.text:
                return snap
            version, text = doc.version, doc.text
            snap = await asyncio.get_running_loop().run_in_executor(
                self._frontend, build_snapshot, doc.file, version, text, self.settings)
            if doc.version == version and doc.text == text:
                doc.snapshot = snap
                return snap
        raise AnalysisError("the document keeps changing")

    async def _round(self, doc: Document) -> None:
        doc.rounds += 1
        version, text = doc.version, doc.text
        snap = await asyncio.get_running_loop().run_in_executor(
            self._frontend, build_snapshot, doc.file, version, text, self.settings)
        if self.docs.get(doc.uri) is not doc or doc.version != version or doc.text != text:
            self.stats["dropped"] += 1
            return            # a newer round is on its way
        doc.snapshot = snap
        self.publish(doc)
        self._lenses_changed([doc])
        if not self.settings.case_trees:
            return
        pending = []
        for view in snap.views:
            if view.key in self.cache:
                self.cache.move_to_end(view.key)
                self.stats["cache_hits"] += 1
                continue
            pending.append(self._want(view, snap, doc))
        if pending and self.client.progress_supported():
            self._spawn(self._progress(doc, version, pending))

    # ------------------------------------------------------------ publishing

    def diagnostics(self, doc: Document) -> list[DiagInfo]:
        snap = doc.snapshot
        found: list[DiagInfo] = list(snap.frontend)
        for view in snap.views:
            summary = self.cache.get(view.key)
            if summary is None or summary.status == "missing":
                continue
            delta = analysis.view_origin(view)
            found.extend(d.shifted(delta) for d in summary.diagnostics)
            if self.settings.case_diagnostics and summary.status == "ok":
                found.extend(analysis.case_diagnostics(summary, view.keyword))
        return found

    def publish(self, doc: Document) -> None:
        snap = doc.snapshot
        if snap is None or snap.version != doc.version or snap.text != doc.text \
                or self.docs.get(doc.uri) is not doc:
            self.stats["dropped"] += 1
            return        # computed for an older version: dropped
        found = self.diagnostics(doc)
        stamp = (doc.version, tuple(found))
        if stamp == doc.published:
            return
        doc.published = stamp
        self.client.publish(doc.uri, doc.version, found)

    # ------------------------------------------------------------ jobs

    def _job_for(self, view: ScheduleView, snap: Snapshot, doc: Document) -> dict:
        s = self.settings
        return {"text": snap.text, "file": doc.file, "id": view.id, "key": view.key,
                "target": s.target, "strategies": None if s.strategies is None else list(s.strategies),
                "occupancy": s.occupancy, "profiles": list(s.gpu_profiles), "fault": s.test_fault}

    def _wanted(self, key: str) -> bool:
        return any(d.snapshot is not None and any(v.key == key for v in d.snapshot.views)
                   for d in self.docs.values())

    def _want(self, view: ScheduleView, snap: Snapshot, doc: Document) -> asyncio.Task:
        job = self.jobs.get(view.key)
        if job is None:
            task = self._spawn(self._run(view, self._job_for(view, snap, doc), self.settings.time_limit_seconds))
            job = self.jobs[view.key] = _Job(view.key, view, task)
        return job.task

    async def _run(self, view: ScheduleView, job: dict, limit: float) -> None:
        key = job["key"]
        origin = analysis.view_origin(view)
        try:
            summary = await self.pool.run(worker.analyse, job, limit, wanted=lambda: self._wanted(key))
            if summary is None:
                return     # no open document shows this schedule any more
            self.stats["jobs"] += 1
        except JobTimeout:
            self.stats["timeouts"] += 1
            summary = analysis.failure(
                key, view, "timeout",
                f"analysis of meta_schedule {view.id} stopped after {limit:g} s "
                f"(setting parakern.timeLimitSeconds); no case tree is shown for it", origin)
        except JobCrashed:
            self.stats["crashes"] += 1
            summary = analysis.failure(
                key, view, "crash",
                f"the analysis process died while analysing meta_schedule {view.id}; the server "
                f"goes on, and analyses it again once it changes", origin)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            summary = analysis.failure(key, view, "error",
                                       f"internal error while analysing meta_schedule {view.id} "
                                       f"({type(exc).__name__}: {exc}); please report it", origin)
        finally:
            self.jobs.pop(key, None)
        self._store(key, summary)

    def _store(self, key: str, summary: ScheduleSummary) -> None:
        self.cache[key] = summary
        self.cache.move_to_end(key)
        while len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)
        shown = [doc for doc in list(self.docs.values())
                 if doc.snapshot is not None and any(v.key == key for v in doc.snapshot.views)]
        for doc in shown:
            self.publish(doc)
        self._lenses_changed(shown)

    def _lenses_changed(self, docs) -> None:
        """Asks the client to fetch the lenses again when a title of these documents changed."""
        changed = False
        for doc in docs:
            state = tuple((view.id, title) for view, title in self.lenses(doc.uri))
            if state != doc.lens_state:
                doc.lens_state = state
                changed = True
        if changed:
            self.client.refresh_lenses()

    async def _progress(self, doc: Document, version, tasks: list) -> None:
        done, pending = await asyncio.wait(tasks, timeout=PROGRESS_AFTER)
        if not pending:
            return
        token = f"parakern-{uuid.uuid4()}"
        total = len(tasks)
        name = doc.file.rsplit("/", 1)[-1]
        if not await self.client.progress_begin(token, f"parakern: {name}",
                                                f"{len(done)}/{total} meta_schedule analysed"):
            return
        try:
            reported = len(done)
            while pending:
                _, pending = await asyncio.wait(pending, timeout=0.5, return_when=asyncio.FIRST_COMPLETED)
                if doc.version != version or self.docs.get(doc.uri) is not doc:
                    self.client.progress_end(token, "document changed: analysing the new text")
                    return
                finished = total - len(pending)
                if finished != reported:
                    reported = finished
                    self.client.progress_report(token, f"{finished}/{total} meta_schedule analysed",
                                                int(100 * finished / total))
            self.client.progress_end(token, f"{total} meta_schedule analysed")
        except asyncio.CancelledError:
            self.client.progress_end(token, "stopped")
            raise

    async def summary(self, view: ScheduleView) -> ScheduleSummary:
        """The summary of a schedule, waiting for its job if needed (cancellable)."""
        while view.key not in self.cache:
            job = self.jobs.get(view.key)
            if job is None:
                doc = next((d for d in self.docs.values() if d.snapshot and view in d.snapshot.views), None)
                if doc is None or not self.settings.case_trees:
                    raise AnalysisError("case trees are turned off (setting parakern.caseTrees)"
                                        if not self.settings.case_trees
                                        else "the document changed meanwhile: ask again")
                self._want(view, doc.snapshot, doc)
                continue
            await asyncio.shield(job.task)
        return self.cache[view.key]

    # ------------------------------------------------------------ queries

    def views(self, uri: str) -> tuple:
        doc = self.docs.get(uri)
        return () if doc is None or doc.snapshot is None else doc.snapshot.views

    async def current_views(self, uri: str) -> tuple:
        """The schedules of the document's current version (runs the front-end if the last
        round is older)."""
        doc = self.docs.get(uri)
        if doc is None:
            return ()
        return (await self.snapshot(doc)).views

    def cached(self, view: ScheduleView) -> "ScheduleSummary | None":
        return self.cache.get(view.key)

    def hover(self, uri: str, line: int, character: int, line_text: str) -> "str | None":
        found = analysis.token_at(self.views(uri), line_text, line, character)
        if found is None:
            return None
        view, token, name = found
        return analysis.hover_markdown(view, self.cache.get(view.key), token, name, self.settings.case_trees)

    def lenses(self, uri: str) -> list[tuple[ScheduleView, str]]:
        """(schedule, summary-lens title) per schedule."""
        return [(v, analysis.lens_title(self.cache.get(v.key), self.settings.case_trees))
                for v in self.views(uri)]

    def view(self, uri: str, schedule_id: str) -> ScheduleView:
        for v in self.views(uri):
            if v.id == schedule_id:
                return v
        raise AnalysisError(f"no meta_schedule {schedule_id!r} in {uri}")

    async def fresh_view(self, uri: str, schedule_id: str) -> tuple[Document, Snapshot, ScheduleView]:
        doc = self.docs.get(uri)
        if doc is None:
            raise AnalysisError(f"{uri} is not open")
        snap = await self.snapshot(doc)
        for v in snap.views:
            if v.id == schedule_id:
                return doc, snap, v
        raise AnalysisError(f"no meta_schedule {schedule_id!r} in this document")

    async def case_tree(self, uri: str, schedule_id: str, fmt: str = "markdown") -> str:
        if fmt not in ("markdown", "dot"):
            raise AnalysisError(f"format {fmt!r}: use \"markdown\" or \"dot\"")
        doc, snap, view = await self.fresh_view(uri, schedule_id)
        summary = await self.summary(view)
        if fmt == "dot":
            return summary.tree_dot if summary.has_tree else \
                f'digraph "{view.id}" {{ label="no case tree: {summary.status}"; }}'
        return analysis.tree_markdown(view.id, summary)

    async def bench(self, uri: str, schedule_id: str, override=None) -> dict:
        """Runs the bench of one schedule in its own process, with cancellable progress.
        {"status": done | missing | error | cancelled | busy, "message": one line, ...the results}."""
        doc, snap, view = await self.fresh_view(uri, schedule_id)
        s = self.settings
        text = analysis.mask_generated(normalize_newlines(snap.text))
        base = {"text": text, "file": doc.file, "schedule": view.id, "target": s.target,
                "strategies": None if s.strategies is None else list(s.strategies)}
        try:
            request = benchjob.request_from(s.bench, override, base)
        except benchjob.BenchSettingsError as exc:
            raise AnalysisError(str(exc)) from None
        if self._bench_running is not None:
            return {"status": "busy", "message": f"parakern bench: the bench of {self._bench_running} is still "
                    "running; wait for it or cancel it from its progress notification"}
        self._bench_running = view.id
        token = f"parakern-bench-{uuid.uuid4()}"
        process, shown, ending = None, False, "stopped"
        try:
            process = benchjob.BenchProcess(request)
            shown = self.client.progress_supported() and await self.client.progress_begin(
                token, f"parakern bench: {view.id}", "building the kernels and the serial C", cancellable=True)
            plan = ""
            while True:
                if shown and self.client.progress_cancelled(token):
                    return {"status": "cancelled", "message": f"bench of {view.id} stopped", "plan": plan}
                event = await process.next_event()
                if event is None:
                    continue
                kind = event[0]
                if kind == "plan":
                    plan = event[1]
                elif kind == "progress":
                    done, total, what = event[1:]
                    if shown:
                        self.client.progress_report(token, f"{done}/{total} {what}", int(100 * done / max(total, 1)))
                elif kind == "done":
                    ending = "done"
                    return {"status": "done", "message": _bench_message(view.id, event[1]), "plan": plan,
                            **event[1]}
                else:  # missing, error
                    ending = event[1]
                    return {"status": kind, "message": f"parakern bench: {event[1]}", "plan": plan}
        finally:
            if process is not None:
                process.stop()
            self._bench_running = None
            if shown:
                self.client.progress_end(token, ending)

    def dispatcher_cached(self, uri: str, schedule_id: str):
        """The edit when its code is already generated for the current version, else None."""
        doc = self.docs.get(uri)
        if doc is None or doc.snapshot is None or doc.snapshot.version != doc.version:
            return None
        view = next((v for v in doc.snapshot.views if v.id == schedule_id), None)
        found = None if view is None else self.emitted.get(_emit_key(view))
        if found is None or not found[0]:
            return None
        return self._edit(doc, view, found[1])

    def _edit(self, doc: Document, view: ScheduleView, code: str):
        end_line = view.function_span[2] if view.function_span else view.span[2]
        rng, text = dispatcher.dispatcher_edit(doc.text.replace("\r\n", "\n"), view.id, end_line, code)
        return doc.version, rng, text

    async def dispatcher_edit(self, uri: str, schedule_id: str):
        """(version, range, new text) that inserts or replaces the dispatcher region."""
        for _ in range(3):
            doc, snap, view = await self.fresh_view(uri, schedule_id)
            summary = self.cache.get(view.key)
            if summary is not None and not summary.has_tree:
                raise AnalysisError(f"meta_schedule {view.id} has no case tree "
                                    f"({summary.message or 'fix the errors shown on it first'})")
            ok, code = await self._emit(view, snap, doc)
            if not ok:
                raise AnalysisError(code)
            if doc.version == snap.version and doc.text == snap.text:
                return self._edit(doc, view, code)
        raise AnalysisError("the document keeps changing")

    async def _emit(self, view: ScheduleView, snap: Snapshot, doc: Document) -> tuple[bool, str]:
        key = _emit_key(view)
        if key in self.emitted:
            return self.emitted[key]
        task = self._emits.get(key)
        if task is None:
            task = self._spawn(self._run_emit(key, self._job_for(view, snap, doc)))
            self._emits[key] = task
        return await asyncio.shield(task)

    async def _run_emit(self, key: str, job: dict) -> tuple[bool, str]:
        try:
            result = await self.pool.run(worker.emit, job, self.settings.time_limit_seconds)
        except JobTimeout:
            result = (False, f"generating the dispatcher ran past {self.settings.time_limit_seconds:g} s")
        except JobCrashed:
            result = (False, "the analysis process died while generating the dispatcher")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            result = (False, f"the dispatcher could not be generated ({type(exc).__name__}: {exc})")
        finally:
            self._emits.pop(key, None)
        if result[0]:   # failures are tried again on the next request
            self.emitted[key] = result
            while len(self.emitted) > 64:
                self.emitted.popitem(last=False)
        return result


def _bench_message(schedule_id: str, result: dict) -> str:
    lines = result.get("summary") or []
    head = f"parakern bench {schedule_id} on {result.get('device', 'the GPU')}"
    if not result.get("correct", True):
        head += ": some results differ from the serial C (marked WRONG)"
    defaulted = result.get("defaulted") or []
    if defaulted:
        given = {**result.get("data", {}), **result.get("sweep", {})}
        head += " (defaults: " + ", ".join(f"{n}={given[n]}" for n in defaulted) + \
            "; set parakern.bench.data / .sweep to choose)"
    return head + (": " + "; ".join(lines) if lines else "")
