"""One parameter point where memory figures are evaluated: values a GPU programmer would
run the schedule with.

Sectors per warp request depend on the block's shape (a warp spans several rows when
threadIdx.x has fewer than 32 values) and on strides (`n` elements apart); bytes per block
on the tile sizes. So the figures of `optimize`, the hover and the coalescing warning are
those of one point: data sizes of about a thousand, 32 threads along x, 8 along y, 2 along z,
granularity 2, host loop variables 0; the first combination, in that order of preference,
that satisfies the schedule's facts. `small=True` prefers data sizes the CPU emulation runs
in a moment (64), with the same block shape. A value the user gives is kept as it is.
"""
from __future__ import annotations

import itertools

import sympy

from parakern.analysis.facts import check_facts, definitions
from parakern.model import Schedule
from parakern.symbolic.symbols import sym

# Preferences, best first: the figures are those of the first point the facts allow.
_DATA = (1024, 2048, 4096, 1026, 1000, 512, 1536, 768, 256, 130, 100)
_DATA_SMALL = (64, 128, 96, 32, 66, 130, 256, 100, 512)
_AXIS = {"x": (32, 64, 16, 128, 8, 256, 4, 2, 1), "y": (8, 4, 16, 2, 32, 1), "z": (2, 4, 1, 8)}
_OTHER = (2, 1, 4, 3, 8, 16)
_HOST = (0, 1, 2)
_TRIED = 4            # options per parameter tried together (the product is searched)
MAX_THREADS = 1024
_MAX_TRIES = 20000    # points tried at most: beyond, the facts are not met by typical values


def evaluate(schedule: Schedule, values: dict) -> dict:
    """Symbol -> integer for the parameters of `values` and the derived scalars (those that
    evaluate to an integer there)."""
    subs = {sym(k): sympy.Integer(v) for k, v in values.items() if isinstance(v, int)}
    for name, value in definitions(schedule).items():
        v = sympy.sympify(value).xreplace(subs)
        if v.is_Integer:
            subs[name] = v
    return subs


def holds(schedule: Schedule, values: dict) -> bool:
    """The schedule's facts hold at `values`, every level has at least one iteration and a
    block at most MAX_THREADS threads."""
    subs = evaluate(schedule, values)
    try:
        for fact in schedule.facts:
            if sympy.sympify(fact.relation).xreplace(subs) is not sympy.true:
                return False
        threads = 1
        for loop in schedule.loops:
            extent = sympy.sympify(loop.extent).xreplace(subs)
            if not extent.is_Integer or extent < 1:
                return False
            if loop.level == "block":
                threads *= int(extent)
    except (TypeError, ZeroDivisionError, ValueError):
        return False
    return threads <= MAX_THREADS


def parameters(schedule: Schedule) -> tuple[str, ...]:
    """Names a point may give a value: the schedule's parameters, then the arguments that only
    a fact names (another schedule's size in `assert(nk > 0)`)."""
    names = [p.name for p in schedule.params]
    known = set(names) | {d.name for d in schedule.derived}
    for fact in schedule.facts:
        for s in sorted(sympy.sympify(fact.relation).free_symbols, key=lambda s: s.name):
            if s.name not in known:
                names.append(s.name)
                known.add(s.name)
    return tuple(names)


def violation(schedule: Schedule, given: dict, small: bool = False) -> str:
    """Why no point satisfies the facts with the values the user gave, '' when they are not
    the cause: a fact (or the block's size) they alone decide, else the first that fails where
    they replace the values of the preferred point (`violates g >= 1 (loop bound) at n=0
    R=2 B=32`)."""
    why = _violated(schedule, given)
    if why:
        return why
    preferred = profile_point(schedule, None, small)
    if preferred is None:
        return ""    # the preferences fail without the user's values too
    values = {**preferred, **given}
    why = _violated(schedule, values)
    return f"{why} at {describe(values)}" if why else ""


def _violated(schedule: Schedule, values: dict) -> str:
    """The first fact that the values decide false (facts.check_facts), or a block of
    more than MAX_THREADS threads; '' when neither."""
    subs = evaluate(schedule, values)
    why = check_facts(schedule, subs)
    if why:
        return why
    threads = 1
    for loop in schedule.block:
        extent = sympy.sympify(loop.extent).xreplace(subs)
        if not extent.is_Integer:
            return ""
        threads *= int(extent)
    return f"a block of {threads} threads is more than {MAX_THREADS}" if threads > MAX_THREADS else ""


def profile_point(schedule: Schedule, given: "dict | None" = None, small: bool = False) -> "dict | None":
    """Parameter name -> value (integers; floating parameters are left out), or None when no
    preferred combination satisfies the facts."""
    given = dict(given or {})
    options = _options(schedule, small)
    names = [n for n in options if n not in given]
    order = list(options) + [n for n in given if n not in options]   # the schedule's order
    # the first few preferences of each parameter together; then every preference, for facts
    # the usual sizes miss (`(n - 2) % B == 0`: a grid's interior, 66 or 130 in the small sizes)
    for tried in (_TRIED, None):
        lists = [options[n][:tried] for n in names]
        for combo in itertools.islice(_by_departures([len(v) for v in lists]), _MAX_TRIES):
            chosen = dict(given)
            chosen.update({n: lists[i][k] for i, (n, k) in enumerate(zip(names, combo))})
            values = {n: chosen[n] for n in order}
            if holds(schedule, values):
                return values
        if all(len(options[n]) <= _TRIED for n in names):
            break
    return None


