"""The editor's bench of one schedule, in the process benchjob.py starts for it: the case tree,
then the bench on the GPU, or where there is none, its plan or tune's recommendation."""
from __future__ import annotations

import itertools

from parakern.bench import plan as planning
from parakern.bench import report, session
from parakern.bench.runner import GpuRunner, missing
from parakern.lsp import worker
from parakern.lsp.tasks import AnalysisJob
from parakern.lsp.benchjob import BenchRequest
from parakern.machine.devices import get_profile
from parakern.pipeline import optimize_schedule
from parakern.reports.tuning import configuration_text, time_text, tuning_text
from parakern import search
from parakern.tuning import time_model
from parakern.tuning.space import complete_sweep


def run(request: BenchRequest, events) -> None:
    """The bench (or its plan, or tune) of the request, reported through `events`: nothing raised."""
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
    job = AnalysisJob(text=request.text, file=request.file, id=request.schedule, target=request.target,
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


