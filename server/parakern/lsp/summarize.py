"""What an analysis worker computes of one schedule: its `ScheduleSummary` (summary.py)
from a pipeline result, z3 deciding the per-GPU conditions, the time model the
recommendation per GPU profile, the traffic model the memory lines. Runs in the worker
processes (lsp/worker.py); the server never imports it.
"""
from __future__ import annotations

import dataclasses
from typing import Iterable

import sympy

from parakern import syntax
from parakern.dispatch import on_profile, runnable
from parakern.analysis.facts import fact_arguments
from parakern.analysis.point import describe
from parakern.analysis.updates import described
from parakern.lsp.summary import CaseInfo, ProfileInfo, RunInfo, ScheduleSummary, TuneInfo, diag_info, math_text
from parakern.machine.devices import get_profile
from parakern.reports.casetree import tree_dot, tree_text
from parakern.reports.traffic import case_line, schedule_traffic
from parakern.reports.runs import at_text, runs
from parakern.reports.tuning import bytes_text, configuration_text, time_text
from parakern.symbolic import constraints as cs
from parakern.symbolic.printing import to_c, to_math
from parakern import search
from parakern.tuning import space, time_model
from parakern.tuning.space import DEFAULT_DATA


def chain_text(relations) -> str:
    """Relations joined with ∧, `a ≤ X` and `X < b` merged into `a ≤ X < b`."""
    items = [cs.canonical(r) for r in relations]
    used = [False] * len(items)
    parts = []
    ops = {sympy.Le: "≤", sympy.Lt: "<"}
    for i, r in enumerate(items):
        if used[i]:
            continue
        used[i] = True
        if type(r) in ops and isinstance(r.rhs, sympy.Symbol):
            for j, other in enumerate(items):
                if not used[j] and type(other) in ops and other.lhs == r.rhs:
                    used[j] = True
                    parts.append(f"{math_text(r.lhs)} {ops[type(r)]} {math_text(r.rhs)} "
                                 f"{ops[type(other)]} {math_text(other.rhs)}")
                    break
            else:
                parts.append(to_math(r))
        else:
            parts.append(to_math(r))
    return " ∧ ".join(parts) or "always"


def case_info(case, index: int, profiles: tuple = ()) -> CaseInfo:
    values = dict(case.counters)
    occupancy = values.get("occupancy")
    witness = tuple(sorted((k, v if isinstance(v, (int, float)) else str(v))
                           for k, v in (case.witness or {}).items()))
    return CaseInfo(
        index=index,
        constraints=tuple(to_math(r) for r in case.constraints.relations),
        constraints_c=tuple(to_c(r) for r in case.constraints.relations),
        condition=chain_text(case.constraints.relations),
        decisions=tuple(case.decisions),
        registers=math_text(values.get("registers", "?")),
        shared=math_text(values.get("shared_memory", 0)),
        threads=math_text(values.get("threads", "?")),
        occupancy=None if occupancy is None else math_text(occupancy),
        cached=tuple(getattr(case.kernel, "cached", ()) or ()),
        witness=witness,
        verified=bool(case.verified),
        needs=chain_text(case.needs.relations),
        profiles=tuple(profiles),
    )


def profile_info(tree, key: str) -> ProfileInfo:
    """Under which condition on the program parameters each case runs on this GPU
    (parakern.dispatch.on_profile), as the editor shows it."""
    cases = on_profile(tree, key)
    conditions = tuple((k, None if relations is None else chain_text(relations) if relations else "")
                       for k, relations in cases.conditions)
    return ProfileInfo(cases.key, cases.name, cases.values, conditions)


def tune_info(result, key: str, data: "dict | None" = None) -> TuneInfo:
    """The best configuration by the time model on a GPU profile, at `data` (default: every
    parameter that is not tuned, and every argument only the function's asserts read, at the
    bench's default size): one that computes every point where any does, else marked."""
    schedule = result.schedule
    tuned = space.tuned_parameters(schedule)
    values = dict(data or {})
    for p in schedule.params:
        if p.name not in tuned and p.name not in values and p.ctype in syntax.INTEGER_TYPES:
            values[p.name] = 0 if p.name in schedule.host_loops else DEFAULT_DATA
    # the function's arguments only its asserts read (another schedule's size) at the same size
    host = {n: DEFAULT_DATA for n in sorted(fact_arguments(schedule)) if n not in values}
    shown = " ".join(f"{n}={v}" for n, v in {**values, **host}.items() if n not in schedule.host_loops)
    try:
        tuning = search.tune(result, values, time_model.modelled(get_profile(key)), host)
    except (search.TuneError, time_model.ModelError, KeyError) as exc:
        return TuneInfo(key, shown, str(exc).strip("'\""))
    pick = tuning.pick
    if pick is None:
        return TuneInfo(key, shown, "no feasible configuration")
    text = configuration_text(pick)
    if pick.partial:   # only where no feasible candidate computes every point
        text += (f" — computes {pick.computes} of the serial program's iterations: no candidate "
                 "computes them all at these sizes")
    else:   # why a slow configuration: the faster ones compute less
        fastest = min(tuning.configurations, key=lambda c: (c.prediction.ranked, c.order))
        if fastest.partial:
            text += (f" — faster ones leave points out ({configuration_text(fastest)} computes {fastest.computes}: "
                     f"{tuning.shortfall(schedule, fastest)})")
    return TuneInfo(key, shown, text, time_text(pick.time), f"{pick.prediction.occupancy:.2f}")