def _by_departures(sizes: list):
    """Index tuples (one index below each size) with the fewest departures from the first
    preference first, then in lexicographic order: the order of sorting the whole product by
    (sum, tuple), produced lazily (a schedule with 13 parameters has 4^13 of them)."""
    def fixed_sum(position: int, left: int):
        if position == len(sizes):
            if left == 0:
                yield ()
            return
        room = sum(n - 1 for n in sizes[position + 1:])
        for k in range(max(0, left - room), min(left, sizes[position] - 1) + 1):
            for rest in fixed_sum(position + 1, left - k):
                yield (k, *rest)
    for total in range(sum(n - 1 for n in sizes) + 1):
        yield from fixed_sum(0, total)


def _options(schedule: Schedule, small: bool) -> dict:
    """Each integer parameter's candidate values, best first."""
    defs = definitions(schedule)
    axis_of = {}
    for loop in schedule.block:
        extent = sympy.sympify(loop.extent).xreplace(defs)
        if extent.is_Symbol:
            axis_of.setdefault(extent.name, loop.axis)
    hosts = set(schedule.host_loops)
    bounds = constant_bounds(schedule)
    sizes = _size_like(schedule, defs, bounds)
    out = {}
    for p in schedule.params:
        if p.ctype in ("float", "double"):
            continue
        if p.name in hosts:
            out[p.name] = _HOST
        elif p.name in axis_of:
            out[p.name] = _AXIS[axis_of[p.name]]
        elif p.kind == "data" or p.name in sizes:
            out[p.name] = _DATA_SMALL if small else _DATA
        else:
            out[p.name] = _OTHER
    # Arguments that only a fact names (another schedule's size) need a value too.
    for name in parameters(schedule)[len(schedule.params):]:
        out[name] = _DATA_SMALL if small else _DATA
    return {name: _within(values, *bounds.get(name, (None, None))) for name, values in out.items()}


def _within(values: tuple, low: "int | None", high: "int | None") -> tuple:
    """The preferences between the bounds the facts give; the bounds themselves where none is."""
    kept = tuple(v for v in values if (low is None or v >= low) and (high is None or v <= high))
    return kept or tuple(dict.fromkeys(b for b in (high, low) if b is not None)) or values


def constant_bounds(schedule: Schedule) -> dict:
    """Name -> (least, greatest) integer value that the facts of one symbol allow (`R >= 1`,
    `R <= 4`, `2 * B < 65`), None where they give none."""
    out: dict = {}
    for fact in schedule.facts:
        relation = sympy.sympify(fact.relation)
        if not isinstance(relation, (sympy.Le, sympy.Lt, sympy.Ge, sympy.Gt, sympy.Eq)):
            continue
        greater = isinstance(relation, (sympy.Ge, sympy.Gt))
        e = sympy.expand(relation.rhs - relation.lhs if greater else relation.lhs - relation.rhs)   # e <= 0
        if len(e.free_symbols) != 1:
            continue
        (x,) = e.free_symbols
        a, b = e.coeff(x), e.subs(x, 0)
        if not (a.is_Rational and b.is_Rational and a != 0 and e == a * x + b):
            continue
        root, strict = -b / a, isinstance(relation, (sympy.Lt, sympy.Gt))
        low, high = out.get(x.name, (None, None))
        if a > 0 or isinstance(relation, sympy.Eq):    # x <= root
            value = int(sympy.ceiling(root)) - 1 if strict else int(sympy.floor(root))
            high = value if high is None else min(high, value)
        if a < 0 or isinstance(relation, sympy.Eq):    # x >= root
            value = int(sympy.floor(root)) + 1 if strict else int(sympy.ceiling(root))
            low = value if low is None else max(low, value)
        out[x.name] = (low, high)
    return out


def _size_like(schedule: Schedule, defs: dict, bounds: dict) -> set[str]:
    """Program parameters that are sizes all the same (a pointer's length): those the grid
    grows with, and those that multiply a loop variable in a subscript (a row length) unless
    the grid shrinks with them (a granularity, `n / (s * B)`). Not a size: what the grid
    only shrinks by (a radius, `(n - 2 * R) / B`) and what the facts bound by less than any
    data size preferred (`assert(R <= 4)`)."""
    grows, shrinks = set(), set()
    for loop in schedule.grid:
        # every floor dropped, nested ones too (a set of atoms replaced one by one would miss an
        # outer floor once its inner one changed, in an order that varied from run to run)
        extent = sympy.sympify(loop.extent).xreplace(defs).replace(sympy.floor, lambda arg: arg)
        num, den = sympy.fraction(sympy.together(extent))
        for term in sympy.Add.make_args(sympy.expand(num)):
            if not term.could_extract_minus_sign():
                grows |= {s.name for s in term.free_symbols}
        shrinks |= {s.name for s in den.free_symbols}
    loops = {sym(lp.var) for lp in schedule.loops + schedule.between + schedule.serial}
    rows = set()
    for access in schedule.accesses:
        for index in access.indices:
            for term in sympy.Add.make_args(sympy.expand(index)):
                if term.free_symbols & loops:
                    rows |= {s.name for s in term.free_symbols - loops}
    small = {name for name, (_, high) in bounds.items() if high is not None and high < min(_DATA_SMALL)}
    return ((grows - shrinks) | (rows - shrinks)) - small


def describe(values: dict) -> str:
    """`n=1024 B0=8 ub1=32 s=2`."""
    return " ".join(f"{k}={v}" for k, v in values.items())
