"""Sympy relations and expressions as text: sympy syntax (`to_text`, the JSON contract), C
(`to_c`) and Unicode mathematics for people (`to_math`).

symbolic/constraints.py decides systems with z3; this module only writes them, so printing needs no
solver. `CPrinter` is also the base of the code generator's integer printer
(codegen/cprint.py): floor(a/b) prints as C's `a/b` and Mod(a, b) as `a % b`, which is what
they are for the non-negative values hypothesis (H1) of the paper allows; cdiv / cmod, C's
own truncating `/` and `%` where an operand may be negative (symbolic/cinteger.py), print the same.
"""
from __future__ import annotations

import functools

import sympy
from sympy.printing.precedence import PRECEDENCE, precedence
from sympy.printing.str import StrPrinter

from parakern.symbolic.cinteger import cdiv, cmod
from parakern.symbolic.relations import integral_sides, relation_of

_MAX_PRODUCT_POWER = 16   # x**n prints as x*x*...*x up to this exponent (C has no integer pow)
_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def to_text(relation) -> str:
    """sympy syntax, one relation per string: "8*B*s + 8 <= Z" (the JSON contract)."""
    return sympy.sstr(relation_of(relation))


def to_c(relation) -> str:
    """C syntax: `8*B*s + 8 <= Z`, floor(a/b) as `a/b`, Mod as `%`, && / || / !."""
    r = relation_of(relation)
    if isinstance(r, sympy.Rel) and not r.has(sympy.oo, -sympy.oo) and \
            all(s.is_integer for s in r.free_symbols):
        lhs, rhs = integral_sides(r.lhs, r.rhs)   # no rational coefficient reaches C
        r = type(r)(lhs, rhs, evaluate=False)
    return CPrinter().doprint(r)


def to_math(relation) -> str:
    """Unicode mathematics: `8·B·s + 8 ≤ Z`, ⌊(N - 2)/(B·s)⌋, ⌈B0/4⌉, ∧, ∨. A disjunction is
    in parentheses: it is shown as one relation of a conjunction (a case reached by several
    paths: `(R_B < 32768 ∨ Z < 64·B0) ∧ B0 ≤ T`)."""
    r = relation_of(relation)
    text = MathPrinter().doprint(with_ceilings(r))
    return f"({text})" if isinstance(r, sympy.Or) else text


def to_plain(expr) -> str:
    """sympy syntax for people (a counter in the text report): `ub1*ceiling(B0/4)`, `B*B` for
    B**2, where to_text keeps the form sympy gave (`ub1*floor(B0/4 + 3/4)`: the JSON contract)."""
    return PlainPrinter().doprint(with_ceilings(sympy.sympify(expr)))


def with_ceilings(expr):
    """`expr` with every floor((n + d - 1)/d) written ceiling(n/d): the same integer for the
    integers n and d >= 1 of H1. C's ceiling division (n + d - 1)/d reaches sympy as that
    floor, which it prints ⌊B0/4 + 3/4⌋ where ⌈B0/4⌉ is meant."""
    if not isinstance(expr, sympy.Basic) or not expr.has(sympy.floor):
        return expr
    return expr.replace(lambda e: isinstance(e, sympy.floor), _as_ceiling)


def _as_ceiling(e):
    parts = _division(e.args[0])
    if parts is None:
        return e
    num, den = parts
    if den == 1 or den.is_negative or (den.is_number and not den.is_Integer):
        return e
    rest = sympy.expand(num - den + 1)
    if len(sympy.Add.make_args(rest)) >= len(sympy.Add.make_args(sympy.expand(num))):
        return e          # not of that form: floor(N/B) stays a floor
    return sympy.ceiling(rest / den)


def _division(arg):
    """(numerator, denominator) of a floor/ceiling argument when both are integer-valued."""
    num, den = sympy.together(arg).as_numer_denom()
    if _integer(num) and _integer(den):
        return num, den
    return None


def _integer(expr) -> bool:
    """Integer-valued for the integer parameters: sympy leaves floor(n/B) undecided (B = 0
    would make it undefined), where H1's positive sizes make it an integer."""
    rounded = expr.replace(lambda x: isinstance(x, (sympy.floor, sympy.ceiling)),
                           lambda x: sympy.Dummy(integer=True))
    return bool(rounded.is_integer)


