"""One bench of one schedule: plan the sweep on the device, run every case that can run at
every point and the dispatcher once per point, each against the serial C baseline.

Shared by `parakern bench` and the language server's `parakern.bench`: progress goes to
a callback (a terminal bar, or LSP work-done progress) and a `cancelled` callable is
polled between launches, so a stopped bench ends after the launch in flight.
"""
from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass, field
from typing import Callable, Collection

from parakern.codegen import status
from parakern.analysis.facts import substitutions
from parakern.bench import plan as planning
from parakern.tuning.space import block_parameters
from parakern.bench import report
from parakern.bench.baseline import Baseline
from parakern.codegen import schedule_code
from parakern.analysis.fixed import fixable
from parakern.bench.runner import DoesNotFit, bytes_moved, compare
from parakern.verify.runner import CTYPES


class Cancelled(Exception):
    """The bench was stopped by its caller."""


@dataclass
class BenchOutcome:
    file: str
    plan: planning.Plan
    device: str
    serial_jobs: int = 1                                # serial C runs timed at the same time
    measurements: list = field(default_factory=list)   # report.Measurement, one per (point, case)
    dispatches: list = field(default_factory=list)     # report.Dispatch, one per runnable point and dispatcher

    def header(self) -> dict:
        """What the bench ran on: everything but the results."""
        return {"file": self.file, "schedule": self.plan.schedule.id, "device": self.device,
                "machine": planning.machine_json(self.plan.machine),
                "cases": [str(c.constraints) for c in self.plan.tree.cases],
                "every_case": self.plan.every_case, "serial_jobs": self.serial_jobs}

    def as_dict(self) -> dict:
        return {**self.header(), "results": [m.as_dict() for m in self.measurements],
                **report.dispatches_json(self.dispatches)}

    @property
    def correct(self) -> bool:
        return all(m.correct is not False for m in self.measurements) and \
            all(d.correct is not False for d in self.dispatches)


def _never() -> bool:
    return False


