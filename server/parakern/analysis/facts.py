"""Values of a schedule's parameters: the derived scalars they define, the substitution every
stage evaluates at, and whether they satisfy the schedule's facts (assertions, loop bounds,
divisors, the C types of its parameters), with the fact they violate, in C as the user wrote it.
One home for the dispatch rule, the bench's plans, tune's search, emit --fix and profile --at."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping

import sympy

from parakern.symbolic import exact
from parakern.machine.limits import out_of_range, overflowing_definition
from parakern.symbolic.printing import to_c
from parakern.symbolic.symbols import sym

# A scalar argument of the function that the schedule does not read and no one gave a value
# (an `s` only an assertion mentions): the bench passes 1 (baseline.Baseline.scalars).
ARGUMENT_DEFAULT = 1


def definitions(schedule) -> dict:
    """Derived symbol -> its value in parameters only: a definition may read other derived
    scalars (`int inner = n - 2; int g = (inner + B - 1) / B;`), substituted transitively."""
    values = {sym(d.name): sympy.sympify(d.value) for d in schedule.derived}
    for _ in range(len(values)):
        done = {k: v.xreplace(values) for k, v in values.items()}
        if done == values:
            break
        values = done
    return values


def substitutions(schedule, values: Mapping, as_run: bool = False) -> dict:
    """symbol -> Integer from names or symbols -> ints, with the derived scalars the values
    do not give computed from their definitions.

    as_run: every parameter has a value, as the bench and tune run the schedule: one no one gave
    (jacobi's time step t, which the host sets) is 0, the first call; the function's other
    scalar arguments that its facts read (an `assert(s == 2)` on an argument the schedule does
    not use) are their given values, else ARGUMENT_DEFAULT, so that the facts are judged as the
    serial C will run them; other names are left out."""
    if as_run:
        values = {**{n: values.get(n, ARGUMENT_DEFAULT) for n in sorted(fact_arguments(schedule))},
                  **{p.name: values.get(p.name, 0) for p in schedule.params}}
    subs = {(sym(k) if isinstance(k, str) else k): (v if isinstance(v, sympy.Basic) else sympy.Integer(int(v)))
            for k, v in values.items()}
    for name, value in definitions(schedule).items():
        if name not in subs:
            subs[name] = exact.substituted(value, subs)
    return subs


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


@dataclass(frozen=True)
class Verdict:
    """Why values are refused ('' where every fact that can be evaluated holds) and the fact
    they violate (None where none is, or the refusal is a C type's range)."""
    why: str
    fact: object = None

    def reads(self) -> set:
        """The names the violated fact reads."""
        return {x.name for x in sympy.sympify(self.fact.relation).free_symbols} if self.fact is not None else set()


def check_facts(schedule, subs: dict, origin: bool = True) -> str:
    """'' when every fact that can be evaluated holds, else why the point is skipped (with
    where the fact comes from: `(assert, line 4)`, unless `origin` is False)."""
    return judge_facts(schedule, subs, origin).why


def judge_facts(schedule, subs: dict, origin: bool = True) -> Verdict:
    """check_facts' reason with the fact it names."""
    return _judged(schedule, frozenset(subs.items()), origin)


@functools.lru_cache(maxsize=4096)
def _judged(schedule, items: frozenset, origin: bool) -> Verdict:
    # tune asks each candidate once per GPU profile, the bench each point once per case
    subs = dict(items)
    given = exact.numbers(subs)
    ints = {n.name: v for n, v in given.items() if isinstance(v, int)}
    beyond = out_of_range(schedule.params, ints) or overflowing_definition(schedule, ints)
    if beyond:   # n = 10**12 for an int n, or n + B - 1 past int's range: C would wrap it
        return Verdict(beyond)
    undecided = Verdict("")
    for fact in schedule.facts:
        try:
            rel = exact.substituted(fact.relation, subs, given)
        except (TypeError, ZeroDivisionError):   # sympy compares the zoo of a division by zero
            rel = sympy.nan
        if rel.free_symbols:
            continue  # reads a value the host sets (a time step): cannot be judged here
        truth = exact.truth(rel)
        if truth is None:   # said only where no fact is plainly violated (B >= 1 says more than n/B)
            undecided = undecided if undecided.why else \
                Verdict(f"{to_c(fact.relation)} cannot be evaluated (division by zero?)", fact)
        elif not truth:   # in C, as the user wrote it: B == 32, n % B == 0; and where it is written
            where = f", line {fact.span.line}" if getattr(fact, "span", None) is not None else ""
            derived = _derived_values(schedule, fact, subs, given)
            return Verdict(f"violates {to_c(fact.relation)}{f' ({fact.origin}{where})' if origin else ''}{derived}",
                           fact)
    return undecided


def _derived_values(schedule, fact, subs: dict, given: dict) -> str:
    """`: dim0 = n/B0 = 8` where the fact reads values the schedule derives (`dim0 >= 1` alone
    blamed a bound the user never set). The value only where every division and remainder in
    the definition has operands that are not negative: there C's / and % are the floor and Mod
    it is computed with (C's (0 - 4)/32 is 0, the floor -1)."""
    reads = {v.name for v in fact.relation.free_symbols}
    values = {getattr(k, "name", None): v for k, v in given.items()}
    shown = []
    for d in schedule.derived:
        if d.name not in reads:
            continue
        text = f"{d.name} = {to_c(d.value)}"
        value = values.get(d.name)
        if value is not None and _as_in_c(sympy.sympify(d.value), subs, given) and text != f"{d.name} = {value}":
            text += f" = {value}"
        shown.append(text)
    return f": {', '.join(shown)}" if shown else ""


def _as_in_c(expr, subs: dict, given: dict) -> bool:
    """Whether the operands of every floor division and Mod of expr are numbers >= 0 here."""
    for atom in expr.atoms(sympy.floor, sympy.Mod):
        for arg in atom.args:
            value = exact.substituted(arg, subs, given)
            if not value.is_number or value < 0:
                return False
    return True
