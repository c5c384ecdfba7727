"""Compile-time values of program parameters: where a specialised kernel instance is emitted.

A block size known only at run time makes the staging loops divide and take remainders per
element and leaves nothing for nvcc to unroll. Where a program parameter is fixed, each case
that can run there gets, beside its parametric kernel, an instance with those parameters as
constants (codegen/kernel_source.py), which the dispatcher launches when the run-time values are
those (codegen/tree_dispatcher.py). A parameter is fixed:

  * by an assertion `assert(B == 128)` of the function (a fact `B = 128`): in every point;
  * by a value the user, the bench or a tuner chose (`parakern emit --fix B0=16,ub1=32`):
    one point per choice, with the asserted values added.

A `#define B 128` used in the schedule needs nothing here: the frontend reads B as the
constant, so every kernel already has it at compile time.

Only program parameters are fixed (a data size stays a run-time value; a chosen value of
another name is left out), and a case gets an instance at a point only where its constraints
do not become false with the values substituted (the others would never launch it).
"""
from __future__ import annotations

import functools

import sympy

from parakern.analysis.point import definitions
from parakern.model import Schedule
from parakern.symbolic.symbols import sym
from parakern.machine.devices import PROFILES, machine_values
from parakern.symbolic.printing import to_c

Point = tuple[tuple[str, int], ...]     # ((parameter, value), ...) in schedule.params order


def asserted(schedule: Schedule) -> dict[str, int]:
    """Program parameter -> the value an assertion fixes it at."""
    program = {p.name for p in fixable(schedule)}
    out = {}
    for fact in schedule.facts:
        relation = sympy.sympify(fact.relation)
        if fact.origin not in ("assert", "host if") or not isinstance(relation, sympy.Eq):
            continue
        free = relation.free_symbols
        if len(free) != 1 or next(iter(free)).name not in program:
            continue
        # B == 64, and the same said otherwise: 2*B == 128, B - 64 == 0 (one integer solution);
        # not B % 32 == 0, which fixes nothing (sympy cannot solve it: emit and the bench failed)
        (x,) = free
        difference = relation.lhs - relation.rhs
        if not difference.is_polynomial(x):
            continue
        solutions = [v for v in sympy.solve(difference, x) if v.is_Integer]
        if len(solutions) == 1:
            out[x.name] = int(solutions[0])
    return out


def fixed_points(schedule: Schedule, chosen: tuple = ()) -> tuple[Point, ...]:
    """The points of the schedule's specialised instances (chosen: dicts name -> value, e.g.
    from `emit --fix`), each in schedule.params order, without repeats."""
    program = {p.name for p in fixable(schedule)}
    fixed = asserted(schedule)
    points = [dict(fixed)] if fixed else []
    for values in chosen:
        mine = {n: int(v) for n, v in values.items() if n in program}
        if mine and all(fixed.get(n, v) == v for n, v in mine.items()):
            points.append({**mine, **fixed})
    order = [p.name for p in schedule.params]
    out: list[Point] = []
    for point in points:
        key = tuple((n, point[n]) for n in order if n in point)
        if key not in out:
            out.append(key)
    # The dispatcher launches the first instance whose values hold: the one that fixes the most
    # parameters first, else the asserted values alone (s == 2) would hide a chosen point
    # (B == 32 && s == 2) that they include.
    return tuple(sorted(out, key=len, reverse=True))


def case_points(case, points: tuple[Point, ...]) -> tuple[Point, ...]:
    """The points where the case can run: its constraints not false with the values substituted,
    and its kernel's needs not beyond every known GPU (1331 threads, 16 GiB of shared memory:
    an instance no device could launch)."""
    defs = definitions(case.kernel.schedule)
    out = []
    for point in points:
        subs = {sym(n): sympy.Integer(v) for n, v in point}
        if any(sympy.sympify(r).xreplace(defs).xreplace(subs) is sympy.false for r in case.constraints.relations):
            continue
        if unlaunchable(case, point):
            continue
        out.append(point)
    return tuple(out)


def suffix(point: Point) -> str:
    """`B0_16_ub1_32` (`t_m1` for t = -1): the part of an instance's name after the case's
    kernel name, an identifier."""
    return "_".join(f"{n}_{v}" if v >= 0 else f"{n}_m{-v}" for n, v in point)


def fixable(schedule: Schedule) -> tuple:
    """The schedule's parameters a compile-time instance can fix: its integer program parameters,
    but for the variables of host loops around it (a new value at every execution)."""
    return tuple(p for p in schedule.program_params if p.ctype not in ("float", "double")
                 and p.name not in schedule.host_loops)


@functools.lru_cache(maxsize=1)
def most_generous_machine() -> dict:
    """symbol -> the largest R_B, Z, T of the known GPU profiles (machine/devices.py)."""
    values = [machine_values(p) for p in PROFILES.values()]
    return {sym(n): sympy.Integer(max(v[n] for v in values)) for n in ("R_B", "Z", "T")}


def unlaunchable(case, point: Point) -> str:
    """'' where the case's own kernel may run at the point on some known GPU, else the
    requirement it fails there (in C: `4*B*B <= Z`)."""
    defs = definitions(case.kernel.schedule)
    subs = {sym(n): sympy.Integer(v) for n, v in point}
    machine = most_generous_machine()
    needs = getattr(case, "needs", None)
    for relation in (needs.relations if needs is not None else ()):
        if sympy.sympify(relation).xreplace(defs).xreplace(subs).xreplace(machine) is sympy.false:
            return to_c(relation)
    return ""


def condition(point: Point) -> str:
    """The C test of the run-time values: `B0 == 16 && ub1 == 32`."""
    return " && ".join(f"{n} == {v}" for n, v in point)
