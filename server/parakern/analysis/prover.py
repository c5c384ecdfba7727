"""Decides `expr >= 0` for the footprint analysis, under the schedule's facts and H1.

A fast syntactic test first (a polynomial in parameters with non-negative
coefficients), then z3 through constraints.to_z3. If the hypotheses are not
satisfiable (or z3 cannot tell), only the fast test is trusted: nothing false
is ever proved.
"""
from __future__ import annotations

import collections

import sympy
import z3

from parakern import syntax
from parakern.symbolic.constraints import Env, Untranslatable, limited, to_z3
from parakern.model import Schedule
from parakern.symbolic.symbols import opaque

# z3's resource units per question: many small ones per footprint (a few hundred units each, formerly
# 500 ms); an unknown answer is just "not proved"
Z3_WORK = 2_500_000


class _Env(Env):
    """to_z3's environment for the footprint's questions."""

    def variable(self, symbol: sympy.Symbol) -> z3.ExprRef:
        if opaque(symbol):  # an opaque value (a[b[i]]): the same name need not be the same value
            raise Untranslatable(f"opaque value {symbol}")
        return super().variable(symbol)

    def quotient_of(self, num: sympy.Expr, den: sympy.Expr) -> z3.ExprRef:
        # Pinned as the footprint always pinned them: keyed by the sympy operands, declared
        # (named by their count) before the operands are translated, both signs of the divisor
        # guarded. z3's later models, the witnesses users see, depend on every term built before.
        key = (num, den)
        if key not in self.quotients:
            q = z3.Int(f"?q{len(self.quotients)}")
            n, d = to_z3(num, self), to_z3(den, self)
            self.side.append(z3.Implies(d > 0, z3.And(q * d <= n, n < q * d + d)))
            self.side.append(z3.Implies(d < 0, z3.And(q * d >= n, n > q * d + d)))
            self.quotients[key] = q
        return self.quotients[key]


def hypotheses(schedule: Schedule) -> tuple:
    """(the integer parameters, the relations a prover of the schedule assumes): all that a
    Prover's answers depend on."""
    params = frozenset(p.name for p in schedule.params if syntax.is_integer(p.ctype))
    relations = [fact.relation for fact in schedule.facts]
    relations += [sympy.Ge(syntax.sym(name), 0) for name in sorted(params)]
    # The meta_for levels and the loops between them run at least once (else no thread
    # touches anything); only bounds that are the same for every thread, so that no
    # hypothesis mentions a varying variable. Not a thread's own serial loops: one may run
    # no iteration (`for (k = 1; k < m; k += 2)` at m = 1) while an access outside it still
    # reads, and a region spanning both must not be sized as if the loop ran (a tile of
    # B - 1 elements for B threads' reads of x[i]).
    varying = {lp.var for lp in schedule.block + schedule.serial}
    for loop in schedule.grid + schedule.block + schedule.between:
        bounds = [loop.lo, loop.hi, getattr(loop, "step", sympy.S.One)]
        if not any(s.name in varying for b in bounds for s in b.free_symbols):
            relations += [sympy.Ge(loop.hi - loop.lo, 1), sympy.Ge(bounds[2], 1)]
    # Fixed variables appear in lower bounds: give them their ranges.
    for loop in schedule.grid + schedule.between:
        v = syntax.sym(loop.var)
        relations.append(sympy.And(sympy.Ge(v, loop.lo), sympy.Lt(v, loop.hi)))
    return params, tuple(relations)


_PROVERS: "collections.OrderedDict[tuple, Prover]" = collections.OrderedDict()
_KEEP = 16


def prover_for(schedule: Schedule) -> "Prover":
    """The Prover of a schedule, shared by the schedules that assume the same (the variants of
    one schedule mostly do: the footprints and the time model asked the same questions again
    under a new prover per variant, each a z3 solver to build)."""
    key = hypotheses(schedule)
    found = _PROVERS.get(key)
    if found is None:
        found = _PROVERS[key] = Prover(schedule, key)
        if len(_PROVERS) > _KEEP:
            _PROVERS.popitem(last=False)
    else:
        _PROVERS.move_to_end(key)
    return found


class Prover:
    def __init__(self, schedule: Schedule, assumed: "tuple | None" = None):
        """assumed: hypotheses(schedule), where the caller has it already."""
        self._params, relations = assumed or hypotheses(schedule)
        self._env = _Env()   # shared by every translation: one quotient per floor, side conditions kept
        self._memo: dict = {}
        hyps = []
        for relation in relations:
            try:
                hyps.append(to_z3(relation, self._env))
            except (Untranslatable, TypeError, z3.Z3Exception):
                pass  # dropping a hypothesis only weakens what can be proved
        # One solver for every question: the hypotheses are asserted once, each goal in a
        # scope of its own; quotients met later bring their definitions in for good.
        self._solver = limited(z3.Solver(), Z3_WORK)
        self._solver.add(*hyps, *self._env.side)
        self._asserted = len(self._env.side)
        self._usable = self._check([]) == z3.sat

    def _check(self, extra):
        side = self._env.side[self._asserted:]
        self._solver.add(*side)
        self._asserted += len(side)
        self._solver.push()
        try:
            self._solver.add(*extra)
            return self._solver.check()
        finally:
            self._solver.pop()

    def nonneg(self, e) -> bool:
        e = sympy.expand(e)
        if e.is_number:
            return bool(e >= 0)
        if e in self._memo:
            return self._memo[e]
        result = self._fast(e)
        if not result and self._usable:
            try:
                goal = to_z3(e, self._env) >= 0
                result = self._check([z3.Not(goal)]) == z3.unsat
            except (Untranslatable, z3.Z3Exception):
                result = False
        self._memo[e] = result
        return result

    def le(self, a, b) -> bool:
        return self.nonneg(b - a)

    def _fast(self, e) -> bool:
        if not {s.name for s in e.free_symbols} <= self._params:
            return False
        try:
            return all(c >= 0 for c in sympy.Poly(e, *sorted(e.free_symbols, key=str)).coeffs())
        except (sympy.PolynomialError, TypeError):
            return False
