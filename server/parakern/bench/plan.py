"""Sweep planning: which case of a schedule runs at every point of a parameter sweep.

A point gives every data and program parameter a value. It is skipped when a fact of
the schedule (an `assert`, a loop bound, a definition) is false there, evaluated exactly
with sympy, or when no case can run there. Otherwise the case is the one the default
dispatcher picks (parakern.dispatch, with the IR's register counts): of the cases whose
kernel fits, the one the time model predicts fastest on the device; the point also keeps
the tree's (the first whose constraints hold with the device's machine values and whose
kernel fits, else the first that fits with its constraints on R dropped).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field


from parakern import dispatch
from parakern.analysis.facts import judge_facts, not_given, substitutions
from parakern.machine.devices import Device, machine_values
from parakern.machine.limits import c_integer
from parakern.tuning.space import needed_parameters


class PlanError(ValueError):
    """The sweep cannot be planned (a parameter without a value, a bad assignment)."""


# Points one plan may have: about a minute of --plan-only (under a millisecond a point), and
# far more kernels than a GPU run measures in an hour.
MAX_POINTS = 100_000


def parse_assignments(items, what: str = "--sweep") -> dict:
    """["N=4096", "B0=4,8,16"] -> {"N": [4096], "B0": [4, 8, 16]} (order kept)."""
    out: dict = {}
    for item in items or ():
        name, sep, values = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier() or not values.strip():
            raise PlanError(f"{what} {item!r}: expected NAME=V1,V2,...")
        if "=" in values:   # --data n=4096,n=8192
            raise PlanError(f"{what} {item!r}: one name per {what}, its values after it: {what} {name}=V1,V2")
        numbers = [c_integer(v) for v in values.split(",") if v.strip()]
        if None in numbers:
            raise PlanError(f"{what} {item!r}: values must be integers")
        out.setdefault(name, [])
        for v in numbers:   # B=32,32 ran the point twice
            if v not in out[name]:
                out[name].append(v)
    return out


def machine_json(device: Device) -> dict:
    """The device as the bench's JSON keeps it: R_B, Z, T as the dispatcher reads them, and its name."""
    return {**machine_values(device), "name": device.name}


@dataclass(frozen=True)
class CasePick:
    case: "int | None"              # 1-based case the default dispatcher picks; None when skipped
    holds: tuple = ()               # cases (1-based) the dispatcher chose among (`case` one of them)
    reason: str = ""                # why the point is skipped
    launch: "dict | None" = None    # grid, block, shared_bytes, threads of the picked case (ints)
    launches: tuple = ()            # ((case, launch), ...) of every case in `holds` and `runs`
    runs: tuple = ()                # cases that can run when the constraints on R are dropped (every_case)
    tree: "int | None" = None       # the case the tree's dispatcher picks


@dataclass(frozen=True)
class PlanPoint:
    values: dict                    # parameter -> value (data first, then the sweeps)
    data: tuple                     # ((name, value), ...) of the data parameters
    case: "int | None"
    holds: tuple
    reason: str
    launch: "dict | None"
    launches: tuple = ()            # ((case, launch), ...): every case that can run here
    runs: tuple = ()                # what the bench launches here: `holds`, or every case that fits
    tree_case: "int | None" = None  # the case the tree's dispatcher picks (`case`: the default's)

    def launch_of(self, case: int) -> dict:
        return dict(self.launches)[case]

    @property
    def skipped(self) -> bool:
        return self.case is None


@dataclass
class Plan:
    schedule: object
    tree: object
    machine: Device
    data_names: tuple
    sweep_names: tuple
    points: list = field(default_factory=list)
    every_case: bool = False        # the bench launches every case that fits, not only those that hold

    @property
    def runnable(self) -> list:
        return [p for p in self.points if not p.skipped]

    @property
    def skipped(self) -> list:
        return [p for p in self.points if p.skipped]

    def as_dict(self) -> dict:
        return {"schedule": self.schedule.id, "machine": machine_json(self.machine),
                "data": list(self.data_names), "sweep": list(self.sweep_names),
                "cases": [str(c.constraints) for c in self.tree.cases],
                "every_case": self.every_case,
                "points": [{"values": p.values, "case": p.case, "tree_case": p.tree_case, "holds": list(p.holds),
                            "runs": list(p.runs),
                            "skipped": p.reason, "launch": p.launch} for p in self.points]}


