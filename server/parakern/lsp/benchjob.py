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
import itertools
import multiprocessing
import os
import queue as queues
from dataclasses import dataclass, field

from parakern.machine.devices import get_profile
from parakern.reports.tuning import configuration_text, time_text, tuning_text

DEFAULT_DATA = 1024          # every data parameter: a quick first look; set parakern.bench.data for more
DEFAULT_BLOCK_1D = [32, 64, 128, 256]
DEFAULT_BLOCK_2D = [8, 16, 32]
DEFAULT_OTHER = [1, 2, 4]    # granularity and the other program parameters
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


def complete_sweep(schedule, tree, data: dict, sweep: dict) -> tuple[dict, dict, list]:
    """Defaults for the parameters the bench needs and was not given: (data, sweep, defaulted)."""
    import sympy
    from parakern.tuning.space import block_parameters, needed_parameters
    data, sweep, defaulted = dict(data), dict(sweep), []
    block = block_parameters(schedule)
    # a program parameter in a case's constraints is a tuning knob (granularity s in 8·s·B+8 ≤ Z);
    # one that only sizes the grid is a problem size (saxpy's n, whose array size is not visible)
    tuning = {x.name for case in tree.cases for rel in case.constraints.relations
              for x in sympy.sympify(rel).free_symbols}
    kinds = {p.name: p.kind for p in schedule.params}
    for name in needed_parameters(schedule, tree):
        if name in data or name in sweep:
            continue
        if name in block:
            sweep[name] = DEFAULT_BLOCK_2D if len(block) > 1 else DEFAULT_BLOCK_1D
        elif kinds.get(name) == "data" or name not in tuning:
            data[name] = [DEFAULT_DATA]
        else:
            sweep[name] = DEFAULT_OTHER
        defaulted.append(name)
    return data, sweep, defaulted


# ---------------------------------------------------------------- the bench process

def run_child(request: BenchRequest, events, parent: "int | None" = None) -> None:
    """The process body: everything reported through `events`, nothing raised; it ends
    with the server (`parent`) however that ends."""
    import os
    import sys

    from parakern.process.lifeline import exit_with_parent
    exit_with_parent(parent)
    try:  # the server's stdout is the LSP stream: nothing of this process may write there
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    except OSError:
        pass
    try:
        events.put(("done", _bench(request, events)))
    except _Missing as exc:
        lack = exc.args[0]
        events.put(("missing", {"what": lack.what, "advice": lack.advice, "no_gpu": lack.no_gpu}))
    except Exception as exc:  # one line for the user, never a traceback
        excerpt = getattr(exc, "excerpt", None)
        detail = f": {excerpt(3)}" if callable(excerpt) else ""
        events.put(("error", f"{type(exc).__name__}: {exc}{detail}"))


class _Missing(Exception):
    pass


def _bench(request: BenchRequest, events) -> dict:
    from parakern.bench import plan as planning
    from parakern.bench import report, session
    from parakern.bench.runner import GpuRunner, missing
    lack = missing() if request.mode == "run" else None
    if lack is not None:
        raise _Missing(lack)
    schedule, result = _analysed(request)
    data, sweep, defaulted = complete_sweep(schedule, result.tree, request.data, request.sweep)
    if request.mode == "plan":
        return _plans(request, result, data, sweep, defaulted)
    if request.mode == "tune":
        return _tunings(request, result, data, [n for n in defaulted if n in data])   # tune picks the rest
    try:
        outcome = session.bench(
            request.text, request.file, result, data, sweep, GpuRunner, request.device, request.repeat,
            progress=lambda i, n, what: events.put(("progress", i, n, what)),
            on_plan=lambda plan: events.put(("plan", planning.plan_text(plan))))
    except planning.PlanError as exc:
        raise ValueError(str(exc)) from None
    rows, names = session.block_names(outcome.plan), list(outcome.plan.data_names)
    document = outcome.as_dict()
    document.update({
        "data": data, "sweep": sweep, "defaulted": defaulted, "repeat": request.repeat,
        "correct": outcome.correct,
        "markdown": report.table_text(outcome.measurements, rows, names, markdown=True,
                                      dispatches=outcome.dispatches),
        "summary": report.summary_lines(outcome.measurements, outcome.dispatches)})
    return document


def _analysed(request: BenchRequest):
    from parakern.lsp import worker
    from parakern.pipeline import optimize_schedule
    job = worker.AnalysisJob(text=request.text, file=request.file, id=request.schedule, target=request.target,
                             strategies=None if request.strategies is None else tuple(request.strategies))
    schedule = worker.schedule_of(job)
    result = optimize_schedule(schedule, worker.options_of(job))
    if result.tree is None or not result.tree.cases:
        raise ValueError(f"meta_schedule {request.schedule} has no case tree: fix its errors first")
    return schedule, result


def _values_text(values: dict) -> str:
    return " ".join(f"{n}={v[0] if len(v) == 1 else v}" for n, v in values.items())


def _plans(request: BenchRequest, result, data: dict, sweep: dict, defaulted: list) -> dict:
    """--plan-only for each profile: the case each point of the bench would run there."""
    from parakern.bench import plan as planning
    parts, summary = [], []
    for name in request.profiles:
        try:
            plan = planning.make_plan(result, data, sweep, get_profile(name))
        except planning.PlanError as exc:
            raise ValueError(str(exc)) from None
        cases = sorted({p.case for p in plan.runnable})
        summary.append(f"{name}: case {', '.join(map(str, cases))} at {len(plan.runnable)} of {len(plan.points)} "
                       "points" if cases else f"{name}: no point runs ({plan.points[0].reason})")
        parts += [f"## {name} ({plan.machine.name})", "", "```", planning.plan_text(plan), "```", ""]
    return {"mode": "plan", "data": data, "sweep": sweep, "defaulted": defaulted, "summary": summary,
            "markdown": "\n".join([f"Points: {_values_text({**data, **sweep})}", "", *parts]).rstrip()}


def _tunings(request: BenchRequest, result, data: dict, defaulted: list) -> dict:
    """tune for each profile, at each point of the data values: the model's best program parameters
    (the data values of parameters this schedule has: the settings apply to every file)."""
    from parakern.tuning import search, time_model  # sympy: in the bench process only
    names = [n for n in data if n in {p.name for p in result.schedule.params}]
    points = [dict(zip(names, combo)) for combo in itertools.product(*(data[n] for n in names))]
    parts, summary = [], []
    for name in request.profiles:
        try:
            device = time_model.modelled(get_profile(name))
            tunings = [(result, fixed, search.tune(result, fixed, device)) for fixed in points]
        except (time_model.ModelError, search.TuneError) as exc:
            raise ValueError(f"{exc} (set parakern.bench.data)") from None
        for fixed, (_, _, t) in zip(points, tunings):
            at = f" at {_values_text({n: [v] for n, v in fixed.items()})}" if fixed else ""
            summary.append(f"{name}{at}: {configuration_text(t.pick)}, {time_text(t.pick.prediction.time)}"
                           if t.pick is not None else f"{name}{at}: no feasible configuration")
        parts += [f"## {name} ({device.name})", "", "```",
                  tuning_text(tunings, device, 5, False, request.file), "```", ""]
    return {"mode": "tune", "data": data, "defaulted": defaulted, "summary": summary,
            "markdown": "\n".join(parts).rstrip()}


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
