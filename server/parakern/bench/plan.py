"""Sweep planning: which case of a schedule runs at every point of a parameter sweep.

A point gives every data and program parameter a value. It is skipped when a fact of
the schedule (an `assert`, a loop bound, a definition) is false there, evaluated exactly
with sympy, or when no case can run there. Otherwise the case is the one the dispatcher
picks (parakern.dispatch, with the IR's register counts): the first whose constraints
hold with the device's machine values and whose kernel fits, else the first that fits
with its constraints on R dropped. As in the dispatcher, the value of R for case j is
min(R, regsPerBlock / threads_j) when the registers per block are known.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import sympy

from parakern import dispatch
from parakern.codegen.launch import definitions, launch_of
from parakern.facts import judge_facts
from parakern.limits import c_integer


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


def profile_machine(name: str) -> dict:
    """Machine values of a named device profile (devices.py)."""
    from parakern.devices import get_profile, machine_values
    profile = get_profile(name)
    return {**machine_values(profile), "name": profile.name}


@dataclass(frozen=True)
class CasePick:
    case: "int | None"              # 1-based case the dispatcher picks; None when skipped
    holds: tuple = ()               # cases (1-based) the dispatcher's choosing pass accepts (the first is `case`)
    reason: str = ""                # why the point is skipped
    launch: "dict | None" = None    # grid, block, shared_bytes, threads of the picked case (ints)
    launches: tuple = ()            # ((case, launch), ...) of every case in `holds` and `runs`
    runs: tuple = ()                # cases that can run when the constraints on R are dropped (every_case)


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

    def launch_of(self, case: int) -> dict:
        return dict(self.launches)[case]

    @property
    def skipped(self) -> bool:
        return self.case is None


@dataclass
class Plan:
    schedule: object
    tree: object
    machine: dict
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
        return {"schedule": self.schedule.id, "machine": dict(self.machine),
                "data": list(self.data_names), "sweep": list(self.sweep_names),
                "cases": [str(c.constraints) for c in self.tree.cases],
                "every_case": self.every_case,
                "points": [{"values": p.values, "case": p.case, "holds": list(p.holds), "runs": list(p.runs),
                            "skipped": p.reason, "launch": p.launch} for p in self.points]}


def pick_case(tree, subs: dict, machine: dict, every_case: bool = False) -> CasePick:
    """The case the dispatcher picks with these parameter values (subs: symbol -> Integer).

    every_case: also list in `runs` the cases whose kernel can run on the device here though
    their constraints on R_B, Z, T do not hold (those say when the tree prefers a kernel, not
    whether it runs): their own threads and shared memory fit the device, the registers of
    nvcc's kernel are checked by the runner when it launches. Every kernel of the tree is
    worth timing, not only the one the model prefers."""
    device = dispatch.Machine(int(machine["R_B"]), int(machine["Z"]), int(machine["T"]))
    choice = dispatch.choose(tree, device, subs)
    runs = set(choice.accepted) | (set(choice.can_run) if every_case else set())
    registers = [int(c.counter("registers")) for c in tree.cases]
    launches = tuple((k, _launch(choice.launches[k - 1], registers[k - 1])) for k in sorted(runs))
    if choice.case is None:
        machine_text = ", ".join(f"{n}={machine[n]}" for n in ("R_B", "Z", "T"))
        return CasePick(None, (), f"no case can run with {machine_text}: {choice.reason}", runs=tuple(sorted(runs)),
                        launches=launches)
    return CasePick(choice.case, choice.accepted, "", dict(launches)[choice.case], launches, tuple(sorted(runs)))


def _launch(sizes: dispatch.Sizes, registers: int) -> dict:
    return {"grid": list(sizes.grid), "block": list(sizes.block), "shared_bytes": sizes.shared_bytes,
            "threads": sizes.threads, "registers": registers}


def block_parameters(schedule) -> set:
    """Names of the parameters that size the block (B0, B1 of the block-level meta_for extents)."""
    return {x.name for lp in schedule.block for x in sympy.sympify(lp.extent).free_symbols}


def needed_parameters(schedule, tree) -> list:
    """Integer parameters that the facts, the cases or the launches read (polydiv's P, which only
    the fact P != 0 of its `% P` reads: tune took it as 0 and called every configuration infeasible)."""
    defs = definitions(schedule)
    names = {s.name for f in schedule.facts for s in sympy.sympify(f.relation).xreplace(defs).free_symbols}
    for case in tree.cases:
        for rel in case.constraints.relations:
            names |= {s.name for s in sympy.sympify(rel).xreplace(defs).free_symbols}
        launch = launch_of(case)
        for e in (*launch.grid, *launch.block, launch.shared_bytes):
            names |= {s.name for s in sympy.sympify(e).free_symbols}
    names -= {"R_B", "Z", "T"}
    names -= set(schedule.host_loops)   # the host sets them at each execution (0 in the plan: the first)
    return [p.name for p in schedule.params if p.name in names]


# A scalar argument of the function that the schedule does not read and no one gave a value
# (an `s` only an assertion mentions): the bench passes 1 (baseline.Baseline.scalars).
ARGUMENT_DEFAULT = 1


def substitutions(schedule, values: dict) -> dict:
    """symbol -> Integer for every parameter and derived scalar of the schedule at `values`
    (dispatch.substitutions); parameters the host sets and no one gave (jacobi's time step t)
    are 0, the first call. The function's other scalar arguments that its facts read (an
    `assert(s == 2)` on an argument the schedule does not use) are their given values, else
    ARGUMENT_DEFAULT, so that the facts are judged as the serial C will run them."""
    given = {n: values.get(n, ARGUMENT_DEFAULT) for n in sorted(fact_arguments(schedule))}
    return dispatch.substitutions(schedule, {**given, **{p.name: values.get(p.name, 0) for p in schedule.params}})


def fact_arguments(schedule) -> set:
    """The function's scalar arguments that only its facts read (`assert(cap >= n)`)."""
    params = {p.name for p in schedule.params}
    derived = {d.name for d in schedule.derived}
    return {x.name for f in schedule.facts for x in sympy.sympify(f.relation).free_symbols} \
        - params - derived - set(schedule.host_loops)


