"""The best configurations of a schedule on a device: every candidate value of its tuned
parameters, every case whose kernel fits the device there (dispatch.choose: the cases the
default dispatcher chooses among), and each one's predicted time (time_model.py, as
dispatch.choose predicts it), fastest per point computed first. At each candidate the default
dispatcher launches the fastest of them (its configuration's `by` is dispatch.FASTEST); the others
are marked ANOTHER.

The tuned parameters are the program parameters that size a block (a block-level meta_for
extent) or divide a grid extent (granularity: `n / (ub1 * s)`); every other parameter has
the value the caller gives (data sizes, a time step, a scalar). Candidates: powers of two
up to 1024 for a block size, up to 64 for the others; a configuration is feasible when every
fact of the schedule holds there (asserts, divisibility, loop bounds), its case's kernel fits
the device and launches within CUDA's limits, and a block of it can be resident on an SM.
The same candidates and cases, in the same order (candidates first, then cases), are what the
generated `dispatch_auto` tries (codegen/auto.py); ties go to the first, as there.

Tuning must not change what the program computes: where a tuned parameter rounds a loop's
extent (`(N - 2) / (B1 * s)` grid columns), a candidate may run fewer iterations than the
serial program means (coverage.py). Configurations are ranked by time per point computed (the
model's ranked time over the fraction covered), each one that leaves points out is marked with
its fraction, and the pick computes every point wherever some feasible candidate does.
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass

import sympy

from parakern import dispatch
from parakern.analysis.facts import judge_facts, not_given, substitutions
from parakern.analysis.invariance import candidate_parameters, result_changing
from parakern.machine.devices import Device
from parakern.tuning import coverage, time_model
from parakern.tuning.space import needed_parameters, space, tuned_parameters

TIE = dispatch.TIE                                      # relative: a later candidate must be faster by more


class TuneError(ValueError):
    """A value missing or wrong, or nothing feasible: one line for the user."""


@dataclass(frozen=True)
class Configuration:
    case: int                        # 1-based
    values: tuple                    # ((name, value), ...) of the tuned parameters
    prediction: time_model.Prediction
    grid: tuple
    block: tuple
    shared_bytes: int
    by: str                          # what makes the default dispatcher launch the case at these values
                                     # (dispatch.FASTEST, or the tree's pass where the model has no time);
                                     # ANOTHER where it launches another case there
    order: tuple                     # (index among the candidates, case): ties go to the first
    decisions: tuple = ()            # the case's trail: which kernel it is, whatever today's numbering
    covered: float = 1.0             # the share of the serial program's iterations it computes (coverage.py)

    @property
    def time(self) -> float:
        return self.prediction.time

    @property
    def partial(self) -> bool:
        """Whether it leaves points of the serial program's iteration space out."""
        return self.covered < 1.0

    @property
    def computes(self) -> str:
        """`all`, or the share of the points it computes (`49.6%`)."""
        return coverage.percent(self.covered) if self.partial else "all"

    @property
    def per_point(self) -> float:
        """What configurations are ranked by: the ranked time per point computed (relative to all)."""
        return self.prediction.ranked / self.covered if self.covered > 0.0 else math.inf

    def as_dict(self) -> dict:
        p = self.prediction
        return {"case": self.case, "parameters": dict(self.values), "predicted_s": p.time,
                "occupancy": p.occupancy, "resident_blocks": p.resident, "bytes_moved": p.bytes_moved,
                "limited_by": p.limiting, "grid": list(self.grid), "block": list(self.block),
                "shared_bytes": self.shared_bytes, "pass": self.by, "decisions": list(self.decisions),
                "covered": self.covered, "model": {k: v for k, v in p.steps}}


@dataclass(frozen=True)
class Tuning:
    schedule: str                    # id
    device: str                      # profile key
    fixed: tuple                     # ((name, value), ...) given
    tuned: tuple                     # names
    candidates: int                  # tried
    feasible: int
    configurations: tuple            # Configuration, by time per point computed (the pick first)
    rejected: tuple = ()             # ((why, count), ...) of the infeasible candidates, most frequent first
    coverage: "coverage.Coverage | None" = None   # the loops whose iterations the tuned parameters round

    @property
    def pick(self) -> "Configuration | None":
        return self.configurations[0] if self.configurations else None

    def shortfall(self, schedule, configuration: Configuration) -> str:
        """The loops a configuration of this tuning of `schedule` runs short (`loops j, v, k run
        2048 of 4094 iterations`)."""
        if self.coverage is None:
            return ""
        values = {**dict(self.fixed), **dict(configuration.values)}
        return self.coverage.short(substitutions(schedule, values, as_run=True))

    def as_dict(self, top: "int | None" = None) -> dict:
        shown = self.configurations[:top] if top else self.configurations
        return {"schedule": self.schedule, "device": self.device, "fixed": dict(self.fixed),
                "tuned": list(self.tuned), "candidates": self.candidates, "feasible": self.feasible,
                "configurations": [c.as_dict() for c in shown],
                "rejected": [{"why": w, "count": n} for w, n in self.rejected]}


