"""One subscript seen from one thread block: a fixed part plus varying runs.

Within a block the grid-level variables and the serial loops between grid and
block levels are fixed; the block-level variables and the serial loops of the
body range over their bounds. A subscript is split as

    index = key + offset + sum(coef * m),   m in [0, count),  coef > 0

where `key` + integer `offset` is the fixed part and the sum the varying one.
Subscripts that are not affine in the varying variables, with parameter
coefficients, have no split (None): the footprint then counts the whole array.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from parakern.analysis.prover import Prover
from parakern.analysis.regions import Notes
from parakern.model import Access, Array, Schedule
from parakern.symbolic.symbols import opaque


@dataclass(frozen=True)
class Range:
    """A varying variable: start + stride*m, m in [0, count)."""
    start: sympy.Expr
    stride: sympy.Expr
    count: sympy.Expr
    exact: bool


@dataclass(frozen=True)
class Subscript:
    """One subscript: key + offset + sum(coef*m), m in [0, count), coef > 0."""
    key: sympy.Expr
    offset: sympy.Integer
    terms: tuple[tuple[sympy.Expr, sympy.Expr], ...]  # sorted by str: comparable between accesses
    exact: bool


class Subscripts:
    """Splits the subscripts of one schedule's accesses; `notes` collects what was assumed."""

    def __init__(self, schedule: Schedule, prover: Prover, notes: Notes):
        self.s = schedule
        self.prover = prover
        self.notes = notes
        self.params = {p.name for p in schedule.params} | {d.name for d in schedule.derived}
        self.between = {lp.var for lp in schedule.between}
        self.fixed = {lp.var for lp in schedule.grid} | self.between
        self.block_vars = tuple(lp.var for lp in schedule.block)

    def split(self, access: Access, array: Array) -> "tuple[Subscript, ...] | None":
        if not access.exact or len(access.indices) != array.rank:
            return None
        varying = self.block_vars + tuple(v for v in access.loops if v not in self.between)
        dims = []
        for index in access.indices:
            dim = self._subscript(sympy.sympify(index), varying)
            if dim is None:
                return None
            dims.append(dim)
        return tuple(dims)

    def _subscript(self, index: sympy.Expr, varying: tuple[str, ...]) -> "Subscript | None":
        names = {s.name for s in index.free_symbols}
        if opaque(index) or not names <= self.params | self.fixed | set(varying):
            return None
        gens = sorted((s for s in index.free_symbols if s.name in varying), key=str)
        base, terms, exact = sympy.expand(index), [], True
        if gens:
            try:
                poly = sympy.Poly(base, *gens)
            except sympy.PolynomialError:
                return None
            if poly.total_degree() > 1:
                return None
            base = poly.as_expr() - sum(poly.coeff_monomial(g) * g for g in gens)
            for g in gens:
                c = sympy.expand(poly.coeff_monomial(g))
                if c == 0:
                    continue
                if not {s.name for s in c.free_symbols} <= self.params:
                    return None  # the stride depends on where the block is
                r = self._range(g.name)
                if r is None:
                    return None
                coef, count = sympy.expand(c * r.stride), r.count
                base += c * r.start
                if self._negative(coef):
                    base += coef * (count - 1)
                    coef = -coef
                terms.append((coef, count))
                exact = exact and r.exact
        offset, key = sympy.expand(base).as_coeff_Add()
        if not offset.is_Integer:
            offset, key = sympy.S.Zero, sympy.expand(base)
        return Subscript(key, offset, tuple(sorted(terms, key=str)), exact)

    def _negative(self, c) -> bool:
        if c.is_number:
            return bool(c < 0)
        if self.prover.nonneg(c):
            return False
        if self.prover.nonneg(-c):
            return True
        self.notes.add(f"the coefficient {c} is assumed positive")
        return False

    # ---- variable ranges

    def _range(self, var: str, active: tuple[str, ...] = ()) -> "Range | None":
        loops = {(lp.lo, lp.hi, sympy.S.One) for lp in self.s.block if lp.var == var}
        loops |= {(lp.lo, lp.hi, lp.step) for lp in self.s.serial if lp.var == var}
        hull = False
        if len(loops) > 1:   # softmax's three `for (int j ...)` from 0 or 1 to n: their hull, in steps of 1
            hull = self._hull(loops)
            if hull is None:
                self.notes.add(f"loops named '{var}' have different bounds: the accesses in them are not told apart")
                return None
            self.notes.add(f"loops named '{var}' have different bounds: the hull of their ranges is counted")
            loops = {hull}
        if len(loops) != 1 or var in active:
            return None
        lo, hi, step = loops.pop()
        names = {s.name for s in (lo.free_symbols | hi.free_symbols)}
        unknown = {s.name for s in step.free_symbols} - self.params
        unknown |= names - self.params - self.fixed - {lp.var for lp in self.s.block + self.s.serial}
        if unknown:
            self.notes.add(f"the bounds of loop '{var}' read {', '.join(sorted(unknown))}, "
                      "which is neither a parameter nor a loop variable")
            return None
        if names <= self.params | self.fixed:
            start, exact = lo, True
            count = hi - lo if step == 1 else sympy.ceiling((hi - lo) / step)
        else:  # bounds depend on other varying variables: their hull, step ignored
            start = self._bound(lo, False, active + (var,))
            last = self._bound(hi - 1, True, active + (var,))
            if start is None or last is None:
                return None
            step, count, exact = sympy.S.One, last - start + 1, False
            self.notes.add(f"the bounds of loop '{var}' depend on other loops: their hull is counted")
        count = sympy.expand(count)
        exact = exact and not hull
        if {s.name for s in count.free_symbols} & self.fixed:
            count = self._fixed_max(count)
            if count is None:
                return None
            exact = False
            self.notes.add(f"the trip count of '{var}' depends on the block: its maximum is counted")
        if not {s.name for s in count.free_symbols} <= self.params:
            return None
        return Range(sympy.expand(start), sympy.expand(step), count, exact)

    @staticmethod
    def _hull(loops) -> "tuple | None":
        """(lowest start, highest end, 1) of loops of one name, where sympy can tell which they are
        (`0` and `1`, `n` and `n - 1`); None otherwise."""
        lo, hi = sympy.Min(*(x[0] for x in loops)), sympy.Max(*(x[1] for x in loops))
        if isinstance(lo, sympy.Min) or isinstance(hi, sympy.Max):
            return None
        return lo, hi, sympy.S.One

    def _bound(self, expr, upper: bool, active) -> "sympy.Expr | None":
        """Min (max) of an affine expression over the varying variables it reads."""
        expr = sympy.expand(expr)
        for s in sorted(expr.free_symbols, key=str):
            if s.name in self.params or s.name in self.fixed:
                continue
            c = sympy.expand(expr.coeff(s))
            if s in c.free_symbols or not {t.name for t in c.free_symbols} <= self.params:
                return None
            r = self._range(s.name, active)
            if r is None:
                return None
            low, high = r.start, r.start + r.stride * (r.count - 1)
            expr = sympy.expand(expr - c * s + c * (high if upper != self._negative(c) else low))
        return expr

    def _fixed_max(self, expr) -> "sympy.Expr | None":
        """Max of an affine expression over the fixed (grid, between) variables."""
        fixed = {lp.var: lp for lp in self.s.grid + self.s.between}
        for _ in range(len(fixed) + 1):
            present = [s for s in expr.free_symbols if s.name in fixed]
            if not present:
                return expr
            for s in present:
                c = sympy.expand(expr.coeff(s))
                if s in c.free_symbols or not {t.name for t in c.free_symbols} <= self.params:
                    return None
                loop = fixed[s.name]
                expr = sympy.expand(expr - c * s + c * (loop.lo if self._negative(c) else loop.hi - 1))
        return None
