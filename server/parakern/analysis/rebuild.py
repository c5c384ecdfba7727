"""A consistent Schedule for a rewritten meta_for nest.

A source-level strategy builds its new nest as syntax and calls `rebuild`:
the grid and block levels, the serial loops, the accesses, the locals and
the facts are derived again with the front-end's own functions, so a
transformed schedule is exactly what the front-end would have made of the
same nest. What the nest alone does not say is taken from the old schedule:
parameters, derived scalars, arrays and their declarations, `cache(...)`,
asserted facts, spans of the block, and where the grid/block split falls
(`n_grid`: the half-and-half rule of the front-end would misplace a level
that a strategy added).

It also holds what the strategies share to write new syntax: fresh names,
structural equality, typed operators, and `to_syntax`, which prints an
integer polynomial (sympy) back as typed C syntax.
"""
from __future__ import annotations

import itertools
from dataclasses import replace

import sympy

from parakern import model, syntax
from parakern.symbolic.cinteger import cdiv, cmod
from parakern.syntax import same  # noqa: F401  (the strategies' name for it)
from parakern.source.diagnostics import Span
from parakern.frontend.nest import (MAX_LEVELS, axis, body_operand_facts, divisors, loop_bounds, mark_use,
                                    only_statement, scan_body, serial_loop, split_nest, symbolic)
from parakern.frontend.signs import settled



class RebuildError(ValueError):
    """The rewritten nest is not a nest the front-end accepts (a bug of the strategy)."""


def rebuild(old: model.Schedule, nest: syntax.Loop, n_grid: int) -> model.Schedule:
    diagnostics: list = []
    levels, between, body = split_nest(nest, diagnostics)
    if levels is None:
        raise RebuildError("; ".join(d.message for d in diagnostics))
    between_loops, split_at = between
    n_block = len(levels) - n_grid
    if not 1 <= n_grid <= MAX_LEVELS or n_block > MAX_LEVELS:
        raise RebuildError(f"{n_grid} grid and {n_block} block levels")
    if split_at is not None and split_at != n_grid:
        raise RebuildError("serial loops between meta_for levels must sit between grid and block levels")

    old_loops = {lp.var: lp for lp in old.loops}
    parallel = []
    for k, loop in enumerate(levels):
        kind = "grid" if k < n_grid else "block"
        previous = old_loops.get(loop.var)
        # A level the old schedule had keeps its header span; a new one points at what it came from.
        span = previous.span if previous is not None and previous.keyword_span == loop.keyword_span \
            else loop.keyword_span.to(loop.step.span)
        parallel.append(model.ParallelLoop(loop.var, symbolic(loop.lo), symbolic(loop.hi), kind,
                                           axis(k, n_grid, len(levels)), span, loop.keyword_span))

    param_names = {p.name for p in old.params} | {d.name for d in old.derived}
    # The front-end's converter records which locals are assigned after their declaration.
    assigned = syntax.assigned_names(nest)
    accesses, locals_, serial = scan_body(body, levels, between_loops, param_names, assigned)
    arrays = tuple(mark_use(a, accesses) for a in old.arrays)
    bounds = loop_bounds(list(levels) + list(between_loops))
    return settled(replace(
        old, grid=tuple(parallel[:n_grid]), block=tuple(parallel[n_grid:]),
        between=tuple(serial_loop(loop, between=True, lower=bounds) for loop in between_loops),
        serial=tuple(serial), body=body, nest=nest, accesses=accesses, locals=locals_, arrays=arrays,
        facts=_facts(old, tuple(parallel), nest)))


def _facts(old: model.Schedule, parallel, nest) -> tuple[model.Fact, ...]:
    """The front-end's facts for the new levels; definitions and asserts carry over."""
    # The front-end's order: loop bounds, definitions, divisors, then asserts (and the rest).
    facts = [model.Fact(sympy.Ge(lp.extent, 1), "loop bound", lp.span) for lp in parallel]
    facts += [f for f in old.facts if f.origin == "definition"]
    for expr, span in [(d.value, d.span) for d in old.derived] + [(lp.hi, lp.span) for lp in parallel]:
        facts.extend(model.Fact(sympy.Ne(divisor, 0), "divisor", span) for divisor in divisors(expr))
    facts += body_operand_facts(nest, {p.name for p in old.params} | {d.name for d in old.derived})
    facts += [f for f in old.facts if f.origin not in ("loop bound", "definition", "divisor", "shift")]
    unique, seen = [], set()
    for fact in facts:
        if fact.relation is sympy.true or fact.relation in seen:
            continue
        seen.add(fact.relation)
        unique.append(fact)
    return tuple(unique)


def chain(nest: syntax.Loop) -> tuple[syntax.Loop, ...]:
    """The meta_for levels and the serial loops between them, outer first (as written)."""
    levels, between, _ = split_nest(nest, [])
    if levels is None:
        raise RebuildError("not a meta_for nest")
    return tuple(levels) + tuple(between[0])


