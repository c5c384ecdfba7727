"""What runs: per GPU profile, the case the default dispatcher launches at a typical size, its
predicted time, and which other cases fit there. `optimize` (text and JSON), the hover and the
lens say it from here, from the rule the generated dispatcher prints (dispatch.choose).

The typical size is the bench's: every data parameter at its first value of the bench's data (the
editor's parakern.bench.data, else tuning.space.DEFAULT_DATA), a host loop's variable at 0, and the
program parameters at the point of the bench's sweep (parakern.bench.sweep, else the bench's
default sweep) where the time model predicts the default dispatcher fastest per point computed
(tune's `pick` over the sweep alone: search.tune with those candidates). At that point,
dispatch.choose gives the case launched, its prediction and the cases that fit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from parakern import dispatch, search, syntax
from parakern.analysis.facts import fact_arguments, substitutions
from parakern.machine.devices import get_profile
from parakern.reports.tuning import bytes_text, time_text
from parakern.tuning import time_model
from parakern.tuning.space import DEFAULT_DATA, complete_sweep, tuned_parameters


@dataclass(frozen=True)
class Runs:
    """What the default dispatcher launches on one GPU profile at the typical size."""
    key: str                             # "h100"
    name: str                            # "NVIDIA H100 SXM5 80GB"
    at: tuple = ()                       # ((name, value), ...): the point
    case: "int | None" = None            # the case launched; None: see `why`
    predicted_s: float = math.nan        # the model's seconds of one launch
    registers: "int | None" = None       # per thread (the tree's counter)
    shared_bytes: int = 0                # dynamic shared memory per block at the point
    threads: int = 0                     # per block at the point
    fits: tuple = ()                     # every case that fits there, the launched one among them
    tree: "int | None" = None            # the case the tree's order (dispatch_tree) launches there
    why: str = ""                        # why nothing is said (no model, nothing feasible)

    @property
    def others(self) -> tuple:
        """The other cases that fit there."""
        return tuple(k for k in self.fits if k != self.case)

    def as_dict(self) -> dict:
        return {"profile": self.key, "device": self.name, "at": dict(self.at), "case": self.case,
                "predicted_s": None if math.isnan(self.predicted_s) else self.predicted_s,
                "registers": self.registers, "shared_bytes": self.shared_bytes, "threads": self.threads,
                "fits": list(self.fits), "tree_case": self.tree, "why": self.why or None}


def typical(result, data: "dict | None" = None, sweep: "dict | None" = None) -> tuple:
    """(fixed values, sweep candidates of the tuned parameters, host values of the function's other
    arguments) of the typical size (see the module's docstring): the bench's data and sweep
    (tuning.space.complete_sweep), every other integer parameter the model reads at DEFAULT_DATA."""
    schedule = result.schedule
    data_lists, sweep_lists, _ = complete_sweep(schedule, result.tree, data or {}, sweep or {})
    tuned = set(tuned_parameters(schedule))
    fixed, candidates = {}, {}
    for p in schedule.params:
        if p.name in schedule.host_loops:
            fixed[p.name] = 0
        elif p.name in sweep_lists and p.name in tuned:
            candidates[p.name] = tuple(sweep_lists[p.name])
        elif p.name in sweep_lists or p.name in data_lists:
            fixed[p.name] = (sweep_lists.get(p.name) or data_lists[p.name])[0]
        elif p.ctype in syntax.INTEGER_TYPES and p.name not in tuned:
            fixed[p.name] = DEFAULT_DATA
    host = {n: DEFAULT_DATA for n in sorted(fact_arguments(schedule)) if n not in fixed}
    return fixed, candidates, host


def runs_on(result, key: str, data: "dict | None" = None, sweep: "dict | None" = None) -> Runs:
    """What the default dispatcher launches on profile `key` at the typical size; never raises for
    a model or a search that cannot answer (`why` says so)."""
    profile = get_profile(key)
    tree = result.tree
    if tree is None or not tree.cases:
        return Runs(key, profile.name, why="no case tree")
    fixed, candidates, host = typical(result, data, sweep)
    loops = set(result.schedule.host_loops)   # set by the host at each launch: not shown

    def shown(values: dict) -> tuple:
        return tuple((n, v) for n, v in values.items() if n not in loops)
    try:
        device = time_model.modelled(profile)
        tuning = search.tune(result, fixed, device, host, candidates)
    except (search.TuneError, time_model.ModelError) as exc:
        return Runs(key, profile.name, shown(fixed), why=str(exc))
    pick = tuning.pick
    if pick is None:
        why = "; ".join(f"{n} × {w}" for w, n in tuning.rejected) or "no feasible configuration"
        return Runs(key, profile.name, shown(fixed), why=why)
    values = {**fixed, **dict(pick.values)}
    choice = dispatch.choose(tree, device, substitutions(result.schedule, values, as_run=True))
    if choice.case is None:   # tune found it feasible: not seen, but never an answer without a case
        return Runs(key, profile.name, shown(values), why=choice.reason)
    prediction = choice.prediction(choice.case)
    sizes = choice.launches[choice.case - 1]
    return Runs(key, profile.name, shown(values), choice.case, prediction.time if prediction else math.nan,
                int(tree.cases[choice.case - 1].counter("registers")), int(sizes.shared_bytes or 0),
                int(sizes.threads or 0), choice.fits, choice.tree)


def runs(result, keys: Iterable[str], data: "dict | None" = None, sweep: "dict | None" = None) -> tuple:
    return tuple(runs_on(result, key, data, sweep) for key in keys)


def at_text(r: Runs) -> str:
    return " ".join(f"{n}={v}" for n, v in r.at)


def runs_line(r: Runs) -> str:
    """`h100: case 3 · 2.14 µs · 14 registers · no shared memory · 256 threads at N=1024 s=1 B=256;
    also fit: 1, 2` (or why nothing is said)."""
    if r.case is None:
        return f"{r.key}: {r.why}" + (f" (at {at_text(r)})" if r.at else "")
    shared = "no shared memory" if not r.shared_bytes else f"{bytes_text(r.shared_bytes)} shared memory"
    others = f"; also fit: {', '.join(map(str, r.others))}" if r.others else "; no other case fits"
    tree = f" (the tree's order: case {r.tree})" if r.tree is not None and r.tree != r.case else ""
    return (f"{r.key}: case {r.case} · {time_text(r.predicted_s)} · {r.registers} registers · {shared} · "
            f"{r.threads} threads, at {at_text(r)}{others}{tree}")


def runs_text(result, found: tuple) -> list[str]:
    """The lines of `optimize`'s report: a head, one line per profile."""
    s = result.schedule
    return [f"  runs ({s.function}_{s.index}_dispatch: the time model's fastest case that fits, at the bench's "
            "sizes, its sweep's best point):"] + [f"    {runs_line(r)}" for r in found]
