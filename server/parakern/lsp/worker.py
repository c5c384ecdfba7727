"""What runs in the analysis processes (spawned, never forked): one schedule -> a summary.

Every entry point takes and returns plain picklable data. Nothing here imports pygls, and the
server never imports this module: it names these entry points through tasks.py.
A job (an `AnalysisJob`) re-reads the document with the front-end (milliseconds), picks
its schedule by id, runs pipeline.optimize_schedule and summarises the result with
summary.summarize (z3 for the per-GPU conditions). The last few ScheduleResults are
kept in the process so that emitting the dispatcher after an analysis does not rebuild
the tree. How such a process starts and warms up: boot.py.
"""
from __future__ import annotations

import dataclasses
import json
import functools
import os
import time
from collections import OrderedDict

from parakern.codegen import emit_schedule
from parakern.frontend import analyze_source
from parakern.frontend.generated import mask_generated
from parakern.lsp import diskcache
from parakern.lsp.ranges import span_range
from parakern.lsp.summarize import summarize, tunings
from parakern.lsp.summary import ScheduleSummary, emit_key, failure, function_origin, merged
from parakern.lsp.tasks import AnalysisJob
from parakern.machine.devices import DEFAULT_PROFILES
from parakern.pipeline import Options, completed, optimize_schedule


_RESULTS: "OrderedDict[str, object]" = OrderedDict()   # emit_key -> ScheduleResult
_KEEP = 16

class ScheduleMissing(Exception):
    """The job's schedule id is no longer in its text."""


def options_of(job: AnalysisJob):
    return Options(target=job.target,
                   strategies=None if job.strategies is None else tuple(job.strategies),
                   occupancy=job.occupancy)


def schedule_of(job: AnalysisJob):
    for schedule in _frontend(job.text, job.file).schedules:
        if schedule.id == job.id:
            return schedule
    raise ScheduleMissing(f"meta_schedule {job.id} is no longer in the document")


@functools.lru_cache(maxsize=4)
def _frontend(text: str, file: str):
    """The document's front-end result: read once for the cases, their completion and the
    recommendations of one version (frozen data)."""
    return analyze_source(mask_generated(text), file)


def _fault(job: AnalysisJob, schedule) -> None:
    """Test hooks (settings.testFault, only with PARAKERN_LSP_TEST_HOOKS=1)."""
    fault = job.fault
    if not fault or fault.get("function") not in (None, schedule.function):
        return
    mode = fault.get("mode")
    if mode == "crash":
        os._exit(70)
    if mode == "raise":
        raise RuntimeError("fault injected by the test hooks")
    if mode == "sleep":
        time.sleep(float(fault.get("seconds", 1.0)))


def _remember(key: str, result) -> None:
    _RESULTS[key] = result
    _RESULTS.move_to_end(key)
    while len(_RESULTS) > _KEEP:
        _RESULTS.popitem(last=False)


def cases(job: AnalysisJob) -> ScheduleSummary:
    """The job's schedule up to its cases (complete=False: no GPU conditions, no-fit regions
    or traffic yet), shown at once; `analyse` completes it from what this process keeps. A
    summary kept on disk is returned whole."""
    return _summary(job, complete=False)


def analyse(job: AnalysisJob) -> ScheduleSummary:
    """The whole summary of the job's schedule (kept on disk); a failure is a summary too,
    never raised."""
    return _summary(job, complete=True)


def _summary(job: AnalysisJob, complete: bool) -> ScheduleSummary:
    start = time.perf_counter()
    schedule = None
    try:
        stored = None if job.fault else diskcache.load(job.key)
        if stored is not None:    # this code analysed this text before, maybe in another session
            return stored
        schedule = schedule_of(job)
        _fault(job, schedule)
        result = _result(job, schedule, complete)
        summary = summarize(result, job.key, function_origin(schedule), job.profiles,
                            time.perf_counter() - start, job.file,
                            tune=False,   # the cases first: `tune` adds the recommendations
                            sizes=json.loads(job.sizes or "{}"))
        if not job.fault and summary.complete:
            diskcache.store(summary)
        return summary
    except ScheduleMissing as exc:
        return ScheduleSummary(job.key, job.id, "", "missing", str(exc))
    except Exception as exc:  # never a traceback to the user: one diagnostic on the keyword
        if schedule is None:
            return ScheduleSummary(job.key, job.id, "", "error", f"internal error: {type(exc).__name__}: {exc}")
        return failure(job.key, schedule.id, schedule.function,
                       span_range(schedule.keyword_span, function_origin(schedule)), "error",
                       f"internal error while analysing this meta_schedule "
                       f"({type(exc).__name__}: {exc}); please report it with this file")


def _result(job: AnalysisJob, schedule, complete: bool = True):
    """The schedule's pipeline result: the one this process keeps (completed if asked), or a
    new one."""
    where = emit_key(job.key, function_origin(schedule))
    result = _RESULTS.get(where)
    if result is None:
        result = optimize_schedule(schedule, options_of(job), complete=complete)
    elif complete:
        result = completed(result)
    _remember(where, result)
    return result


def warm_up(source: str) -> None:
    """One tiny analysis and its summary (llvmlite, z3, the modules a job imports and the
    caches warm up), and the summary folder's name (a hash of parakern's sources), once."""
    for schedule in analyze_source(source, "<warm-up>").schedules:
        summarize(optimize_schedule(schedule), "warm-up", 0, DEFAULT_PROFILES, tune=False)
    diskcache.code_version()


def tune(job: AnalysisJob) -> tuple:
    """The recommended configuration per GPU profile of the job's schedule (summary.tunings),
    added to its summary on disk; () when the schedule has no tree."""
    result = _result(job, schedule_of(job))
    if result.tree is None:
        return ()
    found = tunings(result, job.profiles)
    stored = diskcache.load(job.key)
    if stored is not None and not job.fault:
        diskcache.store(dataclasses.replace(stored, tuning=merged(stored.tuning, found)))
    return found


def emit(job: AnalysisJob) -> tuple[bool, str]:
    """(True, generated code) or (False, why not)."""
    try:
        result = _result(job, schedule_of(job))
        if result.tree is None:
            return False, f"meta_schedule {job.id} has no case tree: fix its errors first"
        return True, str(emit_schedule(result))
    except ScheduleMissing as exc:
        return False, str(exc)
    except Exception as exc:
        return False, f"the dispatcher could not be generated ({type(exc).__name__}: {exc})"
