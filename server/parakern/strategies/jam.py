"""Unroll and jam of a per-thread body: one thread runs the body of several iterations of a
meta_for level (its *copies*) side by side, for thread coarsening (6) and register tiles (8).

Each copy reads the level's variable, and the locals that depend on it, through names of its
own; a statement that does not depend on the level is shared by the copies. A serial loop
whose bounds are the same for every copy runs once, with the copies' statements side by side
in its body, so that a load that does not depend on the level (matmul's b[B0*k + z][q + x]
for copies of its rows) is made once for all of them (nvcc shares the load) and each copy
keeps accumulators of its own (they stay in registers across the loop). An `if` around
statements is shared where its condition keeps its value through them, its condition then
guarding each copy's statements. This runs statements of different iterations of a meta_for
in another order: one of the orders they may run in, so the result is the same wherever the
iterations are independent, which meta_for promises (and analysis/dependence checks).
"""
from __future__ import annotations

import dataclasses
from dataclasses import replace

from parakern import syntax
from parakern.source.diagnostics import Span
from parakern.analysis.rebuild import binary, const


def varying(body: syntax.Block, var: str) -> set[str]:
    """`var` and the locals each copy needs its own of: those assigned after their declaration
    or initialised from a varying value (the others are shared by the copies)."""
    assigned = syntax.assigned_names(body)
    decls = [n for n in syntax.walk(body) if isinstance(n, syntax.Decl)]
    found = {var} | assigned
    changed = True
    while changed:
        changed = False
        for d in decls:
            if d.name not in found and d.init is not None and syntax.variables(d.init) & found:
                found.add(d.name)
                changed = True
    return found


def same_bounds(loop: syntax.Loop, names: set[str]) -> bool:
    """Whether the loop's bounds read none of `names` (the same loop for every copy)."""
    return not any(syntax.variables(b) & names for b in (loop.lo, loop.hi, loop.step))


def jam(block: syntax.Block, copies, guards, names: set[str], base: int = 1):
    """(the copies of a block's statements, whether they share a load). `copies`: per copy, the
    renaming of its varying names; `guards`: per copy, the conditions it runs under; `names`:
    the varying names; `base`: what marks a copy's spans (`tagged`), 1 for a first jam.

    A serial loop with the same bounds for every copy is shared, with the copies side by side
    in its body; so is an `if` that guards every statement of its block alike, its condition
    then guarding each copy's statements. A load the copies share: one that does not depend on
    the level, in a shared declaration or in copies of one straight-line statement side by side
    (nvcc loads it once)."""
    out, shares = [], False
    for stmt in block.stmts:
        if isinstance(stmt, syntax.Block):
            new, more = jam(stmt, copies, guards, names, base)
            out.append(new)
        elif isinstance(stmt, syntax.Decl) and stmt.name not in names:
            out.append(stmt)
            more = reads_shared(stmt, names)
        elif isinstance(stmt, syntax.Loop) and same_bounds(stmt, names):
            new, more = jam(stmt.body, copies, guards, names, base)
            out.append(replace(stmt, body=new))
        elif isinstance(stmt, syntax.If) and distributable(stmt, names):
            if not syntax.variables(stmt.cond) & names:   # the same for every copy: one `if`
                new, more = jam(stmt.then, copies, guards, names, base)
                out.append(replace(stmt, then=new))
            else:
                under = [g + (syntax.renamed(stmt.cond, renames),) for g, renames in zip(guards, copies)]
                new, more = jam(stmt.then, copies, under, names, base)
                out.append(new)
        else:
            out.extend(copy_of(stmt, renames, guard, c, base)
                       for c, (renames, guard) in enumerate(zip(copies, guards)))
            more = isinstance(stmt, (syntax.Assign, syntax.Decl)) and reads_shared(stmt, names)
        shares = shares or more
    return replace(block, stmts=tuple(out)), shares


def reads_shared(stmt, names: set[str]) -> bool:
    """Whether the statement loads an element whose subscripts do not depend on the level."""
    value = stmt.value if isinstance(stmt, syntax.Assign) else stmt
    return any(isinstance(n, syntax.Index) and not syntax.variables(n) & names for n in syntax.walk(value))


def distributable(stmt: syntax.If, names: set[str]) -> bool:
    """An `if` without else whose condition keeps its value through its block (nothing there
    assigns what it reads) and whose block declares no shared local that a failing condition
    must not compute (a load, a division): its condition can guard each statement instead."""
    if stmt.other is not None or any(isinstance(n, (syntax.Call, syntax.Index)) for n in syntax.walk(stmt.cond)):
        return False
    assigned = syntax.assigned_names(stmt.then)
    if syntax.variables(stmt.cond) & assigned:
        return False
    return not any(isinstance(d, syntax.Decl) and d.name not in names and d.init is not None and any(
        isinstance(n, (syntax.Index, syntax.Call)) or (isinstance(n, syntax.Binary) and n.op in ("/", "%"))
        for n in syntax.walk(d.init)) for d in syntax.walk(stmt.then))


def copy_of(stmt, renames: dict, guards: tuple, copy: int, base: int = 1):
    """One copy of a statement: its locals renamed, its spans marked as copy `copy` (`tagged`),
    run only where its guards hold."""
    new = tagged(syntax.renamed(stmt, renames), copy, base)
    if not guards:
        return new
    guard = guards[0]
    for more in guards[1:]:
        guard = binary("&&", guard, more, guard.span)
    if isinstance(new, syntax.Decl):
        # Declared for the rest of the block, so not under the `if`; a load only where it holds.
        if new.init is not None and any(isinstance(n, syntax.Index) for n in syntax.walk(new.init)):
            zero = syntax.Cast(new.ctype, const(0, new.span), new.span)
            return replace(new, init=syntax.Ternary(guard, new.init, zero, new.ctype, new.span))
        return new
    return syntax.If(guard, syntax.Block((new,), new.span), None, new.span)


def tagged(node, copy: int, base: int = 1):
    """The tree with every span marked as copy `copy` (its accesses then differ from the other
    copies' in (array, span), which the staging routes and the accumulators go by): a span
    marked k by earlier jams becomes k + copy * base, so that with `base` above every earlier
    mark (1 for a first jam, its number of copies for a second) the marks of two jams in a row
    stay distinct. Copy 0 keeps the marks it has."""
    if not copy:
        return node
    if isinstance(node, tuple):
        return tuple(tagged(x, copy, base) for x in node)
    if isinstance(node, Span):
        return replace(node, copy=node.copy + copy * base)
    if not dataclasses.is_dataclass(node):
        return node
    return replace(node, **{f.name: tagged(getattr(node, f.name), copy, base) for f in dataclasses.fields(node)
                            if isinstance(getattr(node, f.name), (tuple, Span)) or
                            dataclasses.is_dataclass(getattr(node, f.name))})