class CPrinter(StrPrinter):
    """Sympy as C: integer division and `%`, `&&`/`||`/`!`, powers as products, `?:` for Min/Max."""

    _relationals = {"==": "==", "!=": "!="}

    def _division_like(self, item) -> bool:
        return isinstance(item, (sympy.Mod, cdiv, cmod)) or \
            (isinstance(item, (sympy.floor, sympy.ceiling)) and _division(item.args[0]) is not None)

    def parenthesize(self, item, level, strict=False):
        # Integer division and % bind like *: `8*(N/B)` must keep its parentheses.
        prec = PRECEDENCE["Mul"] if self._division_like(item) else precedence(item)
        if prec < level or (not strict and prec <= level):
            return "(%s)" % self._print(item)
        return self._print(item)

    def _print_Relational(self, expr):
        return "%s %s %s" % (self.parenthesize(expr.lhs, PRECEDENCE["Relational"]),
                             expr.rel_op,
                             self.parenthesize(expr.rhs, PRECEDENCE["Relational"]))

    def _print_And(self, expr):
        return " && ".join(self.parenthesize(a, PRECEDENCE["And"]) for a in expr.args)

    def _print_Or(self, expr):
        return " || ".join(self.parenthesize(a, PRECEDENCE["Or"]) for a in expr.args)

    def _print_Not(self, expr):
        return "!(%s)" % self._print(expr.args[0])

    def _print_BooleanTrue(self, expr):
        return "1"

    def _print_BooleanFalse(self, expr):
        return "0"

    def _print_floor(self, expr):
        parts = _division(expr.args[0])
        if parts is None:
            return "floor(%s)" % self._print(expr.args[0])
        num, den = parts
        if den == 1:
            return self._print(num)
        return "%s/%s" % (self.parenthesize(num, PRECEDENCE["Mul"], strict=True),
                          self.parenthesize(den, PRECEDENCE["Mul"]))

    def _print_ceiling(self, expr):
        parts = _division(expr.args[0])
        if parts is None:
            return "ceil(%s)" % self._print(expr.args[0])
        num, den = parts
        if den == 1:
            return self._print(num)
        # ceil(a/b) = (a + b - 1)/b for the non-negative integers of H1
        return "%s/%s" % (self.parenthesize(num + den - 1, PRECEDENCE["Mul"], strict=True),
                          self.parenthesize(den, PRECEDENCE["Mul"]))

    def _print_Mod(self, expr):
        a, b = expr.args
        return "%s %% %s" % (self.parenthesize(a, PRECEDENCE["Mul"]),
                             self.parenthesize(b, PRECEDENCE["Mul"]))

    _print_cmod = _print_Mod   # C's % is what cmod means

    def _print_cdiv(self, expr):
        a, b = expr.args
        return "%s/%s" % (self.parenthesize(a, PRECEDENCE["Mul"], strict=True),
                          self.parenthesize(b, PRECEDENCE["Mul"]))

    def _print_Pow(self, expr, rational=False):
        if expr.exp.is_Integer and 0 < int(expr.exp) <= _MAX_PRODUCT_POWER:
            base = self.parenthesize(expr.base, PRECEDENCE["Mul"])
            return "*".join([base] * int(expr.exp))
        return "pow(%s, %s)" % (self._print(expr.base), self._print(expr.exp))

    def _print_Rational(self, expr):
        return "(%d.0/%d)" % (expr.p, expr.q)  # only reached with a real symbol around

    def _print_MinMaxBase(self, expr, op):
        values = [self._print(a) for a in expr.args]
        return functools.reduce(lambda x, y: "((%s) %s (%s) ? (%s) : (%s))" % (x, op, y, x, y), values)

    def _print_Max(self, expr):
        return self._print_MinMaxBase(expr, ">=")

    def _print_Min(self, expr):
        return self._print_MinMaxBase(expr, "<=")

    def _print_Piecewise(self, expr):
        pieces = list(expr.args)
        result = self._print(pieces.pop().expr) if pieces[-1].cond is sympy.true else "0"
        for piece in reversed(pieces):
            result = "((%s) ? (%s) : (%s))" % (self._print(piece.cond), self._print(piece.expr), result)
        return result

    def _print_Infinity(self, expr):
        return "INFINITY"

    def _print_NegativeInfinity(self, expr):
        return "-INFINITY"


class PlainPrinter(StrPrinter):
    """sympy syntax with powers as products, as C writes them (`n*n`, never `n**2`)."""

    _print_Pow = CPrinter._print_Pow


class MathPrinter(StrPrinter):
    """Sympy as Unicode mathematics: `·`, superscripts, `≤`, `∧`, ⌊ ⌋."""

    _relationals = {"==": "=", "!=": "≠", "<=": "≤", ">=": "≥"}

    def _print_Relational(self, expr):
        op = self._relationals.get(expr.rel_op, expr.rel_op)
        return "%s %s %s" % (self._print(expr.lhs), op, self._print(expr.rhs))

    def _print_Mul(self, expr):
        return super()._print_Mul(expr).replace("*", "·")

    def _print_Pow(self, expr, rational=False):
        if expr.exp.is_Integer and int(expr.exp) > 1:
            return self.parenthesize(expr.base, PRECEDENCE["Pow"], strict=False) + \
                str(int(expr.exp)).translate(_SUPERSCRIPTS)
        return super()._print_Pow(expr, rational)

    def _print_And(self, expr):
        return " ∧ ".join(self.parenthesize(a, PRECEDENCE["And"]) for a in expr.args)

    def _print_Or(self, expr):
        return " ∨ ".join(self.parenthesize(a, PRECEDENCE["Or"]) for a in expr.args)

    def _print_Not(self, expr):
        return "¬(%s)" % self._print(expr.args[0])

    def _print_BooleanTrue(self, expr):
        return "true"

    def _print_BooleanFalse(self, expr):
        return "false"

    def _print_floor(self, expr):
        return "⌊%s⌋" % self._print(expr.args[0])

    def _print_ceiling(self, expr):
        return "⌈%s⌉" % self._print(expr.args[0])

    def _print_Mod(self, expr):
        a, b = expr.args
        return "%s mod %s" % (self.parenthesize(a, PRECEDENCE["Mul"]), self.parenthesize(b, PRECEDENCE["Mul"]))

    def _print_cdiv(self, expr):   # C's /: the quotient truncated toward zero
        return "trunc(%s/%s)" % (self.parenthesize(expr.args[0], PRECEDENCE["Mul"], strict=True),
                                 self.parenthesize(expr.args[1], PRECEDENCE["Mul"]))

    def _print_cmod(self, expr):   # C's %: the remainder with the sign of the dividend
        a, b = expr.args
        return "%s rem %s" % (self.parenthesize(a, PRECEDENCE["Mul"]), self.parenthesize(b, PRECEDENCE["Mul"]))

    def _print_Max(self, expr):
        return "max(%s)" % ", ".join(self._print(a) for a in expr.args)

    def _print_Min(self, expr):
        return "min(%s)" % ", ".join(self._print(a) for a in expr.args)

    def _print_Infinity(self, expr):
        return "∞"

    def _print_NegativeInfinity(self, expr):
        return "-∞"