def pick_case(tree, subs: dict, machine: Device, every_case: bool = False) -> CasePick:
    """The case the default dispatcher picks with these parameter values (subs: symbol -> Integer).

    every_case: also list in `runs` the cases whose kernel can run on the device here though
    their constraints on R_B, Z, T do not hold (those say when the tree prefers a kernel, not
    whether it runs): their own threads and shared memory fit the device, the registers of
    nvcc's kernel are checked by the runner when it launches. Every kernel of the tree is
    worth timing, not only the one the model prefers."""
    choice = dispatch.choose(tree, machine, subs)
    runs = set(choice.accepted) | (set(choice.can_run) if every_case else set())
    registers = [int(c.counter("registers")) for c in tree.cases]
    launches = tuple((k, _launch(choice.launches[k - 1], registers[k - 1])) for k in sorted(runs))
    if choice.case is None:
        machine_text = ", ".join(f"{n}={v}" for n, v in machine_values(machine).items())
        return CasePick(None, (), f"no case can run with {machine_text}: {choice.reason}", runs=tuple(sorted(runs)),
                        launches=launches)
    return CasePick(choice.case, choice.accepted, "", dict(launches)[choice.case], launches, tuple(sorted(runs)),
                    choice.tree)


def _launch(sizes: dispatch.Sizes, registers: int) -> dict:
    return {"grid": list(sizes.grid), "block": list(sizes.block), "shared_bytes": sizes.shared_bytes,
            "threads": sizes.threads, "registers": registers}


def make_plan(result, data: dict, sweeps: dict, machine: Device, every_case: bool = False) -> Plan:
    """The cartesian product of the data values and the sweeps, each point with its case
    (every_case: and every other case that can run there, see pick_case)."""
    schedule, tree = result.schedule, result.tree
    if tree is None or not tree.cases:
        raise PlanError(f"{schedule.id} has no case tree")
    given = list(data) + [n for n in sweeps if n not in data]
    missing = [n for n in needed_parameters(schedule, tree) if n not in given]
    if missing:
        raise PlanError(f"{schedule.id}: no value for {', '.join(missing)}; give --data or --sweep "
                        f"{missing[0]}=...")
    plan = Plan(schedule, tree, machine, tuple(data), tuple(n for n in sweeps if n not in data),
                every_case=every_case)
    axes = [(n, data[n]) for n in data] + [(n, sweeps[n]) for n in plan.sweep_names]
    count = math.prod(len(values) for _, values in axes)
    if count > MAX_POINTS:   # a million points planned for a quarter of an hour, silently
        sizes = " x ".join(f"{len(values)} {n}" for n, values in axes if len(values) > 1)
        raise PlanError(f"{schedule.id}: {count} points ({sizes}); at most {MAX_POINTS}: give fewer values")
    for combo in itertools.product(*(values for _, values in axes)):
        values = {n: v for (n, _), v in zip(axes, combo)}
        subs = substitutions(schedule, values, as_run=True)
        data_key = tuple((n, values[n]) for n in plan.data_names)
        verdict = judge_facts(schedule, subs)
        if verdict.why:
            reason = not_given(schedule, values, verdict)
            plan.points.append(PlanPoint(values, data_key, None, (), reason, None))
            continue
        pick = pick_case(tree, subs, machine, every_case)
        runs = pick.runs if every_case else pick.holds
        plan.points.append(PlanPoint(values, data_key, pick.case, pick.holds, pick.reason, pick.launch,
                                     pick.launches, runs, pick.tree))
    return plan


def _fmt(values: dict) -> str:
    return " ".join(f"{n}={v}" for n, v in values.items())


def plan_text(plan: Plan) -> str:
    """The plan for the terminal: the cases, then per point the case that runs or why not."""
    m = plan.machine
    head = f"{plan.schedule.id}: {len(plan.points)} points, {len(plan.runnable)} runnable, " \
           f"{len(plan.skipped)} skipped; machine R_B={m.R_B} Z={m.Z} T={m.T}" + (f" ({m.name})" if m.name else "")
    lines = [head]
    for k, case in enumerate(plan.tree.cases, 1):
        lines.append(f"  case {k}: {case.constraints}   [registers {int(case.counter('registers'))}]")
    for p in plan.points:
        if p.skipped:
            lines.append(f"  {_fmt(p.values):<32} skipped: {p.reason}")
        else:
            l = p.launch
            others = [k for k in p.holds if k != p.case]
            also = f" (also fit: {', '.join(map(str, others))})" if others else ""
            extra = [k for k in p.runs if k not in p.holds]
            also += f" (also run, machine constraints dropped: {', '.join(map(str, extra))})" if extra else ""
            also += f" (the tree's order: case {p.tree_case})" if p.tree_case not in (None, p.case) else ""
            lines.append(f"  {_fmt(p.values):<32} case {p.case}  grid {tuple(l['grid'])} block {tuple(l['block'])}"
                         f" shared {l['shared_bytes']} B{also}")
    return "\n".join(lines)
