"""How much of the serial program's iteration space a configuration computes.

A parameter tune chooses may enter a loop's extent through C's rounding division
(`dim1 = (N - 2) / (B1 * s)`): at some values the loops run fewer iterations than the program
means, and the points beyond them are never computed (a 2-D Jacobi at N = 4096 with
B1 * s = 2048 computes 2048 of its 4094 interior columns). So every configuration is judged
by the fraction of the iterations it runs, from the schedule's loops:

- The loops (meta_for levels, serial loops between grid and block levels and in the body)
  fall into groups: loops whose variables one subscript combines (`c = j*B1*s + k*B1 + v`:
  the columns are j, k and v together), or whose bounds read one another (a triangle).
- A group's count is the product of its loops' trip counts in the parameters (a bound that
  reads a loop variable counts the average trips, time_model.trip_count); its reference is the
  same count with every tuned parameter at 1 (blocks of one thread, one iteration each:
  no division rounds).
- A group covers min(1, count / reference): a rounded-up grid with a bounds check
  (`(n + B - 1) / B` blocks, `if (p < n)`) runs at least the reference; a rounded-down one
  misses the remainder. A configuration covers the product over its groups, so that a group
  that runs more (a rounded-up row count) never makes up for one that runs fewer.

`Coverage.fraction` is what tune ranks by (time per point computed) and dispatch_auto prints in
C (codegen/auto.py: the same integers, the same double operations, in the same order).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from parakern.symbolic import exact
from parakern.launch import in_parameters
from parakern.symbolic.symbols import sym
from parakern.tuning import time_model   # the module: codegen.auto imports this one while it is half made


@dataclass(frozen=True)
class Group:
    """Loops whose iterations make one dimension of the iteration space."""
    loops: tuple                     # variable names, outer first
    count: sympy.Expr                # iterations at the configuration, in the parameters
    reference: sympy.Expr            # the same with every tuned parameter at 1


@dataclass(frozen=True)
class Coverage:
    groups: tuple                    # Group, only those whose count a tuned parameter changes

    def counts(self, subs: dict) -> tuple:
        """((group, count, reference), ...) at the point, integers (rounded up, as the C's);
        None where one is not a number."""
        given = exact.numbers(subs)
        return tuple((g, exact.ceiling(g.count, subs, given), exact.ceiling(g.reference, subs, given))
                     for g in self.groups)

    def fraction(self, subs: dict) -> float:
        """The share of the serial program's iterations the point runs: 1.0 where it runs them all."""
        return fraction_of(self.counts(subs))

    def short(self, subs: dict) -> str:
        """`loops j, v, k run 2048 of 4094 iterations`, for each group that runs fewer."""
        return "; ".join(f"loop{'s' * (len(g.loops) > 1)} {', '.join(g.loops)} run{'s' * (len(g.loops) == 1)} "
                         f"{count} of {reference} iterations"
                         for g, count, reference in self.counts(subs)
                         if count is not None and reference is not None and 0 < reference and count < reference)


def fraction_of(counts) -> float:
    """The product of min(1, count / reference) over the groups, in doubles as the C computes it;
    a group whose figures are not numbers, or whose reference is not positive, is not judged."""
    out = 1.0
    for _, count, reference in counts:
        if count is None or reference is None or reference <= 0:
            continue
        out *= min(1.0, max(0.0, float(count) / float(reference)))
    return out


def coverage(schedule, tuned) -> Coverage:
    """The groups of the schedule's loops whose count depends on a tuned parameter (names)."""
    loops = (*schedule.grid, *schedule.between, *schedule.block, *schedule.serial)
    names = [lp.var for lp in loops]
    variables = {sym(n): n for n in names}
    parent = {n: n for n in names}

    def root(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    def join(together) -> None:
        found = [variables[x] for x in together if x in variables]
        for other in found[1:]:
            parent[root(other)] = root(found[0])

    for access in schedule.accesses:
        if access.exact:
            for index in access.indices:
                join(sympy.sympify(index).free_symbols)
    for lp in (*schedule.between, *schedule.serial):   # a bound that reads another loop's variable
        join({sym(lp.var)} | sympy.sympify(lp.lo).free_symbols | sympy.sympify(lp.hi).free_symbols)
    counts = {**{lp.var: in_parameters(lp.extent, schedule) for lp in schedule.loops},
              **{lp.var: time_model.trip_count(lp, schedule) for lp in (*schedule.between, *schedule.serial)}}
    ones = {sym(n): sympy.S.One for n in tuned}
    groups = []
    for r in dict.fromkeys(root(n) for n in names):
        members = tuple(n for n in names if root(n) == r)
        count = sympy.Mul(*(counts[n] for n in members))
        if not count.free_symbols & set(ones):
            continue
        reference = count.xreplace(ones)
        if sympy.expand(count - reference) != 0:   # a block's own size (B threads) changes nothing
            groups.append(Group(members, count, reference))
    return Coverage(tuple(groups))


def percent(fraction: float) -> str:
    """`49.6%`, never 100% for a fraction below 1 nor 0% above 0."""
    text = f"{fraction:.1%}"
    if fraction < 1.0 and text == "100.0%":
        return ">99.9%"
    if fraction > 0.0 and text == "0.0%":
        return "<0.1%"
    return text