def not_given(schedule, values: dict, verdict) -> str:
    """The verdict's reason (a violated fact, in C) with the arguments the fact reads that no one
    gave a value, which were taken as ARGUMENT_DEFAULT (tune said 'violates cap >= n' where cap
    was never given)."""
    missing = sorted((fact_arguments(schedule) - set(values)) & verdict.reads())
    if not missing:
        return verdict.why
    names = ", ".join(missing)
    return (f"{verdict.why}, with {names} taken as {ARGUMENT_DEFAULT} (not given: "
            + " ".join(f"--data {n}=VALUE" for n in missing) + ")")


def make_plan(result, data: dict, sweeps: dict, machine: dict, every_case: bool = False) -> Plan:
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
    plan = Plan(schedule, tree, dict(machine), tuple(data), tuple(n for n in sweeps if n not in data),
                every_case=every_case)
    axes = [(n, data[n]) for n in data] + [(n, sweeps[n]) for n in plan.sweep_names]
    count = math.prod(len(values) for _, values in axes)
    if count > MAX_POINTS:   # a million points planned for a quarter of an hour, silently
        sizes = " x ".join(f"{len(values)} {n}" for n, values in axes if len(values) > 1)
        raise PlanError(f"{schedule.id}: {count} points ({sizes}); at most {MAX_POINTS}: give fewer values")
    for combo in itertools.product(*(values for _, values in axes)):
        values = {n: v for (n, _), v in zip(axes, combo)}
        subs = substitutions(schedule, values)
        data_key = tuple((n, values[n]) for n in plan.data_names)
        verdict = judge_facts(schedule, subs)
        if verdict.why:
            reason = not_given(schedule, values, verdict)
            plan.points.append(PlanPoint(values, data_key, None, (), reason, None))
            continue
        pick = pick_case(tree, subs, machine, every_case)
        runs = pick.runs if every_case else pick.holds
        plan.points.append(PlanPoint(values, data_key, pick.case, pick.holds, pick.reason, pick.launch,
                                     pick.launches, runs))
    return plan


def _fmt(values: dict) -> str:
    return " ".join(f"{n}={v}" for n, v in values.items())


def plan_text(plan: Plan) -> str:
    """The plan for the terminal: the cases, then per point the case that runs or why not."""
    m = plan.machine
    head = f"{plan.schedule.id}: {len(plan.points)} points, {len(plan.runnable)} runnable, " \
           f"{len(plan.skipped)} skipped; machine R_B={m['R_B']} Z={m['Z']} T={m['T']}" + \
           (f" ({m['name']})" if m.get("name") else "")
    lines = [head]
    for k, case in enumerate(plan.tree.cases, 1):
        lines.append(f"  case {k}: {case.constraints}   [registers {int(case.counter('registers'))}]")
    for p in plan.points:
        if p.skipped:
            lines.append(f"  {_fmt(p.values):<32} skipped: {p.reason}")
        else:
            l = p.launch
            also = f" (also holds: {', '.join(map(str, p.holds[1:]))})" if len(p.holds) > 1 else ""
            extra = [k for k in p.runs if k not in p.holds]
            also += f" (also run, machine constraints dropped: {', '.join(map(str, extra))})" if extra else ""
            lines.append(f"  {_fmt(p.values):<32} case {p.case}  grid {tuple(l['grid'])} block {tuple(l['block'])}"
                         f" shared {l['shared_bytes']} B{also}")
    return "\n".join(lines)
