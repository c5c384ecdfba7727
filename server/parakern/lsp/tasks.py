"""The tasks the server hands its analysis processes, and the job they take.

The server pickles these light functions (a spawn pool sends a function by its module and
name); each loads the worker's modules (the pipeline, codegen, the time model) in the worker
process itself, so the server never imports them.
"""
from __future__ import annotations

from dataclasses import dataclass

from parakern.machine.targets import DEFAULT_TARGET


@dataclass(frozen=True)
class AnalysisJob:
    """One schedule of one document version, as the engine hands it to a worker (it
    crosses a spawn process pool: plain picklable values only)."""
    text: str
    file: str
    id: str                                  # the schedule's id ("jacobi1d:0")
    key: str = ""                            # its cache key (summary.cache_key)
    target: str = DEFAULT_TARGET
    strategies: "tuple[str, ...] | None" = None
    occupancy: "str | None" = None
    profiles: tuple[str, ...] = ()           # GPUs whose conditions the summary carries
    fault: "dict | None" = None              # settings.testFault (test hooks only)
    sizes: str = "{}"                        # the bench's data and sweep (Settings.sizes): what runs, at which sizes


def _worker():
    # deferred: the pipeline's modules load in the analysis process, never in the server
    from parakern.lsp import worker
    return worker


def cases(job: AnalysisJob):
    """worker.cases in the worker: the schedule up to its cases."""
    return _worker().cases(job)


def analyse(job: AnalysisJob):
    """worker.analyse in the worker: the whole summary."""
    return _worker().analyse(job)


def tune(job: AnalysisJob) -> tuple:
    """worker.tune in the worker: the recommended configuration per GPU profile."""
    return _worker().tune(job)


def emit(job: AnalysisJob) -> tuple:
    """worker.emit in the worker: (True, generated code) or (False, why not)."""
    return _worker().emit(job)
