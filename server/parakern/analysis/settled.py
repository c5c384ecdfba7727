"""Guards of the per-thread body that a compile-time instance's values settle.

A guard that can fail for some parameter values may hold for every thread once the program
parameters are constants: thread coarsening's `if (v_1 < B0)` (strategies/coarsen.py) with
v_1 = 4*v + 1 and v < (B0 + 3)/4 always holds at B0 = 16. nvcc cannot see it (it does not
know that threadIdx.y < 4), and a guarded statement keeps an accumulator from moving out of
the loops (analysis/lifted.py). In an instance (analysis/fixed.py) such an `if` without else
becomes its block, and such a `cond ? x : y` its `x`, where z3 proves the condition from the
schedule's facts, the fixed values, the bounds of the meta_for levels and of the loops between
them, and the values of the locals it reads (those declared once and never assigned).
"""
from __future__ import annotations

import functools
from dataclasses import replace

import sympy

from parakern.symbolic import constraints as cs
from parakern import syntax
from parakern.symbolic.cinteger import lower_bound
from parakern.model import Schedule
from parakern.symbolic.symbols import sym


@functools.lru_cache(maxsize=256)
def settled(s: Schedule, fixed: tuple) -> Schedule:
    """The schedule with the guards its fixed values ((name, value), ...) prove dropped."""
    if not fixed:
        return s
    declared = {n.name for n in syntax.walk(s.body) if isinstance(n, syntax.Decl)}
    outside = {p.name for p in s.params} | {d.name for d in s.derived} | {lp.var for lp in s.loops}
    outside |= {lp.var for lp in s.between}
    known = outside - declared   # a local named like a parameter shadows it
    lower: dict = {}   # C's / and % of a loop variable that may start below 0 (symbolic/cinteger.py)
    for loop in tuple(s.loops) + tuple(s.between):
        lower[loop.var] = lower_bound(loop.lo, lower)
    env = _local_values(s.body, known, lower)
    premises = [f.relation for f in s.facts]
    premises += [sympy.Eq(sym(n), v) for n, v in fixed]
    for loop in tuple(s.loops) + tuple(s.between):
        premises += [sympy.Le(loop.lo, sym(loop.var)), sympy.Lt(sym(loop.var), loop.hi)]
    system = cs.System((), tuple(premises))

    def holds(cond) -> bool:
        if not syntax.variables(cond) <= set(env) | known:
            return False   # it reads a loop of the body or a local that changes
        relation = syntax.to_sympy_condition(cond, env, lower)
        return relation is not None and cs.implies(system, relation) == "proved"

    def swap(node):
        if isinstance(node, syntax.If) and node.other is None and holds(node.cond):
            then = node.then
            if len(then.stmts) == 1 and not isinstance(then.stmts[0], syntax.Decl):
                return syntax.replaced(then.stmts[0], swap)   # a statement, not a block of one
            return syntax.replaced(then, swap)
        if isinstance(node, syntax.Ternary) and holds(node.cond):
            return syntax.replaced(node.then, swap)
        return None

    body = syntax.replaced(s.body, swap)
    return s if body is s.body else replace(s, body=body)


def _local_values(body: syntax.Block, known: set, lower: dict) -> dict:
    """name -> the value of each integer local declared once, never assigned and computed
    from `known` names (parameters, meta_for and between-loop variables) and such locals."""
    decls = [n for n in syntax.walk(body) if isinstance(n, syntax.Decl)]
    once = {name for name in (d.name for d in decls) if sum(d.name == name for d in decls) == 1}
    assigned = syntax.assigned_names(body)
    env: dict = {}
    for d in decls:   # in source order: a value reads the locals before it
        if d.name in once and d.name not in assigned and d.init is not None and syntax.is_integer(d.ctype) \
                and syntax.variables(d.init) <= known | set(env):
            value = syntax.to_sympy(d.init, env, lower)
            if value is not None:
                env[d.name] = value
    return env
