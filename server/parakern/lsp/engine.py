"""The language server's state and scheduling, without pygls: documents, debounce,
front-end snapshots, the results cache, analysis jobs, publishing.

The pygls layer (server.py) calls these methods and implements `Client` (publish,
progress, lens refresh, messages); everything here speaks code-point ranges
(ranges.Range) and summaries (summary.ScheduleSummary). The dispatcher edits
(emitcache.py) and the bench command (benchcommand.py) are delegated.

Flow for a document: open/save analyse at once, a change after DEBOUNCE seconds.
A round runs the front-end in a thread of its own (parses.py: milliseconds, seconds on a
large file; a change stops the run of the version it replaces, and one document's runs
never wait for another's), publishes its diagnostics
with whatever the cache already holds for the schedules, then starts one job per
schedule whose key is not cached (a summary kept on disk is read first, in this process).
A job finds the cases (tasks.cases); they are shown at once, and a second job completes
them (which GPU runs which case, no-fit regions, traffic; a worker that kept them goes
on from there, another starts over), then the
recommendations follow one GPU profile per job, in the background. When a job ends its
summary goes into the cache and every open document showing that key is published
again, but only if the document is still at the version the snapshot was made from: a
result for an old version is never published (the newer round publishes it from the cache).
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Optional, Protocol

from parakern.lsp import diskcache, parses, region_edits, tasks, texts
from parakern.lsp.benchcommand import BenchCommand
from parakern.lsp.documents import AnalysisError, Document, Snapshot, analysed_text, build_snapshot
from parakern.lsp.emitcache import EmitCache
from parakern.lsp.jobs import JobCrashed, JobPool, JobTimeout
from parakern.lsp.ranges import Range, shifted
from parakern.lsp.settings import Settings, update
from parakern.lsp.summary import DiagInfo, ScheduleSummary, failure, merged
from parakern.lsp.views import ScheduleView, token_at

log = logging.getLogger(__name__)

DEBOUNCE = 0.3            # seconds after the last change
PROGRESS_AFTER = 0.5      # work-done progress only for analyses longer than this
CACHE_SIZE = 64           # summaries kept beyond those of the open documents' schedules (the disk keeps the rest)


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


@dataclass
class _Job:
    key: str
    view: ScheduleView
    task: asyncio.Task
    started: float = field(default_factory=time.perf_counter)


class Engine:
    def __init__(self, client: Client, settings: "Settings | None" = None, pool: "JobPool | None" = None):
        self.client = client
        self.settings = settings if settings is not None else Settings()
        self.docs: dict[str, Document] = {}
        self.cache: "OrderedDict[str, ScheduleSummary]" = OrderedDict()
        self.jobs: dict[str, _Job] = {}
        self.completing: dict[str, asyncio.Task] = {}     # key -> the job completing its cached cases
        self.emit_cache = EmitCache(self)
        self.bench_command = BenchCommand(client)
        self._pool = pool
        self._disk = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parakern-disk")   # summaries on disk
        self._tasks: set = set()
        self._closed = False
        self._serial = 0          # rounds begun: a job of a later round goes to a worker first
        self._shown_keys: dict = {}
        self._shown_for: list = []
        self.stats = {"jobs": 0, "cache_hits": 0, "disk_hits": 0, "dropped": 0, "timeouts": 0, "crashes": 0}

    # ------------------------------------------------------------ lifecycle

    @property
    def pool(self) -> JobPool:
        if self._pool is None:
            self._pool = JobPool()
        return self._pool

    def prestart(self, pool: "JobPool | None" = None) -> None:
        """Starts the analysis processes as the server process starts (no event loop yet):
        they are warm by the time the client opens its first document. `pool`: one started
        even earlier (lsp/start.py), before this module was imported."""
        if pool is not None and self._pool is None:
            self._pool = pool
        self.pool.prestart()
        self._disk.submit(diskcache.code_version)   # read before the first document's summary

    def start(self) -> None:
        """Starts the analysis processes (they warm up in the background)."""
        if self.settings.case_trees:
            self.pool.start()

    def close(self) -> None:
        """Stops everything the engine started; every step is taken even when one fails (the
        server must still answer shutdown and end with its processes)."""
        if self._closed:
            return
        self._closed = True
        docs = list(self.docs.values())
        steps = [("timers", lambda: [doc.timer.cancel() for doc in docs if doc.timer]),
                 ("front-end runs", lambda: [doc.frontend.cancel() for doc in docs if doc.frontend]),
                 ("tasks", lambda: [task.cancel() for task in list(self._tasks)]),
                 ("workers", lambda: self._pool is not None and self._pool.close()),
                 ("bench", self.bench_command.close),
                 ("disk", lambda: self._disk.shutdown(wait=False, cancel_futures=True))]
        for name, step in steps:
            try:
                step()
            except Exception:
                log.exception("parakern: stopping the %s failed", name)

    def spawn(self, coro) -> asyncio.Task:
        """A background task of the engine (cancelled at close, its failure logged)."""
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
        if doc.frontend is not None:
            doc.frontend.cancel()      # a run of the version this one replaces: worth nothing now
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
        if doc.frontend is not None:
            doc.frontend.cancel()
        self.client.publish(uri, None, [])

    def analyse_now(self, uri: str) -> None:
        doc = self.docs.get(uri)
        if doc is None or self._closed:
            return
        if doc.timer:
            doc.timer.cancel()
            doc.timer = None
        self.spawn(self._round(doc))

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
            if snap is not None and doc.is_current(snap):
                return snap
            version, text = doc.version, doc.text
            snap = await self._frontend_run(doc)
            if snap is not None and doc.version == version and doc.text == text:
                doc.snapshot = snap
                return snap
        raise AnalysisError("the document keeps changing")

    async def _frontend_run(self, doc: Document) -> "Snapshot | None":
        """The front-end on the document's current text, or None when a newer version
        superseded it meanwhile. A request that comes while this version's run is under way
        waits for that run; a run of an older version is stopped."""
        key = (doc.version, doc.text, self.settings)
        run = doc.frontend
        if run is None or run.key != key or run.cancelled:
            if run is not None:
                run.cancel()
            run = doc.frontend = parses.Run(key, build_snapshot, doc.file, doc.version, doc.text, self.settings)
        # shielded: a request cancelled by the client does not cancel the run others wait for
        return await asyncio.shield(run.future)

    async def _round(self, doc: Document) -> None:
        doc.rounds += 1
        self._serial += 1
        doc.serial = self._serial
        version, text = doc.version, doc.text
        snap = await self._frontend_run(doc)
        if snap is None or self.docs.get(doc.uri) is not doc or doc.version != version or doc.text != text:
            self.stats["dropped"] += 1
            return            # a newer round is on its way
        doc.snapshot = snap
        self.publish(doc)
        self._lenses_changed([doc])
        if not self.settings.case_trees:
            return
        pending = []
        for view in snap.views:
            cached = self.cache.get(view.key)
            if cached is not None:
                self.cache.move_to_end(view.key)
                self.stats["cache_hits"] += 1
                if cached.status == "ok" and not cached.complete:
                    # the cases alone, whose rest was dropped meanwhile (no document showed them)
                    self._complete_later(view, self.job_for(view, snap, doc), self.settings.time_limit_seconds)
                continue
            pending.append(self._want(view, snap, doc))
        if pending and self.client.progress_supported():
            self.spawn(self._progress(doc, version, pending))

    # ------------------------------------------------------------ publishing

    def diagnostics(self, doc: Document) -> list[DiagInfo]:
        snap = doc.snapshot
        found: list[DiagInfo] = list(snap.frontend)
        for view in snap.views:
            summary = self.cache.get(view.key)
            if summary is None or summary.status == "missing":
                continue
            found.extend(d.shifted(view.origin) for d in summary.diagnostics)
            if self.settings.case_diagnostics and summary.status == "ok":
                found.extend(texts.case_diagnostics(summary, view.keyword))
        return found

    def publish(self, doc: Document) -> None:
        snap = doc.snapshot
        if snap is None or not doc.is_current(snap) or self.docs.get(doc.uri) is not doc:
            self.stats["dropped"] += 1
            return        # computed for an older version: dropped
        found = self.diagnostics(doc)
        stamp = (doc.version, tuple(found))
        if stamp == doc.published:
            return
        doc.published = stamp
        self.client.publish(doc.uri, doc.version, found)

    # ------------------------------------------------------------ jobs

    def job_for(self, view: ScheduleView, snap: Snapshot, doc: Document) -> tasks.AnalysisJob:
        """What a worker needs to analyse (or emit) this schedule of this snapshot."""
        s = self.settings
        return tasks.AnalysisJob(text=snap.source or analysed_text(snap.text), file=doc.file, id=view.id, key=view.key,
                                  target=s.target, strategies=s.strategies, occupancy=s.occupancy,
                                  profiles=s.gpu_profiles, fault=s.test_fault, sizes=s.sizes())

    def _shown(self) -> dict:
        """Cache key -> the latest round of the open documents whose schedules have it; made
        again only once a document's snapshot changed (a large file has a thousand schedules,
        and each of their jobs asks)."""
        docs = [(d.snapshot, d.serial) for d in self.docs.values()]
        if len(docs) != len(self._shown_for) or any(
                a[0] is not b[0] or a[1] != b[1] for a, b in zip(docs, self._shown_for)):
            shown: dict = {}
            for snap, serial in docs:
                for view in snap.views if snap is not None else ():
                    shown[view.key] = max(shown.get(view.key, 0), serial)
            self._shown_keys, self._shown_for = shown, docs
        return self._shown_keys

    def _wanted(self, key: str) -> bool:
        return key in self._shown()

    def _order(self, key: str) -> int:
        """A job's place among the analyses waiting for a worker: the latest round of the
        documents that show its schedule (the document opened or edited last goes first)."""
        return self._shown().get(key, 0)

    def _want(self, view: ScheduleView, snap: Snapshot, doc: Document) -> asyncio.Task:
        job = self.jobs.get(view.key)
        if job is None:
            task = self.spawn(self._run(view, self.job_for(view, snap, doc), self.settings.time_limit_seconds))
            job = self.jobs[view.key] = _Job(view.key, view, task)
        return job.task

    async def _run(self, view: ScheduleView, job: tasks.AnalysisJob, limit: float) -> None:
        """The cases of a schedule (or its whole summary kept on disk), then the rest."""
        key = job.key
        try:
            summary = await self._stored(job)
            if summary is not None:
                self.stats["disk_hits"] += 1
            else:
                summary = await self._job(view, tasks.cases, job, limit)
                if summary is None:
                    return     # no open document shows this schedule any more
        finally:
            self.jobs.pop(key, None)
        self._store(key, summary)
        self._follow_up(view, job, summary, limit)

    def _follow_up(self, view: ScheduleView, job: tasks.AnalysisJob, summary: ScheduleSummary,
                   limit: float) -> None:
        """After the cases: where they run, the no-fit regions, traffic (`_complete`); after
        those, the recommendations of the GPU profiles not tuned yet (`_tune`)."""
        if summary.status != "ok":
            return
        if not summary.complete:
            self._complete_later(view, job, limit)
            return
        done = {info.key for info in summary.tuning}
        missing = tuple(p for p in job.profiles if p not in done)
        if missing:
            self.spawn(self._tune(job.key, job, missing, limit))

    def _complete_later(self, view: ScheduleView, job: tasks.AnalysisJob, limit: float) -> None:
        if job.key not in self.completing:
            self.completing[job.key] = self.spawn(self._complete(view, job, limit))

    async def _complete(self, view: ScheduleView, job: tasks.AnalysisJob, limit: float) -> None:
        """The whole summary of a schedule whose cases are shown (the worker that found them
        keeps them: it goes on from there)."""
        try:
            summary = await self._job(view, tasks.analyse, job, limit, lost="its cases are shown, not where "
                                      "they run nor where no kernel fits")
        finally:
            self.completing.pop(job.key, None)
        if summary is None:
            return
        partial = self.cache.get(job.key)
        if summary.status != "ok" and partial is not None and partial.status == "ok":
            # keep the cases on the screen, with the reason the rest is missing
            summary = dataclasses.replace(partial, complete=True,
                                          diagnostics=partial.diagnostics + summary.diagnostics)
        self._store(job.key, summary)
        self._follow_up(view, job, summary, limit)

    async def _job(self, view: ScheduleView, fn, job: tasks.AnalysisJob, limit: float,
                   lost: str = "no case tree is shown for it") -> "ScheduleSummary | None":
        """fn(job) in a worker: its summary, a failure summary for a timeout, crash or error,
        or None when no open document shows the schedule any more."""
        key = job.key
        try:
            summary = await self.pool.run(fn, job, limit, wanted=lambda: self._wanted(key), order=self._order(key))
            if summary is not None:
                self.stats["jobs"] += 1
            return summary
        except JobTimeout:
            self.stats["timeouts"] += 1
            return _failure(view, "timeout",
                            f"analysis of meta_schedule {view.id} stopped after {limit:g} s "
                            f"(setting parakern.timeLimitSeconds); {lost}")
        except JobCrashed:
            self.stats["crashes"] += 1
            return _failure(view, "crash",
                            f"the analysis process died while analysing meta_schedule {view.id}; the server "
                            f"goes on, and analyses it again once it changes")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return _failure(view, "error",
                            f"internal error while analysing meta_schedule {view.id} "
                            f"({type(exc).__name__}: {exc}); please report it")

    async def _stored(self, job: tasks.AnalysisJob) -> "ScheduleSummary | None":
        """The summary kept on disk by an earlier session (diskcache.py), read here without
        waiting for a worker; None when there is none."""
        if job.fault:
            return None
        return await asyncio.get_running_loop().run_in_executor(self._disk, diskcache.load, job.key)

    async def _tune(self, key: str, job: tasks.AnalysisJob, profiles: tuple, limit: float) -> None:
        """The recommended configurations, in the background once the cases are shown: one
        job per GPU profile, so that an analysis the user waits for (after an edit) gets the
        worker after one profile's tuning at most, not after all of them."""
        for profile in profiles:
            try:
                found = await self.pool.run(tasks.tune, dataclasses.replace(job, profiles=(profile,)), limit,
                                            wanted=lambda: self._wanted(key), urgent=None)
            except asyncio.CancelledError:
                raise
            except Exception:      # a timeout or a crash costs the hover its recommendation only
                return
            summary = self.cache.get(key)
            if not found or summary is None or summary.status != "ok":
                return
            self._store(key, dataclasses.replace(summary, tuning=merged(summary.tuning, found,
                                                                                 job.profiles)))

    def _store(self, key: str, summary: ScheduleSummary) -> None:
        self.cache[key] = summary
        self.cache.move_to_end(key)
        self._evict()
        shown = [doc for doc in list(self.docs.values())
                 if doc.snapshot is not None and any(v.key == key for v in doc.snapshot.views)]
        for doc in shown:
            self.publish(doc)
        self._lenses_changed(shown)

    def _evict(self) -> None:
        """The least recently used summaries that no open document shows, beyond CACHE_SIZE of
        them: a summary is tens of KB, and each edit of a constant makes a new one (the server
        grew by 20 MB over 4 000 edits)."""
        if len(self.cache) <= CACHE_SIZE:
            return
        shown = self._shown()
        spare = sum(1 for key in self.cache if key not in shown) - CACHE_SIZE
        for key in [k for k in self.cache if k not in shown][:max(spare, 0)]:
            del self.cache[key]

    def _lenses_changed(self, docs) -> None:
        """Asks the client to fetch the lenses again when a title of these documents changed,
        or a lens moved (a line added above a schedule: a lens asked for before the new round's
        front end had the old line)."""
        changed = False
        for doc in docs:
            state = tuple((view.id, view.keyword, title) for view, title in self.lenses(doc.uri))
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
        """The whole summary of a schedule, waiting for its jobs if needed (cancellable)."""
        while True:
            found = self.cache.get(view.key)
            if found is not None:
                completing = self.completing.get(view.key)
                if found.complete or completing is None:
                    return found
                await asyncio.shield(completing)
                continue
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

    async def answering_views(self, uri: str, stale_after: "float | None") -> tuple:
        """The schedules a request about the document answers from: those of its current
        version, its parse waited for; after `stale_after` seconds (None: no limit) those of
        the last round. Before the document's first parse there is no last round: the wait
        for that parse is bounded by the time limit of an analysis (parakern.timeLimitSeconds)
        instead. (A hover or code action right after didOpen answered nothing.)"""
        doc = self.docs.get(uri)
        if doc is None:
            return ()
        if doc.snapshot is not None and doc.is_current(doc.snapshot):
            return doc.snapshot.views
        limit = stale_after if doc.snapshot is not None else self.settings.time_limit_seconds
        current = asyncio.ensure_future(self.current_views(uri))
        current.add_done_callback(lambda task: task.cancelled() or task.exception())   # retrieved, never logged
        await asyncio.wait({current}, timeout=limit)
        if current.done() and not current.cancelled() and current.exception() is None:
            return current.result()
        return self.views(uri)

    def cached(self, view: ScheduleView) -> "ScheduleSummary | None":
        return self.cache.get(view.key)

    async def hover(self, uri: str, line: int, character: int, line_text: str) -> "str | None":
        """The hover at a position of the document as the client sent it (`line_text`: its line
        then): from the last round's schedules, or the first parse's, waited for."""
        found = token_at(await self.answering_views(uri, stale_after=0), line_text, line, character)
        if found is None:
            return None
        view, token, name = found
        return texts.hover_markdown(view, self.cache.get(view.key), token, name, self.settings.case_trees)

    def lenses(self, uri: str) -> list[tuple[ScheduleView, str]]:
        """(schedule, summary-lens title) per schedule."""
        return [(v, texts.lens_title(self.cache.get(v.key), self.settings.case_trees))
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
        return texts.tree_markdown(view.id, summary)

    async def bench(self, uri: str, schedule_id: str, override=None, mode: str = "run") -> dict:
        """The bench of one schedule of the document's current version, or its plan or tune (BenchCommand.run)."""
        doc, snap, view = await self.fresh_view(uri, schedule_id)
        return await self.bench_command.run(doc.file, snap.text, view.id, self.settings, override, mode)

    def dispatcher_cached(self, uri: str, schedule_id: str):
        """The dispatcher edit when its code is already generated for the current version, else None."""
        return self.emit_cache.cached_edit(uri, schedule_id)

    async def dispatcher_edit(self, uri: str, schedule_id: str):
        """(version, range, new text) that inserts or replaces the dispatcher region."""
        return await self.emit_cache.edit(uri, schedule_id)

    def regions_marked_at(self, uri: str, wanted: Range) -> set:
        """region_edits.regions_marked_at on the document's text."""
        doc = self.docs.get(uri)
        return region_edits.regions_marked_at(doc.text, wanted) if doc is not None else set()

    def region_fixes(self, uri: str, wanted: Range) -> list[tuple[str, object, Range, str]]:
        """(title, version, range, new text) of the quick fixes of the damaged generated
        regions whose remaining marker meets `wanted`."""
        doc = self.docs.get(uri)
        if doc is None:
            return []
        return [(title, doc.version, rng, new_text)
                for title, rng, new_text in region_edits.damaged_region_fixes(doc.text, wanted)]


def _failure(view: ScheduleView, status: str, message: str) -> ScheduleSummary:
    """A timeout / crash / error of this schedule's job as its summary."""
    return failure(view.key, view.id, view.function, shifted(view.keyword, -view.origin), status, message)
