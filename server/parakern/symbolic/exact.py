"""Exact values of sympy terms and relations at integer points, without sympy's substitution.

The tuner and the dispatcher's mirror judge every case at hundreds of candidate points;
substituting into sympy expressions there costs milliseconds each (Max, ceiling and
relations re-simplify themselves), a compiled expression microseconds. A compiled term is
exact: integers and Fractions, the same value sympy's substitution gives. What cannot be
compiled (a Float, Piecewise) or evaluated (a symbol without a value, x/0) falls back on
sympy, so every answer is the one substitution gives.
"""
from __future__ import annotations

import functools
import math
import operator
from fractions import Fraction
from typing import Callable, Mapping

import sympy

from parakern.symbolic.cinteger import cdiv, cmod, evaluate_division


class _Unsupported(Exception):
    pass


_RELATIONS = {sympy.Le: operator.le, sympy.Lt: operator.lt, sympy.Ge: operator.ge, sympy.Gt: operator.gt,
              sympy.Eq: operator.eq, sympy.Ne: operator.ne}


def _compile(e) -> Callable:
    """A sympy term or relation as a Python function of {symbol: int or Fraction}.
    _Unsupported for other nodes."""
    if e.is_Integer:
        v = int(e)
        return lambda env: v
    if e.is_Rational:
        f = Fraction(int(e.p), int(e.q))
        return lambda env: f
    if e.is_Symbol:
        return lambda env: env[e]
    if isinstance(e, sympy.Rel) and type(e) in _RELATIONS:
        op, lhs, rhs = _RELATIONS[type(e)], _compile(e.lhs), _compile(e.rhs)
        return lambda env: op(lhs(env), rhs(env))
    parts = [_compile(a) for a in e.args]
    if isinstance(e, sympy.Or):     # a case reached by several paths of its tree: their union
        return lambda env: any(p(env) for p in parts)
    if isinstance(e, sympy.And):
        return lambda env: all(p(env) for p in parts)
    if isinstance(e, sympy.Not):
        return lambda env: not parts[0](env)
    if e.is_Add:
        return lambda env: sum(p(env) for p in parts)
    if e.is_Mul:
        return lambda env: math.prod(p(env) for p in parts)
    if e.is_Pow and e.exp.is_Integer:
        base, n = parts[0], int(e.exp)
        return (lambda env: base(env) ** n) if n >= 0 else (lambda env: Fraction(1) / base(env) ** -n)
    if isinstance(e, sympy.floor):
        return lambda env: math.floor(parts[0](env))
    if isinstance(e, sympy.ceiling):
        return lambda env: math.ceil(parts[0](env))
    if isinstance(e, sympy.Min):
        return lambda env: min(p(env) for p in parts)
    if isinstance(e, sympy.Max):
        return lambda env: max(p(env) for p in parts)
    if isinstance(e, sympy.Mod):
        return lambda env: parts[0](env) % parts[1](env)
    if isinstance(e, (cdiv, cmod)):
        kind = type(e)
        return lambda env: evaluate_division(kind, parts[0](env), parts[1](env))
    raise _Unsupported(type(e).__name__)


@functools.lru_cache(maxsize=8192)
def compiled(expr) -> "Callable | None":
    """expr as a function of numbers() (KeyError for a missing value, ZeroDivisionError for
    x/0); None where it cannot be compiled."""
    try:
        return _compile(sympy.sympify(expr))
    except (_Unsupported, TypeError, ValueError):
        return None


def numbers(env: Mapping) -> dict:
    """{symbol: int or Fraction} of the values of a substitution that are numbers."""
    out = {}
    for k, v in env.items():
        if getattr(v, "is_Integer", False):
            out[k] = int(v)
        elif getattr(v, "is_Rational", False):
            out[k] = Fraction(int(v.p), int(v.q))
    return out


def _evaluated(expr, subs: Mapping, given: "dict | None"):
    """expr's value at subs through its compiled expression (a bool, an int or a Fraction);
    None where it has none or does not evaluate there."""
    f = compiled(expr)
    if f is None:
        return None
    try:
        return f(numbers(subs) if given is None else given)
    except (KeyError, ZeroDivisionError):
        return None


def substituted(expr, subs: Mapping, given: "dict | None" = None):
    """sympify(expr).xreplace(subs), through the compiled expression where it evaluates."""
    value = _evaluated(expr, subs, given)
    if value is not None:
        if isinstance(value, bool):
            return sympy.true if value else sympy.false
        if isinstance(value, int):
            return sympy.Integer(value)
        return sympy.Rational(value.numerator, value.denominator)
    return sympy.sympify(expr).xreplace(subs)


def integer(expr, subs: Mapping, given: "dict | None" = None) -> "int | None":
    """The value of expr at subs when it is an integer, else None."""
    value = substituted(expr, subs, given)
    return int(value) if value.is_Integer else None


def ceiling(expr, subs: Mapping, given: "dict | None" = None) -> "int | None":
    """The value of expr at subs rounded up when it is a finite number, else None."""
    # the number itself, not made a sympy number and back (the time model's hot path)
    value = _evaluated(expr, subs, given)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, Fraction):
        return math.ceil(value)
    value = substituted(expr, subs, given)
    if value.is_Integer:
        return int(value)
    if value.is_Number and value.is_finite:
        return int(math.ceil(value))
    return None


def truth(relation) -> "bool | None":
    """True / False when the relation evaluates exactly; None when undecided."""
    if relation is sympy.true or relation is True:
        return True
    if relation is sympy.false or relation is False:
        return False
    if relation.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return None
    try:
        return bool(relation)
    except TypeError:
        return None
