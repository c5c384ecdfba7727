"""Analysis processes: `ProcessPoolExecutor`s with the `spawn` context, a time limit per job.

`fork` deadlocks inside a pygls server (its reader thread holds locks at fork time), hence `spawn`. Each slot is its
own single-process executor: a job past its time limit is stopped by killing that
one process, and a worker that dies (BrokenProcessPool) only costs its own slot;
either way the slot is recreated and warmed up again while the others go on.
Jobs are handed to a slot only when it is free and warm, so the time limit counts
the job's own run time, not time spent queueing behind another job.
"""
from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from parakern.lsp import worker

log = logging.getLogger(__name__)
WORKERS_ENV = "PARAKERN_LSP_WORKERS"
WARM_UP_LIMIT = 180.0


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


class _Slot:
    def __init__(self, number: int):
        self.number = number
        self.executor: "ProcessPoolExecutor | None" = None
        self.pid: "int | None" = None
        self.generation = 0

    def start(self) -> None:
        self.generation += 1
        self.pid = None
        self.executor = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=worker.initialize)

    def kill(self) -> None:
        executor, self.executor = self.executor, None
        if executor is None:
            return
        pids = {self.pid} if self.pid else set()
        pids.update(getattr(executor, "_processes", None) or {})  # the process ids
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (OSError, TypeError):
                pass
        try:
            executor.shutdown(wait=False, cancel_futures=True)
        except Exception:  # a broken pool may complain; it is gone either way
            pass


class JobPool:
    def __init__(self, workers: "int | None" = None):
        self.workers = workers or default_workers()
        self._slots = [_Slot(k) for k in range(self.workers)]
        self._free: "asyncio.Queue[_Slot] | None" = None
        self._tasks: set = set()
        self._closed = False
        self.restarts = 0

    def start(self) -> None:
        """Starts every slot and its warm-up (call from the event loop)."""
        if self._free is not None:
            return
        self._free = asyncio.Queue()
        for slot in self._slots:
            self._launch(slot)

    def _launch(self, slot: _Slot) -> None:
        if self._closed:
            return
        slot.start()
        task = asyncio.get_running_loop().create_task(self._warm(slot))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _warm(self, slot: _Slot) -> None:
        executor = slot.executor
        try:
            future = executor.submit(worker.warm_up)
            slot.pid = await asyncio.wait_for(asyncio.wrap_future(future), WARM_UP_LIMIT)
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
            self._free.put_nowait(slot)

    def _restart(self, slot: _Slot) -> None:
        slot.kill()
        self.restarts += 1
        self._launch(slot)

    async def run(self, fn, job, timeout: float, wanted=None):
        """Runs fn(job) in a worker; JobTimeout / JobCrashed on failure. `wanted()` is asked
        once a worker is free: False skips the job (its document changed meanwhile) and
        gives None."""
        if self._free is None:
            self.start()
        while True:
            slot = await self._free.get()
            if wanted is not None and not wanted():
                self._free.put_nowait(slot)
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
            self._free.put_nowait(slot)
            raise
        self._free.put_nowait(slot)
        return result

    def close(self) -> None:
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        for slot in self._slots:
            slot.kill()