def with_body(nest: syntax.Loop, body: syntax.Block, levels: "dict | None" = None) -> syntax.Loop:
    """The nest with the per-thread body (inside its innermost meta_for) replaced, and the
    loops named in `levels` (variable -> new loop header) replaced by those headers."""
    members = chain(nest)
    levels = levels or {}

    def go(loop: syntax.Loop) -> syntax.Loop:
        inner = only_statement(loop.body)
        new = levels.get(loop.var, loop)
        if any(inner is m for m in members):
            return replace(new, body=syntax.Block((go(inner),), loop.body.span))
        return replace(new, body=body)

    return go(nest)


# ------------------------------------------------------------------ names

def used_names(schedule: model.Schedule) -> set[str]:
    """Every identifier a new name could clash with in the schedule or its launch."""
    names = {p.name for p in schedule.params} | {d.name for d in schedule.derived}
    names |= {a.name for a in schedule.arrays} | set(schedule.host_loops) | {schedule.function}
    for node in syntax.walk(schedule.nest):
        if isinstance(node, syntax.Var):
            names.add(node.name)
        elif isinstance(node, (syntax.Decl, syntax.Loop)):
            names.add(node.name if isinstance(node, syntax.Decl) else node.var)
        elif isinstance(node, syntax.Index):
            names.add(node.array)
    return names


def fresh_names(taken: set[str], stem: str, numbered_only: bool = True):
    """stem0, stem1, ... (or stem first) skipping `taken`; adds what it yields to `taken`."""
    candidates = itertools.count()
    if not numbered_only and stem not in taken:
        taken.add(stem)
        yield stem
    for n in candidates:
        name = f"{stem}{n}"
        if name not in taken:
            taken.add(name)
            yield name


# ------------------------------------------------------------------ syntax

def binary(op: str, left: syntax.Expr, right: syntax.Expr, span: Span) -> syntax.Binary:
    return syntax.Binary(op, left, right, syntax.arithmetic_result(left.ctype, right.ctype), span)


def const(value: int, span: Span, ctype: str = "int") -> syntax.Expr:
    if value < 0:
        return syntax.Unary("-", syntax.Const(-value, ctype, span, str(-value)), ctype, span)
    return syntax.Const(value, ctype, span, str(value))


# ------------------------------------------------------------------ printing

def to_syntax(value: sympy.Expr, ctype: str, names: dict[str, str], span: Span,
              atoms=None) -> syntax.Expr:
    """A polynomial with integer coefficients as typed syntax (`atoms.syntax`: placeholder -> syntax).

    floor(a/b) and Mod(a, b) print as C's / and %, which agree on the
    non-negative values hypothesis (H1) assumes. Raises ValueError for what
    has no integer C form (rational coefficients, negative powers).
    """
    atoms_syntax = atoms.syntax if atoms is not None else {}

    def go(e) -> syntax.Expr:
        if e.is_Integer:
            return const(int(e), span, ctype)
        if e.is_Symbol:
            if e in atoms_syntax:
                return atoms_syntax[e]
            return syntax.Var(e.name, names.get(e.name, ctype), span)
        if e.is_Add:
            terms = sorted(e.as_ordered_terms(), key=lambda t: bool(t.as_coeff_Mul()[0] < 0))
            result = go(terms[0])
            for term in terms[1:]:
                coeff, _ = term.as_coeff_Mul()
                if coeff < 0:
                    result = binary("-", result, go(-term), span)
                else:
                    result = binary("+", result, go(term), span)
            return result
        if e.is_Mul:
            coeff, rest = e.as_coeff_Mul()
            if not coeff.is_Integer:
                raise ValueError(f"no integer C form for {e}")
            if coeff < 0:
                inner = go(-e)
                return syntax.Unary("-", inner, inner.ctype, span)
            factors = [f for f in sympy.Mul.make_args(rest)]
            result = go(coeff) if coeff != 1 else None
            for f in factors:
                part = go(f)
                result = part if result is None else binary("*", result, part, span)
            return result
        if e.is_Pow and e.exp.is_Integer and e.exp > 0:
            base = go(e.base)
            result = base
            for _ in range(int(e.exp) - 1):
                result = binary("*", result, base, span)
            return result
        if isinstance(e, sympy.floor):
            num, den = sympy.fraction(sympy.together(e.args[0]))
            return binary("/", go(sympy.expand(num)), go(sympy.expand(den)), span)
        if isinstance(e, (sympy.Mod, cmod)):
            return binary("%", go(e.args[0]), go(e.args[1]), span)
        if isinstance(e, cdiv):
            return binary("/", go(e.args[0]), go(e.args[1]), span)
        raise ValueError(f"no integer C form for {e}")

    return go(sympy.sympify(value))


def var_ctypes(schedule: model.Schedule) -> dict[str, str]:
    """C types of the scalars a printed expression may read."""
    names = {p.name: p.ctype for p in schedule.params}
    names.update({d.name: d.ctype for d in schedule.derived})
    for node in syntax.walk(schedule.nest):
        if isinstance(node, syntax.Loop):
            names.setdefault(node.var, node.ctype)
        elif isinstance(node, syntax.Decl):
            names.setdefault(node.name, node.ctype)
    return names