def bench(text: str, file: str, result, data: dict, sweeps: dict, runner_factory, device: int = 0,
          repeat: int = 20, progress: "Callable[[int, int, str], None] | None" = None,
          cancelled: Callable[[], bool] = _never, on_plan: "Callable | None" = None,
          serial_repeat: int = 3, every_case: bool = False, serial_cache: "str | None" = None,
          serial_jobs: int = 1, only: "Callable[[dict], bool] | None" = None,
          cases_at: "Callable[[dict], Collection[int]] | None" = None, dispatcher: bool = True,
          instances: bool = False) -> BenchOutcome:
    """Run the bench; PlanError for a sweep that cannot be planned, Cancelled when stopped.

    At every runnable point the function runs four ways on the same inputs: serial C (the
    baseline), with each execution of the schedule launching case k (for every case that can
    run there), and with each execution calling the generated dispatchers: the default one (the
    time model's fastest case), the tree's, then dispatch_tuned (report.DISPATCHERS). The whole outputs
    are compared; the times are the kernels' (or the dispatcher calls'), summed over the
    executions of the schedule in one call of the function. every_case: each case that can run
    at a point is timed there, its constraints on R dropped (planning.pick_case); serial_cache:
    a folder keeping serial results between benches of the same program (Baseline.run);
    serial_jobs > 1: the serial C of all points runs first, that many at a time (threads: the
    C call releases the GIL), before any GPU work, so a long serial baseline (matmul at
    n = 2048) costs a fraction of the wall time; each call is still timed on its own core.
    only: keeps the points of the sweep whose values it accepts; cases_at: of the cases that can
    run at a point, those to time there; dispatcher=False: the dispatcher is not timed (tune
    --measure times the configurations it chose, nothing else). instances: each case is also
    timed as its compile-time instance at the point's program parameters (`emit --fix`, the
    kernel a user deploys once the parameters are chosen; analysis/fixed.py), and the
    dispatchers launch those instances where they exist, as an emitted file's would."""
    progress = progress or (lambda i, n, what: None)
    code = schedule_code(result, swept_points(result.schedule, {**data, **sweeps}) if instances else ())
    gpu = runner_factory(code, device)
    try:
        plan = planning.make_plan(result, data, sweeps, gpu.machine(), every_case)
        if only is not None:
            plan.points = [p for p in plan.points if only(p.values)]
        if on_plan is not None:
            on_plan(plan)
        outcome = BenchOutcome(file, plan, gpu.name, serial_jobs)

        def runs(p) -> list:
            """(case, compile-time point or ()) to time at p."""
            cases = list(p.runs) if cases_at is None else [k for k in p.runs if k in cases_at(p.values)]
            out = [(k, ()) for k in cases]
            if instances:
                out += [(k, point) for k in cases for point in _instance_at(code, k, p.values)]
            return out
        total = sum(len(runs(p)) + len(report.DISPATCHERS) * dispatcher for p in plan.runnable)
        done, baselines = 0, {}
        with Baseline(text, file, result) as base:
            if serial_jobs > 1:
                baselines = _serial_all(base, plan, serial_repeat, serial_cache, serial_jobs,
                                        lambda i, n: progress(0, total, f"serial C {i}/{n}"), cancelled)
            for p in plan.points:
                label = " ".join(f"{n}={v}" for n, v in p.values.items())
                if p.skipped:
                    outcome.measurements.append(report.Measurement(p.values, None, p.reason))
                    continue
                too_large = base.memory_problem(p.values)
                if too_large:
                    outcome.measurements.append(report.Measurement(p.values, None, too_large))
                    continue
                scalars, arrays, _ = base.inputs(p.values)
                key = tuple(sorted(scalars.items()))
                if key not in baselines:  # the serial C depends on the data (and the point's scalars)
                    baselines[key] = base.run(scalars, arrays, repeat=serial_repeat, cache=serial_cache)
                serial_s, _, expected = baselines[key]
                cases = runs(p)
                for i, (k, fixed) in enumerate(cases):
                    if cancelled():
                        raise Cancelled()
                    progress(done, total, f"{label} case {k}" + (" at compile time" if fixed else ""))
                    measured = _case(gpu, base, plan, p, k, scalars, arrays, expected, serial_s, repeat, fixed)
                    outcome.measurements.append(measured)
                    done += 1
                    if measured.skipped == NEVER_RUN:   # the schedule never runs at these values: one row says so
                        done += len(cases) - i - 1
                        break
                if cancelled():
                    raise Cancelled()
                if not dispatcher:
                    continue
                for kind in report.DISPATCHERS:
                    if cancelled():
                        raise Cancelled()
                    progress(done, total, f"{label} {kind}")
                    call = _dispatcher(gpu, base, p, scalars, arrays, expected, serial_s, repeat, kind)
                    if call is not None:
                        outcome.dispatches.append(call)
                    done += 1
        progress(total, total, "done")
        return outcome
    finally:
        gpu.close()


def swept_points(schedule, sweeps: dict) -> tuple:
    """Every combination of the program parameters' values given (dicts): the points of the
    compile-time instances a bench with `instances` builds (fixed_points keeps the program
    parameters; a case gets an instance only where its constraints can hold)."""
    names = [p.name for p in fixable(schedule) if p.name in sweeps]
    return tuple(dict(zip(names, combo)) for combo in itertools.product(*(sweeps[n] for n in names)))


def _instance_at(code, k: int, values: dict) -> tuple:
    """The points of case k's compile-time instances that these values select (as the
    dispatcher's `B0 == 16 && ub1 == 32`: parameters the point leaves out, such as a time step
    the host sets, stay run-time values)."""
    mine = code.instances[k - 1] if k <= len(code.instances) else ()
    return tuple(point for point in mine if all(values.get(n) == v for n, v in point))