def _needed(schedule, tree, quantities, covers: coverage.Coverage) -> list:
    names = set(needed_parameters(schedule, tree))
    for q in quantities:
        for e in q.expressions().values():
            names |= {x.name for x in sympy.sympify(e).free_symbols}
    for g in covers.groups:
        names |= {x.name for x in (g.count.free_symbols | g.reference.free_symbols)}
    return [p.name for p in schedule.params if p.name in names]


def tune(result, fixed: dict, device: Device, host: "dict | None" = None,
         candidates: "dict | None" = None) -> Tuning:
    """Every feasible configuration of a schedule's tuned parameters at the `fixed` values on
    `device`, by time per point computed (the pick first); TuneError for a value missing or a
    parameter unknown. host: values of the function's other scalar arguments (its facts may read
    them: `assert(n % (s*B) == 0)`
    with s no parameter of the schedule). candidates: name -> values to try instead of the
    tuning space's (a bench's sweep)."""
    schedule, tree = result.schedule, result.tree
    if tree is None or not tree.cases:
        raise TuneError(f"{schedule.id} has no case tree")
    known = {p.name for p in schedule.params}
    unknown = [n for n in fixed if n not in known]
    if unknown:
        raise TuneError(f"{schedule.id} has no parameter {unknown[0]} (parameters: "
                        f"{', '.join(p.name for p in schedule.params)})")
    quantities = time_model.tree_quantities(tree)
    covers = coverage.coverage(schedule, tuned_parameters(schedule))
    names, lists = space(schedule, fixed)
    lists = tuple(tuple((candidates or {}).get(n, values)) for n, values in zip(names, lists))
    missing = [n for n in _needed(schedule, tree, quantities, covers) if n not in fixed and n not in names]
    if missing:
        changing = {c.parameter: c for c in result_changing(schedule, candidate_parameters(schedule))}
        counts = {str(lp.extent) for lp in schedule.grid}   # `meta_for (b = 0; b < G; b++)`: G blocks
        why = "".join(f" ({n} is not tuned: its value changes what the schedule computes, PK043 at "
                      f"{changing[n].span.line}:{changing[n].span.col})" if n in changing else
                      f" ({n} is the number of blocks of a grid level: tune chooses block sizes, not it)"
                      if n in counts else "" for n in missing)
        give = " ".join(f"--data {n}=..." for n in missing)
        raise TuneError(f"{schedule.id}: no value for {', '.join(missing)}{why}; give {give}")
    found, rejected, order, feasible = [], {}, 0, 0
    for order, combo in enumerate(itertools.product(*lists)):
        values = {**fixed, **dict(zip(names, combo))}
        configs, why = _judge(result, quantities, covers, values, device, names, order, host or {})
        if not configs:
            rejected[why] = rejected.get(why, 0) + 1
        else:
            found += configs
            feasible += 1
    count = order + 1 if lists or not names else 0
    ranked = sorted(found, key=lambda c: (c.per_point, c.order))
    best = pick(found)
    if best is not None:
        ranked.remove(best)
        ranked.insert(0, best)
    reasons = tuple(sorted(rejected.items(), key=lambda kv: -kv[1]))
    return Tuning(schedule.id, device.key, tuple(sorted(fixed.items())), names, count, feasible,
                  tuple(ranked), reasons, covers)


def pick(configurations) -> "Configuration | None":
    """The configuration dispatch_auto takes: in candidate order, a later one replaces the best
    when it computes every point and the best does not, or, both alike, when its ranked time
    (time_model.FORMULA) per point computed is lower by more than TIE (relative), as the C does."""
    best = None
    for c in sorted(configurations, key=lambda c: c.order):
        if best is None or better(c.partial, c.per_point, best.partial, best.per_point):
            best = c
    return best


def better(partial: bool, per_point: float, best_partial: bool, best_per_point: float) -> bool:
    """Whether a candidate replaces the best so far (the rule dispatch_auto prints in C)."""
    if partial != best_partial:
        return not partial
    return per_point < best_per_point * (1 - TIE)


