"""The launch geometry of a case: grid, block and dynamic shared memory (a decision about the
case, read by the dispatch rule, the time model and the code generator alike).

Grid and block sizes are the extents of the meta_for levels on each axis
(x innermost, 1 where no level maps to an axis), as ir/host.py launches the
IR; the dynamic shared memory is the shared-memory counter's polynomial,
which is exactly the staging buffer (ir/staged_copies.py). Everything is in the
program and data parameters only: derived scalars (`dim`) are replaced by
their definitions, so the host needs nothing but the parameters.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from parakern.analysis.point import definitions
from parakern.comprehensive import Case
from parakern.model import Schedule

AXES = ("x", "y", "z")


@dataclass(frozen=True)
class Launch:
    grid: tuple[sympy.Expr, sympy.Expr, sympy.Expr]    # x, y, z
    block: tuple[sympy.Expr, sympy.Expr, sympy.Expr]
    shared_bytes: sympy.Expr                           # dynamic, per block
    threads: sympy.Expr                                # per block: the product of `block`
    # relations on the parameters without which the kernel must not be launched (Kernel.requires:
    # a register tile's factors divide the grid), beside CUDA's limits
    requires: tuple = ()


def in_parameters(expr, schedule: Schedule) -> sympy.Expr:
    """`expr` with every derived scalar replaced by its definition."""
    return sympy.sympify(expr).xreplace(definitions(schedule))


def launch_of(case: Case) -> Launch:
    s = case.kernel.schedule
    sizes = {(lp.level, lp.axis): in_parameters(lp.extent, s) for lp in s.loops}
    grid = tuple(sizes.get(("grid", a), sympy.S.One) for a in AXES)
    block = tuple(sizes.get(("block", a), sympy.S.One) for a in AXES)
    shared = in_parameters(dict(case.counters).get("shared_memory", 0), s)
    requires = tuple(in_parameters(r, s) for r in case.kernel.requires)
    return Launch(grid, block, sympy.expand(shared), sympy.expand(sympy.Mul(*block)), requires)