def _serial_all(base, plan, repeat: int, cache, jobs: int, progress, cancelled) -> dict:
    """{scalars key: (median s, times, outputs)} of every runnable point, `jobs` at a time;
    progress(i, n) as the i-th of n results arrives."""
    from concurrent.futures import ThreadPoolExecutor
    keys = {}
    for p in plan.runnable:
        if base.memory_problem(p.values):   # skipped with its reason by the loop over the points
            continue
        scalars = base.scalars(p.values)
        keys.setdefault(tuple(sorted(scalars.items())), p.values)

    def one(values):
        if cancelled():
            raise Cancelled()
        scalars, arrays, _ = base.inputs(values)
        return base.run(scalars, arrays, repeat=repeat, cache=cache)

    out = {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {key: pool.submit(one, values) for key, values in keys.items()}
        for i, (key, future) in enumerate(futures.items()):
            progress(i + 1, len(futures))
            out[key] = future.result()
    return out


NEVER_RUN = "the function does not execute the schedule at these values (a host loop around it runs no iteration)"


class CaseCannotRun(Exception):
    """A later execution of the schedule (other host values) is outside the case's region."""


def _case(gpu, base, plan, point, k, scalars, arrays, expected, serial_s, repeat,
          fixed: tuple = ()) -> report.Measurement:
    schedule = plan.schedule
    calls = []   # (median s, spread s, bytes) per execution of the schedule

    def launch(values, host):
        pick = planning.pick_case(plan.tree, substitutions(schedule, values, as_run=True), plan.machine,
                                  plan.every_case)
        if k not in (pick.runs if plan.every_case else pick.holds):
            now = " ".join(f"{n}={v}" for n, v in values.items())
            raise CaseCannotRun(f"case {k} cannot run at execution {len(calls) + 1} of the schedule ({now})")
        if fixed and fixed not in _instance_at(gpu.code, k, values):
            now = " ".join(f"{n}={v}" for n, v in values.items())
            raise CaseCannotRun(f"case {k}'s compile-time instance does not match execution {len(calls) + 1} "
                                f"of the schedule ({now})")
        times = gpu.launch(k, dict(pick.launches)[k], values, host, CTYPES, repeat, fixed)
        calls.append((statistics.median(times), max(times) - min(times), bytes_moved(schedule, host)))
        return k

    try:
        out, _ = base.run_hooked(scalars, arrays, launch)
    except (CaseCannotRun, DoesNotFit) as exc:
        return report.Measurement(point.values, k, str(exc), picked=point.case, serial_s=serial_s,
                                  compile_time=bool(fixed))
    if not calls:   # jacobi at T = 0: nothing to time, nothing the kernels could get wrong
        return report.Measurement(point.values, None, NEVER_RUN, picked=point.case, serial_s=serial_s)
    correct, mismatch = compare(schedule, expected, out)
    gpu_s = sum(c[0] for c in calls)
    moved = sum(c[2] for c in calls)
    copy_bytes = max(1, calls[0][2] // 2) if calls else 1
    copy_s = gpu.copy_time(copy_bytes, repeat)
    return report.Measurement(
        point.values, k, "", gpu_s=gpu_s, gpu_spread_s=sum(c[1] for c in calls), serial_s=serial_s,
        bytes_moved=moved, bandwidth_gbs=moved / gpu_s / 1e9 if gpu_s else math.nan,
        copy_gbs=2 * copy_bytes / copy_s / 1e9 if copy_s else math.nan, registers=gpu.registers(k, fixed),
        correct=correct, mismatch=mismatch, launch=point.launch_of(k), picked=point.case, calls=len(calls),
        compile_time=bool(fixed))


def _dispatcher(gpu, base, point, scalars, arrays, expected, serial_s, repeat,
                kind: str = report.DISPATCHER) -> "report.Dispatch | None":
    cases, total = [], [0.0]

    def launch(values, host):
        case, times = gpu.dispatch(values, host, repeat, report.WHICH[kind])
        if case < 0:
            raise RuntimeError(status.meaning(case, gpu.last_error()))
        cases.append(case)
        total[0] += statistics.median(times)
        return case

    picked = point.tree_case if kind == report.DISPATCHER else point.case
    try:
        out, _ = base.run_hooked(scalars, arrays, launch)
    except RuntimeError as exc:
        return report.Dispatch(point.values, picked, None, serial_s=serial_s, correct=False, mismatch=str(exc),
                               kind=kind)
    if not cases:
        return None   # the schedule never ran here (NEVER_RUN: the cases' rows say so)
    correct, mismatch = compare(base.schedule, expected, out)
    return report.Dispatch(point.values, picked, cases[0], dispatch_s=total[0],
                           serial_s=serial_s, correct=correct, mismatch=mismatch, calls=len(cases),
                           cases=sorted(set(cases)), kind=kind)


def block_names(plan: planning.Plan) -> list:
    """The swept parameters that size the block: the rows of the paper's tables."""
    names = block_parameters(plan.schedule)
    return [n for n in plan.sweep_names if n in names]