ANOTHER = "another"      # a configuration whose case the default dispatcher does not launch at its values


def _judge(result, quantities, covers, values, device, names, order, host: dict) -> tuple:
    """(configurations of this candidate: one per case whose kernel fits, in the tree's
    order; why none is feasible when there are none)."""
    schedule, tree = result.schedule, result.tree
    subs = substitutions(schedule, values, as_run=True)
    verdict = judge_facts(schedule, substitutions(schedule, {**host, **values}, as_run=True) if host else subs,
                          origin=False)
    if verdict.why:   # counted by reason: "violates n % (s*ub1) == 0", not by line
        return (), not_given(schedule, {**host, **values}, verdict)
    choice = dispatch.choose(tree, device, subs)
    if choice.case is None:   # where every case exceeds a limit, the first (doitgen's gridDim.y = nr*nq > 65535)
        beyond = choice.limits[0] if choice.limits and all(choice.limits) else ""
        return (), "no case fits the device" + (f": {beyond}" if beyond else "")
    out = []
    covered = covers.fraction(subs)
    for k in dict.fromkeys((choice.case, *choice.fits)):
        prediction = choice.prediction(k)
        if prediction is None:
            continue
        sizes = choice.launches[k - 1]
        out.append(Configuration(k, tuple((n, values[n]) for n in names), prediction, tuple(sizes.grid),
                                 tuple(sizes.block), int(sizes.shared_bytes or 0),
                                 choice.by if k == choice.case else ANOTHER, (order, k),
                                 tree.cases[k - 1].decisions, covered))
    out.sort(key=lambda c: c.order)
    return tuple(out), "" if out else "no block can be resident"


@dataclass(frozen=True)
class SharedChoice:
    """One value per parameter that several schedules of a function tune: the function takes
    it once (one argument), so the schedules must agree on it."""
    function: str
    shared: tuple                    # names tuned by two schedules or more
    values: tuple                    # ((name, value), ...) chosen
    picks: tuple                     # (schedule id, Configuration) each schedule runs with them
    alone: float                     # the sum of each schedule's own pick (a bound: they disagree)

    @property
    def time(self) -> float:
        return sum(c.time for _, c in self.picks)

    def agrees(self) -> bool:
        """Whether each schedule's own pick is already this choice."""
        return math.isclose(self.time, self.alone, rel_tol=1e-12)

    @property
    def every_value(self) -> tuple:
        """((name, value), ...): the shared values, then what each schedule tunes alone at its
        configuration: every value the function is compiled with."""
        out = dict(self.values)
        for _, c in self.picks:
            for n, v in c.values:
                out.setdefault(n, v)
        return tuple(out.items())

    def as_dict(self) -> dict:
        return {"function": self.function, "shared": list(self.shared), "parameters": dict(self.values),
                "compile_with": dict(self.every_value), "predicted_s": self.time, "each_alone_s": self.alone,
                "schedules": [{"schedule": s, **c.as_dict()} for s, c in self.picks]}


def shared_choices(tunings: list) -> tuple:
    """(function, tuning) pairs -> a SharedChoice per function whose schedules tune a parameter
    in common: the common values that make the sum of their ranked times per point computed
    least, each schedule at the configuration `pick` takes among those with them (the
    tie-break of time_model.FORMULA's `ranked` included: where the times tie, full warps, not 1-thread
    blocks), values with which every schedule computes every point first."""
    by_function: dict = {}
    for function, t in tunings:
        if t.pick is not None:
            by_function.setdefault(function, []).append(t)
    out = []
    for function, mine in by_function.items():
        counts = Counter(n for t in mine for n in t.tuned)   # in the order the schedules name them
        shared = tuple(n for n, k in counts.items() if k > 1)
        if not shared:
            continue
        best = None
        seen = {n: sorted({v for t in mine for c in t.configurations for m, v in c.values if m == n})
                for n in shared}
        for combo in itertools.product(*(seen[n] for n in shared)):
            wanted = dict(zip(shared, combo))
            picks = []
            for t in mine:
                fits = pick([c for c in t.configurations if all(wanted.get(n, v) == v for n, v in c.values)])
                if fits is None:
                    break
                picks.append((t.schedule, fits))
            else:
                partial, total = any(c.partial for _, c in picks), sum(c.per_point for _, c in picks)
                if best is None or better(partial, total, best[0], best[1]):
                    best = (partial, total, tuple(wanted.items()), tuple(picks))
        if best is not None:
            out.append(SharedChoice(function, shared, best[2], best[3], sum(t.pick.time for t in mine)))
    return tuple(out)
