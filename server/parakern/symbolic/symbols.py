"""One place that makes sympy symbols, so every stage gets equal symbols."""
from __future__ import annotations

import sympy

# Machine parameters (paper section 3.2): registers per block (the paper's single register
# limit refined: a thread's registers are bounded by what the block's threads share),
# shared-memory bytes per block, threads per block, and the occupancy measure.
R_B = sympy.Symbol("R_B", integer=True)
Z = sympy.Symbol("Z", integer=True)
T = sympy.Symbol("T", integer=True)
P_OCC = sympy.Symbol("P_occ", real=True)
# Registers per thread: not a machine parameter of the tree any more, but the variable of
# the occupancy formula (counters/occupancy.py).
R = sympy.Symbol("R", integer=True)


def sym(name: str) -> sympy.Symbol:
    """The symbol of a C integer scalar (loop variable or parameter)."""
    return sympy.Symbol(name, integer=True)


def opaque(expr) -> bool:
    """Whether expr reads a value the front end could not write in parameters (a loop bound or
    subscript read from an array, frontend/nest.py's `?line_col` symbols)."""
    return any("?" in s.name for s in sympy.sympify(expr).free_symbols)