def run_infos(result, profiles: Iterable[str], sizes: "dict | None" = None) -> tuple:
    """What the default dispatcher launches per GPU profile at the bench's sizes (sizes: the
    editor's parakern.bench {"data": ..., "sweep": ...}; its defaults where absent), never raising."""
    sizes = sizes or {}
    try:
        found = runs(result, tuple(profiles), sizes.get("data"), sizes.get("sweep"))
    except Exception as exc:  # the model must not cost the editor its summary
        return tuple(RunInfo(key, "", why=f"the time model failed ({type(exc).__name__}: {exc})") for key in profiles)
    return tuple(RunInfo(r.key, at_text(r), r.case, time_text(r.predicted_s) if r.case else "",
                         str(r.registers) if r.case else "", bytes_text(r.shared_bytes) if r.shared_bytes else "",
                         str(r.threads) if r.case else "", r.others, r.tree, r.why) for r in found)


def summarize(result, key: str, origin: int, profiles: Iterable[str], seconds: float = 0.0,
              file: "str | None" = None, tune: bool = True, sizes: "dict | None" = None) -> ScheduleSummary:
    """A pipeline.ScheduleResult as a summary (runs in the worker: z3 for the profiles).
    tune: False leaves the recommended configurations out (`tunings` adds them later: the
    language server shows the cases first). sizes: the bench's data and sweep settings, at which
    the summary says what the default dispatcher launches (`run_infos`)."""
    schedule = result.schedule
    diagnostics = tuple(diag_info(d, origin, file) for d in result.diagnostics)
    tree = result.tree
    if tree is None:
        return ScheduleSummary(key, schedule.id, schedule.function, "no-tree",
                               diagnostics=diagnostics, seconds=seconds)
    atomics = described(schedule)
    if not tree.complete:   # the cases, at once; where they run, traffic and the rest follow
        return ScheduleSummary(key, schedule.id, schedule.function, "ok", diagnostics=diagnostics,
                               cases=tuple(case_info(c, k) for k, c in enumerate(tree.cases, 1)),
                               seconds=seconds, not_applied=tuple(result.not_applied), complete=False,
                               atomics=atomics)
    on = dict(runnable(tree))
    cases = tuple(case_info(c, k, on[k]) for k, c in enumerate(tree.cases, 1))
    point, lines = _traffic(result)
    if lines:
        cases = tuple(dataclasses.replace(c, traffic=line) for c, line in zip(cases, lines))
    uncovered = tuple((" ∧ ".join(to_math(r) for r in u.constraints.relations) or "always", u.limits)
                      for u in tree.uncovered)
    infos = tuple(profile_info(tree, p) for p in profiles)
    return ScheduleSummary(key, schedule.id, schedule.function, "ok", diagnostics=diagnostics,
                           cases=cases, uncovered=uncovered, coverage=tree.coverage.status,
                           profiles=infos, tree_text="\n".join(tree_text(tree, on)),
                           tree_dot=tree_dot(tree, schedule.id), seconds=seconds,
                           not_applied=tuple(result.not_applied), traffic_point=point,
                           tuning=tunings(result, profiles) if tune else (), atomics=atomics,
                           runs=run_infos(result, profiles, sizes))


def tunings(result, profiles: Iterable[str]) -> tuple:
    """The recommended configuration per GPU profile (TuneInfo), never raising."""
    return tuple(_tune_safely(result, p) for p in profiles)


def _tune_safely(result, key: str) -> TuneInfo:
    try:
        return tune_info(result, key)
    except Exception as exc:  # the model must not cost the editor its summary
        return TuneInfo(key, "", f"the time model failed ({type(exc).__name__}: {exc})")


def _traffic(result) -> tuple[str, list[str]]:
    """The point and one line per case of memory traffic (reports/traffic.py); none on failure."""
    try:
        point, per_case = schedule_traffic(result)
    except Exception:   # a figure the editor can do without: never a failed summary
        return "", []
    if point is None:
        return "", []
    return describe(point), [case_line(t) for t in per_case]


