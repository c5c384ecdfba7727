"""One place that makes sympy symbols, so every stage gets equal symbols."""
from __future__ import annotations

import sympy

# Machine parameters (paper section 3.2): registers per thread, shared-memory
# bytes per block, threads per block, and the occupancy measure.
R = sympy.Symbol("R", integer=True)
Z = sympy.Symbol("Z", integer=True)
T = sympy.Symbol("T", integer=True)
P_OCC = sympy.Symbol("P_occ", real=True)


def sym(name: str) -> sympy.Symbol:
    """The symbol of a C integer scalar (loop variable or parameter)."""
    return sympy.Symbol(name, integer=True)
