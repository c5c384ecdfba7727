"""Which C divisions of a schedule are floor divisions: where the facts settle their signs.

The front end reads C's `/` and `%` as floor / Mod only where it sees at once that their
operands are non-negative (symbolic/cinteger.py); elsewhere they stay cdiv / cmod, C's truncation.
Once the schedule's facts are known, more of them are settled: an assertion `N >= 2` makes
`(N - 2) / B` a floor division, and so does a meta_for that must run at least once on a
derived bound (`dim = (N - 2) / (s * B)`, `i < dim`: dim >= 1, so N - 2 >= s*B > 0). The
facts hold wherever the schedule runs, so the floor is C's value wherever it is computed.
"""
from __future__ import annotations

from dataclasses import replace

import sympy

from parakern import model
from parakern.symbolic.cinteger import Bounds, cdiv, cmod, lower_bound, settle
from parakern.symbolic.symbols import sym


def settled(schedule: model.Schedule) -> model.Schedule:
    """The schedule with every cdiv / cmod its facts settle as floor / Mod (the same object
    where there is none)."""
    if not _truncating(schedule):
        return schedule
    lower = _fact_bounds(schedule.facts)
    derived = tuple(replace(d, value=_derived(d, lower)) for d in schedule.derived)
    for loop in schedule.grid + schedule.block + schedule.between + schedule.serial:
        low = lower_bound(settle(loop.lo, lower), lower)
        known = lower.get(loop.var, 0) if loop.var in lower else low
        lower[loop.var] = None if low is None or known is None else min(low, known)
    # a meta_for runs at least once: from a start >= 0, its bound is >= 1
    grid = tuple(_loop(lp, lower, runs=True) for lp in schedule.grid)
    block = tuple(_loop(lp, lower, runs=True) for lp in schedule.block)
    between = tuple(_loop(lp, lower) for lp in schedule.between)
    serial = tuple(_loop(lp, lower) for lp in schedule.serial)
    accesses = tuple(replace(a, indices=tuple(settle(i, lower) for i in a.indices),
                             guards=tuple(_guard(g, lower) for g in a.guards))
                     for a in schedule.accesses)
    values = {sym(d.name): d.value for d in derived}
    extents = {sympy.Ge(old.extent, 1): sympy.Ge(new.extent, 1)
               for old, new in zip(schedule.grid + schedule.block, grid + block)}
    facts = []
    for fact in schedule.facts:
        relation = extents.get(fact.relation, fact.relation)
        if fact.origin == "definition" and isinstance(relation, sympy.Eq) and relation.lhs in values:
            relation = sympy.Eq(relation.lhs, values[relation.lhs])
        facts.append(replace(fact, relation=settle(relation, lower)))
    return replace(schedule, derived=derived, grid=grid, block=block, between=between, serial=serial,
                   accesses=accesses, facts=tuple(dict.fromkeys(facts)))


def _guard(guard: model.Guard, lower: Bounds) -> model.Guard:
    return guard if guard.condition is None else replace(guard, condition=settle(guard.condition, lower))


def _truncating(schedule: model.Schedule) -> bool:
    exprs = [d.value for d in schedule.derived] + [f.relation for f in schedule.facts]
    for lp in schedule.grid + schedule.block + schedule.between + schedule.serial:
        exprs += [lp.lo, lp.hi]
    for a in schedule.accesses:
        exprs += list(a.indices) + [g.condition for g in a.guards if g.condition is not None]
    return any(sympy.sympify(e).has(cdiv, cmod) for e in exprs)


def _derived(d: model.Derived, lower: Bounds):
    """A derived scalar's value, settled; a quotient that is at least 1 wherever the schedule
    runs (a meta_for's bound) as the floor (`_at_least_one`)."""
    low = lower.get(d.name, 0)
    return _at_least_one(d.value, lower) if low is not None and low >= 1 else settle(d.value, lower)


def _at_least_one(value, lower: Bounds):
    """A value known >= 1, settled: where it is a quotient, C's a / b >= 1 with b > 0 makes
    a >= b > 0, so the division is the floor."""
    value = sympy.sympify(value)
    if isinstance(value, cdiv):
        a, b = (settle(x, lower) for x in value.args)
        divisor = lower_bound(b, lower)
        if divisor is not None and divisor >= 0:
            return sympy.floor(a / b)
    return settle(value, lower)


def _loop(loop, lower: Bounds, runs: bool = False):
    lo = settle(loop.lo, lower)
    start = lower_bound(lo, lower)
    hi = _at_least_one(loop.hi, lower) if runs and start is not None and start >= 0 else settle(loop.hi, lower)
    changes = {"lo": lo, "hi": hi}
    if hasattr(loop, "step"):
        changes["step"] = settle(loop.step, lower)
    return replace(loop, **changes)


def _fact_bounds(facts) -> dict:
    """{symbol name: least value} from facts that bound one symbol by a number (`N >= 2`,
    `dim >= 1`, `B > 0`); parameters and derived scalars are >= 0 otherwise (H1)."""
    lower: dict = {}
    for fact in facts:
        r = fact.relation
        if not isinstance(r, (sympy.Ge, sympy.Gt, sympy.Le, sympy.Lt, sympy.Eq)):
            continue
        if isinstance(r, (sympy.Le, sympy.Lt)):
            r = r.reversed
        diff = sympy.expand(r.lhs - r.rhs)
        symbols = diff.free_symbols
        if len(symbols) != 1:
            continue
        (s,) = symbols
        coeff = diff.coeff(s)
        if coeff != 1 or not (diff - s).is_Integer:
            continue
        low = -int(diff - s) + (1 if isinstance(r, sympy.Gt) else 0)
        lower[s.name] = max(lower.get(s.name, 0), low)
    return lower

