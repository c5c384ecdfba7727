"""C's integer `/` and `%` in sympy: they truncate toward zero.

C's `a / b` is the floor of a/b only where a >= 0 and b > 0 (or both are <= 0); at a = -1,
b = 2 it is 0 where the floor is -1, and `(i - 1) % 2` is -1 at i = 0 where Mod gives 1.
sympy also rewrites Mod and floor as their own arithmetic allows (Mod(i - 1, 2) becomes
Mod(i + 1, 2)), which is wrong for C as soon as an operand may be negative. So a C division
becomes sympy's floor / Mod only where its operands are known to have those signs
(`quotient`, `remainder`), and `cdiv` / `cmod` otherwise: functions sympy leaves alone,
which every stage reads with C's meaning (constraints.to_z3, exact, printing, ir).

Signs come from lower bounds (`lower_bound`): a symbol is >= 0 unless `lower` says
otherwise (hypothesis (H1) of the paper for parameters; a loop variable from its start),
and a divisor is never 0 (C leaves division by zero undefined, and the front end makes
every symbolic divisor a fact), so a divisor >= 0 is >= 1, and so is each symbol of a
product that divides.

Where C's / and % become sympy or z3, and what each reads:
- the front end (frontend/nest.py, schedule.py): the model's subscripts, guards, bounds,
  derived scalars and facts, with each loop variable's start; frontend/signs.py then settles
  with the facts what it can (assert(N >= 2), a meta_for bound >= 1);
- z3 (constraints.to_z3: the dependence test, the footprint prover, the case tree, the
  dispatcher's facts): cdiv / cmod exactly, the remainder with the dividend's sign;
- symbolic/exact.py, lambdify (LAMBDIFY_MODULES), the IR (sdiv / srem) and the C printers (`/`, `%`):
  C's values;
- analysis/traffic.py's walk of a body's locals and conditions, analysis/settled.py and the
  strategies' comparisons of loop bounds: the loop variables they see from 0 (H1) unless
  told their start (settled.py is); a static traffic figure of a loop from a negative start
  may differ by a sector, which `profile --emulate` shows;
- tune's divisor parameters (search.py) and verify's uneven sizes (verify/points.py)
  look for floor divisions: a quotient the facts cannot settle is no divisor to them.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Mapping

import sympy

Bounds = Mapping[str, "int | None"]   # symbol name -> its least value (None: unknown)


def c_quotient(a: int, b: int) -> int:
    """C's a / b on Python integers (b != 0)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _truncated(a, b):
    """a / b truncated, for integers or Fractions."""
    if isinstance(a, int) and isinstance(b, int):
        return c_quotient(a, b)
    return math.trunc(Fraction(a) / Fraction(b))


class cdiv(sympy.Function):
    """C's integer a / b: the quotient truncated toward zero."""

    @classmethod
    def eval(cls, a, b):
        if a.is_Integer and b.is_Integer and b != 0:
            return sympy.Integer(c_quotient(int(a), int(b)))
        if b == 1:
            return a
        if b == -1:
            return -a
        if a == 0:
            return sympy.S.Zero
        return None

    def _eval_is_integer(self):
        return True


class cmod(sympy.Function):
    """C's integer a % b: a - b*(a / b), with the sign of a."""

    @classmethod
    def eval(cls, a, b):
        if a.is_Integer and b.is_Integer and b != 0:
            return sympy.Integer(int(a) - int(b) * c_quotient(int(a), int(b)))
        if b in (1, -1) or a == 0:
            return sympy.S.Zero
        return None

    def _eval_is_integer(self):
        return True


def evaluate_division(kind, a, b):
    """The value of cdiv / cmod at numbers (ints or Fractions); ZeroDivisionError at b = 0."""
    if b == 0:
        raise ZeroDivisionError("C division by zero")
    q = _truncated(a, b)
    return q if kind is cdiv else a - b * q


# sympy.lambdify's modules for expressions that may hold cdiv / cmod (with the math module)
LAMBDIFY_MODULES = [{"cdiv": lambda a, b: evaluate_division(cdiv, a, b),
                     "cmod": lambda a, b: evaluate_division(cmod, a, b)}, "math"]


# ------------------------------------------------------------------ signs

