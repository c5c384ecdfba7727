"""Analysis processes: `ProcessPoolExecutor`s with the `spawn` context, a time limit per job.

`fork` deadlocks inside a pygls server (its reader thread holds locks at fork time), hence `spawn`. Each slot is its
own single-process executor: a job past its time limit is stopped by killing that
one process, and a worker that dies (BrokenProcessPool) only costs its own slot;
either way the slot is recreated and warmed up again while the others go on.
Jobs are handed to a slot only when it is free and warm, so the time limit counts
the job's own run time, not time spent queueing behind another job; a job the user
is waiting for (`urgent`: the dispatcher of a code action) goes before the analyses,
and among those the latest asked for goes first (`order`: the round that wants it), so a
document opened beside a large one is not analysed after all of the large one's schedules.

A worker is recycled (replaced by a fresh one, between jobs) after RECYCLE_JOBS jobs or
once its memory has grown RECYCLE_MB past what it used when warm: llvmlite's O3
pipeline leaks native memory on every run (its PassBuilder's instrumentation callbacks
are never freed), about 100 KB, which no disposal on our side returns. Workers end with
the server however it ends (parakern.process.lifeline).
"""
from __future__ import annotations

import asyncio
import collections
import heapq
import itertools
import logging
import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from parakern.lsp import boot

log = logging.getLogger(__name__)
WORKERS_ENV = "PARAKERN_LSP_WORKERS"
WARM_UP_LIMIT = 180.0
RECYCLE_JOBS = 400
RECYCLE_MB = 40.0
RECYCLE_ENV = "PARAKERN_LSP_RECYCLE"        # "JOBS,MB" (tests make them small)


class JobTimeout(Exception):
    """The job ran past its time limit; its worker was killed."""


class JobCrashed(Exception):
    """The worker process died while running the job."""


def default_workers() -> int:
    try:
        wanted = int(os.environ.get(WORKERS_ENV, "0"))
    except ValueError:
        wanted = 0
    if wanted > 0:
        return wanted
    return max(1, min(4, (os.cpu_count() or 2) - 1))


def recycle_limits() -> tuple[int, float]:
    """(jobs, megabytes of growth) after which a worker is replaced."""
    try:
        jobs, megabytes = os.environ[RECYCLE_ENV].split(",")
        return max(int(jobs), 1), max(float(megabytes), 1.0)
    except (KeyError, ValueError):
        return RECYCLE_JOBS, RECYCLE_MB


