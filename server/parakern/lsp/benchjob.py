"""`parakern.bench` from the editor: the bench of one schedule in a process of its own.

The bench runs in a spawned process (pycuda and the CUDA driver never enter the server,
a hung or crashed GPU run cannot take the server down, and stopping a bench is
terminating that process). It reports through a queue: ("plan", text), ("progress",
done, total, what), then one of ("done", result), ("missing", {what, advice, no_gpu}) or
("error", line). The same process makes what needs no GPU (mode "plan": the case each
point runs; "tune": the time model's best values), on the profiles of parakern.gpuProfiles.
Nothing here imports pygls; benchcommand.py turns these events into work-done progress.
"""
from __future__ import annotations

import asyncio
import multiprocessing
import os
import queue as queues
import sys
from dataclasses import dataclass, field

from parakern.process.lifeline import exit_with_parent

# (the sizes a bench takes where it is not told: tuning/space.py, DEFAULT_DATA and complete_sweep)
DEFAULT_REPEAT = 10


class BenchSettingsError(ValueError):
    """parakern.bench settings or command arguments that cannot be used."""


@dataclass(frozen=True)
class BenchRequest:
    text: str                      # the document, generated regions masked
    file: str
    schedule: str                  # schedule id
    target: str
    strategies: "list | None"
    data: dict = field(default_factory=dict)     # name -> [values]; missing ones get defaults
    sweep: dict = field(default_factory=dict)
    repeat: int = DEFAULT_REPEAT
    device: int = 0
    mode: str = "run"              # run (on the GPU) | plan | tune (no GPU: on the profiles)
    profiles: tuple = ()           # GPU profiles of plan and tune


def _values(name: str, value, where: str) -> list:
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in items):
        raise BenchSettingsError(f"{where}.{name} must be a positive integer or a list of them, got {value!r}")
    return list(dict.fromkeys(items))


KEYS = ("data", "sweep", "repeat", "device")


def bench_values(settings: dict, override=None) -> dict:
    """{data, sweep, repeat, device} from parakern.bench settings and the command's optional third
    argument (the same keys, which win); BenchSettingsError says what is wrong."""
    merged = dict(settings or {})
    if override is not None:
        if not isinstance(override, dict):
            raise BenchSettingsError("the third argument of parakern.bench must be an object "
                                     "like {\"data\": {\"N\": 4096}, \"sweep\": {\"B\": [64, 128]}}")
        unknown = sorted(set(override) - set(KEYS))
        if unknown:
            raise BenchSettingsError(f"the third argument of parakern.bench: unknown key {unknown[0]!r} "
                                     f"(use {', '.join(KEYS)})")
        merged.update(override)
    out = {}
    for key in ("data", "sweep"):
        raw = merged.get(key) or {}
        if not isinstance(raw, dict):
            raise BenchSettingsError(f"parakern.bench.{key} must be an object of parameter values")
        out[key] = {str(n): _values(str(n), v, f"parakern.bench.{key}") for n, v in raw.items()}
    for key, default in (("repeat", DEFAULT_REPEAT), ("device", 0)):
        value = merged.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < (1 if key == "repeat" else 0):
            what = "a positive integer (launches timed per case)" if key == "repeat" else \
                "a GPU index, an integer >= 0 (0 is the first GPU)"
            raise BenchSettingsError(f"parakern.bench.{key} must be {what}, got {value!r}")
        out[key] = value
    return out


def request_from(settings: dict, override, base: dict) -> BenchRequest:
    """The request for one schedule (`base`: text, file, schedule, target, strategies, and
    mode and profiles where it is not a run on the GPU)."""
    return BenchRequest(**base, **bench_values(settings, override))


def settings_problem(value: dict) -> str:
    """'' when parakern.bench can be used, else what is wrong with it."""
    unknown = sorted(set(value) - set(KEYS))
    if unknown:
        return f"parakern.bench: unknown key {unknown[0]!r} (use {', '.join(KEYS)})"
    try:
        bench_values(value)
    except BenchSettingsError as exc:
        return str(exc)
    return ""


# ---------------------------------------------------------------- the bench process

def run_child(request: BenchRequest, events, parent: "int | None" = None) -> None:
    """The process body: everything reported through `events`, nothing raised; it ends
    with the server (`parent`) however that ends."""
    exit_with_parent(parent)
    try:  # the server's stdout is the LSP stream: nothing of this process may write there
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    except OSError:
        pass
    # deferred: the bench's modules (the pipeline, pycuda) load in this process, not in the server
    from parakern.lsp import benchrun
    benchrun.run(request, events)


class BenchProcess:
    """One bench in a spawned process; `events()` yields its reports, `stop()` ends it."""

    def __init__(self, request: BenchRequest):
        context = multiprocessing.get_context("spawn")
        self.events_queue = context.Queue()
        self.process = context.Process(target=run_child, args=(request, self.events_queue, os.getpid()), daemon=True,
                                       name="parakern-bench")
        self.process.start()

    async def next_event(self, poll: float = 0.2):
        """The next report; None when there was none for `poll` seconds (the caller checks for a
        cancellation then); an ("error", ...) when the process died without a last word."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(None, self.events_queue.get, True, poll)
        except queues.Empty:
            if self.process.is_alive():
                return None
            try:
                return self.events_queue.get_nowait()
            except queues.Empty:
                return ("error", f"the bench process ended with exit code {self.process.exitcode}")

    def kill(self) -> None:
        """Ends it at once (the server is ending; its scratch directory has a janitor)."""
        if self.process.is_alive():
            self.process.kill()

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(5)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(5)
        self.events_queue.close()
