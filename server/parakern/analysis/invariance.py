"""Which candidate tuning parameters change what a schedule computes.

A block size or a granularity is a tuning knob only where the serial program means the same
computation whatever its value: `x[b*B + t]` runs over the same elements for every B, the
blocks only cut that range differently. `partial[b] += x[b*B + t]` does not: each partial sum
adds B elements, so tune, a bench's sweep or dispatch_auto choosing B would change the result.

The test reads the subscripts and the guard conditions of every access, the bounds of loops
that read other loops' variables, and the variables statements compute with (`frame[i] = b`,
`y[i] = x[i] / B`; an integer local by its definition). In each, the loop variables' terms
fall into indices by their coefficient with the candidates taken as 1 (`(B0*i + v)*n + B1*j +
u`: a row index B0*i + v, times n, and a column index B1*j + u). An index made of variables
that a candidate bounds or scales must be a whole mixed-radix number: its variables in a chain
from one coefficient, each next coefficient the one before times the extent of the variable
before (`u < B1`, then `w < s` at B1, then the grid's j at s*B1), and each such variable in
one index only, or in one the other extends (a chunk c = b*B + t and its elements L*c + k:
L changes the result, B does not). `partial[b]` (b alone, B bounds its range) and `if (t ==
0)` (t apart from b*B + t) break it, as does a candidate read outside every index (`a[i +
B]`). A local assigned again after its definition is not followed into its uses.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy

from parakern import syntax
from parakern.analysis.dependence import source_text
from parakern.analysis.facts import definitions
from parakern.analysis.loop_ranges import start_window
from parakern.model import Access, Schedule
from parakern.source.diagnostics import Diagnostic, Span, warning
from parakern.symbolic.printing import to_plain
from parakern.symbolic.symbols import sym


def block_parameters(schedule) -> set:
    """Names of the parameters that size the block (B0, B1 of the block-level meta_for extents)."""
    return {x.name for lp in schedule.block for x in sympy.sympify(lp.extent).free_symbols}


def candidate_parameters(schedule) -> tuple:
    """Program parameters that size a block or divide a grid extent, in the schedule's order: what
    tune would choose (tuning.space.tuned_parameters: these, but those that change the result)."""
    blocks = block_parameters(schedule)
    defs = definitions(schedule)
    divisors = set()
    for lp in schedule.grid:
        extent = sympy.sympify(lp.extent).xreplace(defs)
        for f in extent.atoms(sympy.floor, sympy.ceiling):
            _, den = sympy.fraction(sympy.together(f.args[0]))
            divisors |= {x.name for x in den.free_symbols}
    return tuple(p.name for p in schedule.program_params
                 if p.ctype in syntax.INTEGER_TYPES and (p.name in blocks or p.name in divisors))


@dataclass(frozen=True)
class Changes:
    """A parameter whose value changes what the schedule computes, and where it shows."""
    parameter: str
    span: Span           # the access, or the variable read in a value
    why: str             # "it reads b apart from the index B*b + t"


def _expressions(access: Access) -> list:
    """The subscripts and the sides of the guard conditions of an access."""
    return [sympy.expand(sympy.sympify(i)) for i in access.indices] + \
        [e for g in access.guards if g.condition is not None for e in _expressions_of(g.condition)]


def _opened(e, loop_vars: set, inner: list):
    """e with each function of loop variables (Mod, floor, min, ...) made a fresh symbol, its
    arguments added to `inner`: each an expression of its own (`(p + 1) % N` reads p + 1)."""
    if not e.free_symbols & loop_vars or e.is_Symbol or e.is_Number:
        return e
    if e.is_Add or e.is_Mul or (e.is_Pow and e.exp.is_Integer):
        return e.func(*(_opened(a, loop_vars, inner) for a in e.args))
    for a in e.args:
        if isinstance(a, sympy.Rel):
            inner.append(sympy.expand(a.lhs - a.rhs))
        elif isinstance(a, sympy.Expr):
            inner.append(sympy.expand(a))
        elif isinstance(a, sympy.Basic):   # a condition, a (value, condition) pair
            inner.extend(_expressions_of(a))
    return sympy.Dummy("f")


def _expressions_of(condition) -> list:
    """The sides of the relations of a condition."""
    out, stack = [], [condition]
    while stack:
        c = stack.pop()
        if isinstance(c, sympy.Rel):
            out.append(sympy.expand(c.lhs - c.rhs))
        elif isinstance(c, sympy.Basic) and not isinstance(c, sympy.Expr):
            stack.extend(a for a in c.args if isinstance(a, sympy.Basic))
        elif isinstance(c, sympy.Expr):
            out.append(sympy.expand(c))
    return out


def _indices(e, loop_vars: set, knobs: dict) -> "tuple[list, sympy.Expr] | None":
    """(the indices of e: each a frozenset of (variable, coefficient over the index's scale),
    what is left without loop variables); None where e is not linear in them."""
    gens = sorted(loop_vars & e.free_symbols, key=str)
    if not gens:
        return [], e
    try:
        poly = sympy.Poly(e, *gens)
    except sympy.PolynomialError:
        return None
    if poly.total_degree() > 1 or any(c.free_symbols & loop_vars for c in poly.coeffs()):
        return None   # a product of loop variables, or one under a floor, a Mod, a call
    by_scale: dict = {}
    for v in poly.gens:
        c = poly.coeff_monomial(v)
        if c == 0:
            continue
        scale = sympy.expand(c.xreplace(knobs))
        if scale == 0:
            return None
        by_scale.setdefault(scale, []).append((v, sympy.expand(sympy.cancel(c / scale))))
    return [frozenset(terms) for terms in by_scale.values()], poly.coeff_monomial(1)


def _whole_number(index: frozenset, extents: dict) -> "sympy.Expr | None":
    """The scale of the index where its variables make a mixed-radix chain (from some variable's
    coefficient, each next one the one before times the extent of the variable before: s·(b·B + t)
    has scale s); None where they do not."""
    for start in sorted((c for _, c in index), key=lambda c: (sympy.count_ops(c), str(c))):
        left, radix = dict(index), start
        while left:
            here = next((v for v, c in left.items() if sympy.expand(c - radix) == 0), None)
            if here is None:
                break
            del left[here]
            radix = sympy.expand(radix * extents[here])
        if not left:
            return start
    return None


def _text(index: frozenset) -> sympy.Expr:
    return sympy.Add(*(c * v for v, c in index))


def _candidates(terms, bound_by: dict, names: set) -> set:
    """The candidates that bound the variables of (variable, coefficient) terms or scale them."""
    return set().union(*(bound_by[v] for v, _ in terms)) | \
        {s.name for _, c in terms for s in c.free_symbols} & names


def _relating(a: frozenset, b: frozenset, bound_by: dict, names: set) -> set:
    """The candidates that relate two indices of one variable: where one is the other scaled
    and extended (a chunk's number c = B*b + t, and its elements L*c + k), those of the scale and
    of the variables added (L, not B); every candidate of both where they are not so related."""
    small, big = (dict(a), dict(b)) if len(a) <= len(b) else (dict(b), dict(a))
    every = _candidates(a | b, bound_by, names)
    if not set(small) <= set(big):
        return every
    scales = {sympy.cancel(big[v] / small[v]) for v in small}
    if len(scales) != 1:
        return every
    added = [(v, c) for v, c in big.items() if v not in small]
    return ({s.name for s in next(iter(scales)).free_symbols} & names) | _candidates(added, bound_by, names)


def _values(schedule: Schedule) -> list:
    """(span, sympy value) of each variable a statement computes with, outside subscripts and
    conditions: a loop variable, a parameter, or an integer local (its definition put in: `i`
    is b*B + t); a local assigned more than its definition is not followed."""
    env: dict = {}
    out: list = []

    def scan(expr) -> None:
        if isinstance(expr, syntax.Index):
            return   # subscripts: read as indices
        if isinstance(expr, syntax.Var):
            value = syntax.to_sympy(expr, env) if syntax.is_integer(expr.ctype) or expr.name in env \
                else sym(expr.name)
            if value is not None:
                out.append((expr.span, sympy.expand(value), "the value"))
            return
        for child in syntax.children(expr):
            scan(child)

    def stmt(node) -> None:
        if isinstance(node, syntax.Decl):
            if syntax.is_integer(node.ctype) and node.init is not None:
                value = syntax.to_sympy(node.init, env)
                if value is not None:
                    env[node.name] = value
                    return
            if node.init is not None:
                scan(node.init)
        elif isinstance(node, syntax.Assign):
            if isinstance(node.target, syntax.Var) and node.target.name in env:
                env.pop(node.target.name)   # reassigned: its value is no longer its definition
            scan(node.value)
        elif isinstance(node, syntax.If):
            stmt(node.then)
            if node.other is not None:
                stmt(node.other)
        elif isinstance(node, syntax.Loop):
            stmt(node.body)
        elif isinstance(node, syntax.Block):
            for s in node.stmts:
                stmt(s)
    stmt(schedule.body)
    return out


@functools.lru_cache(maxsize=128)
def result_changing(schedule: Schedule, candidates: tuple) -> tuple[Changes, ...]:
    """The candidates (parameter names) whose value changes what the schedule computes, each
    with the first access that shows it, in the order of `candidates`."""
    loops = (*schedule.grid, *schedule.block, *schedule.between, *schedule.serial)
    loop_vars = {sym(lp.var) for lp in loops}
    knobs = {sym(n): sympy.S.One for n in candidates}
    defs = definitions(schedule)
    extents, bound_by, checked, steps = {}, {}, [], []
    for lp in loops:
        lo, hi = (sympy.sympify(getattr(lp, n)).xreplace(defs) for n in ("lo", "hi"))
        step = sympy.sympify(getattr(lp, "step", sympy.S.One)).xreplace(defs)
        # a digit's radix is its loop's end where it starts at a constant >= 0 (k from 1 to s: the
        # digits 1 .. s-1 of radix s, its first element written apart)
        extents[sym(lp.var)] = hi if lo.is_number and lo >= 0 else sympy.expand((hi - lo) / step)
        names = lo.free_symbols | hi.free_symbols | step.free_symbols
        bound_by[sym(lp.var)] = set()
        if names & loop_vars:   # a triangle (k <= i): its bounds are indices, read like subscripts
            inside = next((a for a in schedule.accesses if lp.var in a.loops), None)
            # a grid-stride loop (i from b*B + t by G*B): its threads together run [L0, hi), which
            # B and G cut differently but never change unless L0 or hi reads them
            window = start_window(lo, step, schedule) if lp in schedule.serial else None
            if inside is not None:
                checked += [(inside.span, sympy.expand(b), "its loop's bound")
                            for b in ((lo, hi) if window is None else (window, hi))]
                stepped = {x.name for x in step.free_symbols} & set(candidates)
                if window is None and stepped:
                    # i from b*B + t by B: each element met by up to G threads, as many as B lets
                    steps.append((inside.span, stepped, step))
        else:
            bound_by[sym(lp.var)] = {s.name for s in names} & set(candidates)
    checked += [(a.span, e, "its index") for a in schedule.accesses for e in _expressions(a)]
    checked += _values(schedule)
    found: dict = {}

    def blame(names, span, why):
        for name in sorted(names):
            found.setdefault(name, Changes(name, span, why))

    for span, stepped, step in steps:
        blame(stepped, span, f"its loop steps by {to_plain(step)}, so the values it runs over depend on "
                             f"{', '.join(sorted(stepped))}")
    seen: dict = {}                               # variable -> the index it was met in
    names = set(candidates)
    while checked:
        span, e, noun = checked.pop(0)   # where it shows, the expression, what it is to the user
        inner: list = []
        e = _opened(e, loop_vars, inner)
        checked[:0] = [(span, x, noun) for x in inner]
        parts = _indices(e, loop_vars, knobs)
        if parts is None:   # a product of loop variables: not shown the same whatever the candidates
            blame(set().union(*(bound_by[v] for v in e.free_symbols & loop_vars)), span,
                  f"{noun} {e} is not linear in the loop variables")
            continue
        indices, rest = parts
        outside = {s.name for s in rest.free_symbols} & names
        blame(outside, span, f"{noun} {to_plain(e)} reads {', '.join(sorted(outside))} apart from the "
                              "loops' indices")
        for whole in indices:
            # a variable no candidate bounds or scales (a filter's offset di in By*by + ty + di) moves
            # the index by the same amount whatever the candidates: not part of its number
            index = frozenset((v, c) for v, c in whole if bound_by[v] or {s.name for s in c.free_symbols} & names)
            tuned = _candidates(index, bound_by, names)
            if not tuned:
                continue
            text = _text(index)
            alone = len(index) == 1 and bound_by[next(iter(index))[0]]   # b alone: 0 .. n/B
            scale = _whole_number(index, extents)
            if alone or scale is None:
                blame(tuned, span,
                      f"{noun} {to_plain(text)} runs over values that depend on {', '.join(sorted(tuned))}")
            else:   # s·(b·B + t): the elements are s apart, which s changes
                scaled = {x.name for x in scale.free_symbols} & names
                blame(scaled, span, f"{noun} {to_plain(text)} takes values {to_plain(scale)} apart")
            for v, _ in sorted(index, key=lambda term: term[0].name):   # hash order varies by process
                other = seen.setdefault(v, index)
                if other != index:
                    blame(_relating(other, index, bound_by, names), span,
                          f"{noun} {to_plain(text)} reads {v}, which another reads in {to_plain(_text(other))}")
    return tuple(found[n] for n in candidates if n in found)


CODE = "PK043"


def result_warnings(schedule: Schedule, candidates: tuple) -> tuple[Diagnostic, ...]:
    """PK043 at the access that shows each candidate changing what the schedule computes."""
    out = []
    for c in result_changing(schedule, candidates):
        text = source_text(schedule, c.span) or str(c.parameter)
        out.append(warning(CODE, f"the value of {c.parameter} changes what this meta_schedule computes: {text} "
                                 f"({c.why}); tune and dispatch_auto leave {c.parameter} as the caller gives it",
                           c.span))
    return tuple(out)
