"""CUDA's launch limits, the same on every GPU since compute capability 3.0: what a launch's
grid and block may be whatever the device. One home for the tree (a case's kernel must
launch), the dispatcher and the bench's plan."""
from __future__ import annotations

import re

import sympy
from parakern.symbolic.printing import to_c
from parakern.symbolic.symbols import T, sym

GRID_LIMITS = (2**31 - 1, 65535, 65535)   # gridDim x, y, z
BLOCK_LIMITS = (1024, 1024, 64)           # blockDim x, y, z
MAX_THREADS_PER_BLOCK = 1024              # maxThreadsPerBlock of every GPU since Fermi
INT_MAX = 2**31 - 1
AXES = ("x", "y", "z")


_BITS = {"char": 8, "short": 16, "int": 32, "long": 64, "long long": 64}


def c_integer(text: str) -> "int | None":
    """A decimal integer as a user types it for a C parameter (`-4`, `1024`), else None: Python's
    int() would also take `1_6` for 16."""
    text = text.strip()
    return int(text) if re.fullmatch(r"[+-]?[0-9]+", text) else None


def value_range(ctype: str) -> "tuple[int, int] | None":
    """The values a C integer scalar of this type holds (LP64), None for another type."""
    unsigned = ctype.startswith("unsigned")
    bits = _BITS.get(ctype.removeprefix("unsigned").strip() or "int")
    if bits is None:
        return None
    return (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def out_of_range(params, values: dict) -> str:
    """'' when every value fits its parameter's C type, else which one does not."""
    for p in params:
        bounds = value_range(p.ctype) if p.name in values else None
        if bounds and not bounds[0] <= values[p.name] <= bounds[1]:
            return f"{p.name} = {values[p.name]} is beyond the range of its type {p.ctype} ({bounds[0]} to {bounds[1]})"
    return ""


def overflowing_definition(schedule, values: dict) -> str:
    """'' when every derived scalar's definition stays within its C type at these values, else
    which sum or product does not (saxpy's `blocks = (n + B - 1)/B` at n = 2^31 - 1: n + B - 1
    wraps in int, and tune called every B feasible)."""
    for d in schedule.derived:
        bounds = value_range(d.ctype)
        if bounds is None:
            continue
        for term in sympy.preorder_traversal(sympy.sympify(d.value)):
            if not isinstance(term, (sympy.Add, sympy.Mul)) or not term.free_symbols:
                continue
            if any(x.name not in values for x in term.free_symbols):
                continue
            value = term.xreplace({x: sympy.Integer(values[x.name]) for x in term.free_symbols})
            if value.is_Integer and not bounds[0] <= int(value) <= bounds[1]:
                return (f"{to_c(term)} in the definition of {d.name} (line {d.span.line}) is beyond the range "
                        f"of {d.ctype} ({bounds[0]} to {bounds[1]}): C would wrap it")
    return ""


def machine_facts(schedule) -> tuple:
    """What holds on every device and in every C call, for z3: T <= 1024, and each `int`
    parameter and derived scalar within int's range (a grid of n/B blocks is then within
    gridDim.x's limit without saying so)."""
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
