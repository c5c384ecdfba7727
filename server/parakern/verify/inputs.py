"""The arguments of one call of the enclosing function at a parameter point.

Scalars: the point's values for the schedule's parameters; a float parameter
gets a seeded value; any other scalar argument of the function (jacobi's
time-step count T) gets a small constant. Arrays: their declared dimensions
at those values; a pointer the schedule indexes gets the largest subscript
its accesses can reach over the box of loop bounds (guards ignored: an
over-estimate) plus one; any other pointer a fixed size.
"""
from __future__ import annotations

import itertools
import random

import sympy

from parakern.symbolic.cinteger import LAMBDIFY_MODULES
from parakern.symbolic.symbols import sym
from parakern.frontend.constexpr import evaluate
from parakern.verify.signature import FLOATING, Signature
from parakern.verify.points import _complete
from parakern import syntax

OTHER_INT = 3            # scalar arguments that are not schedule parameters
# ... and, where the function did not reach the schedule with them (its `if (flag)` took the
# other branch, its step loop ran too few steps), the values tried after it, in turn
OTHER_INTS = (OTHER_INT, 0, 1, 2, 4, 8)
OTHER_FLOAT = 0.5
UNKNOWN_SIZE = 1 << 16   # elements of a pointer whose extent cannot be worked out
_MAX_CORNERS = 1 << 12


class InputError(ValueError):
    """An argument whose size cannot be worked out at this point."""


def scalars(signature: Signature, schedule, values: dict, seed: str, host: int = 0) -> dict:
    """The scalar arguments of a call: the point's values, random floats for floating
    parameters, and OTHER_INTS[host] for the integers that are no parameter of the schedule."""
    rng = random.Random(seed)
    params = {p.name for p in schedule.params}
    result = {}
    for a in signature.arguments:
        if a.is_array:
            continue
        if a.name in values:
            result[a.name] = values[a.name]
        elif a.ctype in FLOATING:
            result[a.name] = round(rng.uniform(0.5, 2.0), 3) if a.name in params else OTHER_FLOAT
        else:
            result[a.name] = OTHER_INTS[host % len(OTHER_INTS)]
    return result


def sizes(signature: Signature, schedule, model, scalar_values: dict) -> tuple[dict, dict]:
    """(elements per array argument, dimensions per array argument)."""
    defines = dict(signature.defines)
    count, dims = {}, {}
    for a in signature.arguments:
        if not a.is_array:
            continue
        if a.kind == "array" and all(d is not None for d in a.dims):
            try:
                shape = [evaluate(d, scalar_values, defines) for d in a.dims]
            except ValueError as exc:
                raise InputError(f"size of '{a.name}': {exc}") from None
            if any(n < 0 for n in shape):
                raise InputError(f"'{a.name}' has a negative dimension {shape} at this point")
            dims[a.name] = shape
            total = 1
            for n in shape:
                total *= n
            count[a.name] = max(total, 1)
        else:
            count[a.name] = _pointer_extent(schedule, model, a.name, scalar_values)
            dims[a.name] = []
    return count, dims


def _pointer_extent(schedule, model, name: str, scalar_values: dict) -> int:
    accesses = [x for x in schedule.accesses if x.array == name]
    if not accesses:
        return 1024
    if any(not x.exact or len(x.indices) != 1 for x in accesses):
        return UNKNOWN_SIZE
    values = {k: v for k, v in scalar_values.items() if isinstance(v, int)}
    full = _complete(model, {k: v for k, v in values.items() if k in model.settable}) or values
    # what the host code sets (a grid extent changed after its definition) is not known before the call
    subs = {sym(k): sympy.Integer(v) for k, v in full.items() if k not in model.hidden}
    ranges = _loop_ranges(schedule, subs)
    if ranges is None:
        return UNKNOWN_SIZE
    top = 0
    for access in accesses:
        high = _maximum(sympy.sympify(access.indices[0]).xreplace(subs), ranges)
        if high is None:
            return UNKNOWN_SIZE
        top = max(top, high)
    return top + 1


def _loop_ranges(schedule, subs) -> "dict | None":
    """Loop variable -> (lowest, highest) value over the nest, outer loops first."""
    ranges = {}
    for loop in list(schedule.grid) + list(schedule.between) + list(schedule.block) + list(schedule.serial):
        lo = _minimum(sympy.sympify(loop.lo).xreplace(subs), ranges)
        hi = _maximum(sympy.sympify(loop.hi).xreplace(subs), ranges)
        if lo is None or hi is None:
            return None
        ranges[sym(loop.var)] = (lo, max(lo, hi - 1))
    return ranges


def _corners(expr, ranges):
    free = sorted(expr.free_symbols, key=lambda s: s.name)
    if any(s not in ranges for s in free):
        return None
    if 2 ** len(free) > _MAX_CORNERS:
        return None
    f = sympy.lambdify(free, expr, modules=LAMBDIFY_MODULES)
    try:
        return [int(f(*corner)) for corner in itertools.product(*(ranges[s] for s in free))]
    except (ZeroDivisionError, ValueError, TypeError, OverflowError):
        return None


def _maximum(expr, ranges) -> "int | None":
    values = _corners(expr, ranges)
    return max(values) if values else None


def _minimum(expr, ranges) -> "int | None":
    values = _corners(expr, ranges)
    return min(values) if values else None


def index_limits(schedule, count: dict, dims: dict) -> dict:
    """Integer arrays whose values the schedule uses as subscripts, or as the bounds of a loop
    whose variable subscripts an array (CSR's col in x[col[k]], rowptr in k < rowptr[r + 1]):
    name -> the smallest extent they index, so that the random inputs stay inside the arrays
    (values in [0, 100) crashed the serial C of a sparse matrix-vector product)."""
    integer = {a.name for a in schedule.arrays if syntax.is_integer(a.ctype)}
    carried: dict[str, set] = {}   # a local or loop variable -> the integer arrays its value comes from

    def sources(expr) -> set:
        found = set()
        for node in syntax.walk(expr):
            if isinstance(node, syntax.Index) and node.array in integer:
                found.add(node.array)
            elif isinstance(node, syntax.Var):
                found |= carried.get(node.name, set())
        return found

    for node in syntax.walk(schedule.body):   # in source order: a local's value before its uses
        if isinstance(node, syntax.Decl) and node.init is not None:
            carried[node.name] = carried.get(node.name, set()) | sources(node.init)
        elif isinstance(node, syntax.Assign) and isinstance(node.target, syntax.Var):
            carried[node.target.name] = carried.get(node.target.name, set()) | sources(node.value)
        elif isinstance(node, syntax.Loop):
            carried[node.var] = sources(node.lo) | sources(node.hi)
    limits: dict = {}
    for node in syntax.walk(schedule.body):
        if not isinstance(node, syntax.Index):
            continue
        shape = dims.get(node.array) or []
        for d, index in enumerate(node.indices):
            extent = shape[d] if len(shape) == len(node.indices) else count.get(node.array)
            for name in sources(index):
                if extent:
                    limits[name] = min(limits.get(name, extent), extent)
    return limits
