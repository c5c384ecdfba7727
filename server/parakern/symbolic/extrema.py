"""sympy's Min and Max, memoised.

sympy compares every pair of arguments symbolically each time it builds one (Min(32, ub1)
took 3 ms, Min(Min(32, ub1), ceiling(Min(32, ub1)/8)) 20 ms), and the time model builds the
same few again and again: matmul's optimize built 425 of 4 distinct ones, 1.3 s of its
time. The same arguments give the same (immutable) expression, so it is built once.
"""
from __future__ import annotations

import functools

import sympy


@functools.lru_cache(maxsize=4096)
def minimum(*args) -> sympy.Expr:
    """sympy.Min(*args)."""
    return sympy.Min(*args)


@functools.lru_cache(maxsize=4096)
def maximum(*args) -> sympy.Expr:
    """sympy.Max(*args)."""
    return sympy.Max(*args)