def lower_bound(expr, lower: "Bounds | None" = None) -> "int | None":
    """A least value of an integer expression (None where none is known): symbols at their
    bound in `lower` (0 for one not named there), sums term by term, products of non-negative
    factors; a floor division or Mod that `quotient` / `remainder` built is >= 0."""
    lower = lower or {}
    e = sympy.sympify(expr)
    if e.is_Integer:
        return int(e)
    if e.is_Rational:
        return math.floor(Fraction(int(e.p), int(e.q)))
    if e.is_Symbol:
        if "?" in e.name:
            return None   # a value read from an array: any sign
        return lower.get(e.name, 0)
    if e.is_Add:
        total = 0
        for term in e.args:
            low = lower_bound(term, lower)
            if low is None:
                return None
            total += low
        return total
    if e.is_Mul:
        coeff, rest = e.as_coeff_Mul()
        if coeff < 0:
            return None
        product = 1
        for factor in sympy.Mul.make_args(rest):
            low = lower_bound(factor, lower)
            if low is None or low < 0:
                return None
            product *= low
        return math.floor(coeff * product)
    if e.is_Pow and e.exp.is_Integer and int(e.exp) > 0:
        low = lower_bound(e.base, lower)
        if int(e.exp) % 2 == 0:
            return 0 if low is None or low < 0 else low ** int(e.exp)
        return None if low is None or low < 0 else low ** int(e.exp)
    if isinstance(e, sympy.floor):
        num, den = sympy.fraction(sympy.together(e.args[0]))
        if _settled(num, den, lower):
            return 0
        return None
    if isinstance(e, sympy.Mod):
        return 0 if _positive(e.args[1], lower) else None
    if isinstance(e, sympy.Piecewise):
        lows = [lower_bound(p.expr, lower) for p in e.args]
        return None if any(x is None for x in lows) else min(lows)
    return None


def _positive(divisor, lower: "Bounds | None") -> bool:
    """A divisor known >= 1: >= 0 and, being a divisor, not 0."""
    low = lower_bound(divisor, lower)
    return low is not None and low >= 0


def _with_divisor(divisor, lower: "Bounds | None") -> "Bounds | None":
    """`lower` with each symbol of a divisor that is a product of non-negative symbols at least 1
    (`(n + B - 1) / B`: B is not 0, so n + B - 1 >= 0)."""
    coeff, rest = sympy.sympify(divisor).as_coeff_Mul()
    factors = sympy.Mul.make_args(rest)
    if coeff <= 0 or not all(f.is_Symbol and "?" not in f.name for f in factors):
        return lower
    bounds = dict(lower or {})
    for f in factors:
        low = bounds.get(f.name, 0)
        if low is None or low < 0:
            return lower
        bounds[f.name] = max(low, 1)
    return bounds


def _settled(a, b, lower: "Bounds | None") -> bool:
    """Whether C's a / b is the floor of a/b: a >= 0 and b >= 1."""
    if not _positive(b, lower):
        return False
    low = lower_bound(a, _with_divisor(b, lower))
    return low is not None and low >= 0


def quotient(a, b, lower: "Bounds | None" = None):
    """C's a / b for integer sympy terms: floor(a/b) where the signs allow, else cdiv(a, b)."""
    a, b = sympy.sympify(a), sympy.sympify(b)
    if (a.is_Integer and b.is_Integer and b != 0) or not _settled(a, b, lower):
        return cdiv(a, b)
    return sympy.floor(a / b)


def remainder(a, b, lower: "Bounds | None" = None):
    """C's a % b for integer sympy terms: Mod(a, b) where the signs allow, else cmod(a, b)."""
    a, b = sympy.sympify(a), sympy.sympify(b)
    if (a.is_Integer and b.is_Integer and b != 0) or not _settled(a, b, lower):
        return cmod(a, b)
    return sympy.Mod(a, b)


def settle(expr, lower: "Bounds | None" = None):
    """expr with each cdiv / cmod whose operands `lower` now proves non-negative (and the
    divisor positive) as floor / Mod, innermost first."""
    e = sympy.sympify(expr)
    if not e.has(cdiv, cmod):
        return e

    def rewrite(node):
        if isinstance(node, (cdiv, cmod)):
            a, b = node.args
            build = quotient if isinstance(node, cdiv) else remainder
            return build(a, b, lower)
        return node

    return _bottom_up(e, rewrite)


def _bottom_up(e, rewrite):
    if not e.args or e.is_Atom:
        return rewrite(e)
    args = tuple(_bottom_up(a, rewrite) for a in e.args)
    node = e if all(x is y for x, y in zip(args, e.args)) else e.func(*args)
    return rewrite(node)


def truncating(expr) -> bool:
    """Whether expr holds a C division that is not the floor (cdiv / cmod)."""
    return sympy.sympify(expr).has(cdiv, cmod)
