"""CUDA's launch limits, the same on every GPU since compute capability 3.0: what a launch's
grid and block may be whatever the device. One home for the tree (a case's kernel must
launch), the dispatcher and the bench's plan."""
from __future__ import annotations

import sympy

GRID_LIMITS = (2**31 - 1, 65535, 65535)   # gridDim x, y, z
BLOCK_LIMITS = (1024, 1024, 64)           # blockDim x, y, z
MAX_THREADS_PER_BLOCK = 1024              # maxThreadsPerBlock of every GPU since Fermi
INT_MAX = 2**31 - 1
AXES = ("x", "y", "z")


def machine_facts(schedule) -> tuple:
    """What holds on every device and in every C call, for z3: T <= 1024, and each `int`
    parameter and derived scalar within int's range (a grid of n/B blocks is then within
    gridDim.x's limit without saying so)."""
    from parakern.symbols import T, sym
    facts = [sympy.Le(T, MAX_THREADS_PER_BLOCK)]
    for p in (*schedule.params, *schedule.derived):
        if p.ctype == "int":
            facts.append(sympy.Le(sym(p.name), INT_MAX))
    return tuple(facts)


def launch_relations(schedule) -> tuple:
    """Each meta_for level's extent within its axis' limit, as relations on the parameters;
    those true for every parameter value (a constant extent within the limit) left out."""
    out = []
    for loop in schedule.loops:
        limits = GRID_LIMITS if loop.level == "grid" else BLOCK_LIMITS
        relation = sympy.Le(sympy.sympify(loop.extent), limits[AXES.index(loop.axis)])
        if relation is not sympy.true:
            out.append(relation)
    return tuple(out)