def resident_mb(pid: int) -> "float | None":
    """Resident memory of a process (Linux /proc; None elsewhere or when it is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


class _Slot:
    def __init__(self, number: int):
        self.number = number
        self.executor: "ProcessPoolExecutor | None" = None
        self.pid: "int | None" = None
        self.generation = 0
        self.jobs = 0
        self.warm_mb: "float | None" = None
        self.warming = None                  # the warm-up's concurrent future, until awaited

    def start(self) -> None:
        """The process and its warm-up (z3, llvmlite, sympy imported, caches filled) start now,
        with or without an event loop."""
        self.generation += 1
        self.pid, self.jobs, self.warm_mb = None, 0, None
        self.executor = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=boot.initialize, initargs=(os.getpid(),))
        self.warming = self.executor.submit(boot.warm_up)

    def worn(self, jobs: int, megabytes: float) -> bool:
        if self.jobs >= jobs:
            return True
        now = resident_mb(self.pid) if self.pid else None
        return now is not None and self.warm_mb is not None and now - self.warm_mb > megabytes

    def kill(self) -> None:
        executor, self.executor = self.executor, None
        if executor is None:
            return
        pids = {self.pid} if self.pid else set()
        try:     # the process ids (a copy: the executor's thread may change its table meanwhile)
            pids.update(list(getattr(executor, "_processes", None) or ()))
        except RuntimeError:
            pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (OSError, TypeError):
                pass
        try:
            executor.shutdown(wait=False, cancel_futures=True)
        except Exception:  # a broken pool may complain; it is gone either way
            pass


class _FreeSlots:
    """Warm slots not running a job, handed to waiting jobs: urgent ones first, then the
    analyses, the highest `order` first (the same order: the first come), then background work."""

    def __init__(self):
        self.slots: list[_Slot] = []
        self.urgent: collections.deque = collections.deque()
        self.analyses: list = []             # heap of (-order, arrival, future)
        self.background: collections.deque = collections.deque()
        self._arrivals = itertools.count()

    def _next_waiting(self):
        if self.urgent:
            return self.urgent.popleft()
        if self.analyses:
            return heapq.heappop(self.analyses)[2]
        return self.background.popleft() if self.background else None

    def put(self, slot: _Slot) -> None:
        while (future := self._next_waiting()) is not None:
            if not future.done():
                future.set_result(slot)
                return
        self.slots.append(slot)

    async def get(self, urgent: "bool | None" = False, order: int = 0) -> _Slot:
        if self.slots:
            return self.slots.pop()
        future = asyncio.get_running_loop().create_future()
        if urgent is False:
            heapq.heappush(self.analyses, (-order, next(self._arrivals), future))
        else:
            (self.urgent if urgent else self.background).append(future)
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.put(future.result())      # handed over just as the waiter left: pass it on
            raise


class JobPool:
    def __init__(self, workers: "int | None" = None):
        self.workers = workers or default_workers()
        self._slots = [_Slot(k) for k in range(self.workers)]
        self._free: "_FreeSlots | None" = None
        self._tasks: set = set()
        self._closed = False
        self.restarts = 0
        self.recycled = 0
        self.recycle_jobs, self.recycle_mb = recycle_limits()

    @property
    def pids(self) -> list[int]:
        return [slot.pid for slot in self._slots if slot.pid]

    def prestart(self) -> None:
        """Starts the worker processes before there is an event loop (as the server process
        starts, so they warm up while it imports pygls and before the client initialises)."""
        for slot in self._slots:
            if slot.executor is None and not self._closed:
                slot.start()

    def start(self) -> None:
        """Starts every slot not started yet and waits for the warm-ups (call from the event loop)."""
        if self._free is not None:
            return
        self._free = _FreeSlots()
        for slot in self._slots:
            if slot.executor is None:
                self._launch(slot)
            else:
                self._watch(slot)

    def _launch(self, slot: _Slot) -> None:
        if self._closed:
            return
        slot.start()
        self._watch(slot)

    def _watch(self, slot: _Slot) -> None:
        task = asyncio.get_running_loop().create_task(self._warm(slot))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _warm(self, slot: _Slot) -> None:
        try:
            future, slot.warming = slot.warming or slot.executor.submit(boot.warm_up), None
            slot.pid = await asyncio.wait_for(asyncio.wrap_future(future), WARM_UP_LIMIT)
            slot.warm_mb = resident_mb(slot.pid)
        except asyncio.CancelledError:
            slot.kill()
            raise
        except Exception as exc:  # could not even start: try again, a little later
            log.warning("parakern worker %d did not start: %s", slot.number, exc)
            slot.kill()
            self.restarts += 1
            await asyncio.sleep(1.0)
            self._launch(slot)
            return
        if not self._closed:
            self._free.put(slot)

    def _restart(self, slot: _Slot) -> None:
        slot.kill()
        self.restarts += 1
        self._launch(slot)

    def _release(self, slot: _Slot) -> None:
        """A slot whose job ended normally: back to the free ones, or recycled if worn."""
        slot.jobs += 1
        if slot.worn(self.recycle_jobs, self.recycle_mb):
            log.info("parakern worker %d recycled after %d jobs", slot.number, slot.jobs)
            self.recycled += 1
            slot.kill()
            self._launch(slot)
        else:
            self._free.put(slot)

    async def run(self, fn, job, timeout: float, wanted=None, urgent: "bool | None" = False, order: int = 0):
        """Runs fn(job) in a worker; JobTimeout / JobCrashed on failure. `wanted()` is asked
        once a worker is free: False skips the job (its document changed meanwhile) and
        gives None. An `urgent` job gets the next free worker before the others; urgent None
        is background work, given a worker only when no other job waits; among the others,
        the highest `order` goes first."""
        if self._free is None:
            self.start()
        while True:
            slot = await self._free.get(urgent, order)
            if wanted is not None and not wanted():
                self._free.put(slot)
                return None
            try:
                future = slot.executor.submit(fn, job)
                break
            except (BrokenProcessPool, RuntimeError):  # died while idle: not this job's fault
                self._restart(slot)
        try:
            result = await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except asyncio.TimeoutError:
            self._restart(slot)
            raise JobTimeout(f"ran past the time limit of {timeout:g} s") from None
        except BrokenProcessPool:
            self._restart(slot)
            raise JobCrashed("the analysis process died") from None
        except asyncio.CancelledError:
            # Only at shutdown: stop whatever the worker was doing.
            self._restart(slot)
            raise
        except Exception:
            # The job raised in the worker or its result could not be pickled:
            # the process is fine, the slot goes back.
            self._release(slot)
            raise
        self._release(slot)
        return result

    def close(self) -> None:
        self._closed = True
        for task in list(self._tasks):
            if not task.get_loop().is_closed():
                task.cancel()
            else:   # the connection ended: pygls shuts down after its loop closed, with the
                # workers' warm-up still awaited; the workers are killed below, and nothing is lost
                task._log_destroy_pending = False   # (asyncio's own switch for that message)
        for slot in self._slots:
            try:
                slot.kill()
            except Exception:       # the others are still stopped
                log.exception("parakern: stopping worker %d failed", slot.number)
