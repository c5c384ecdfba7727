"""(6) Thread coarsening: each thread does the work of ROWS threads of one block level.

The converse of (3b). Where a block needs more threads than the device gives (T < B0*ub1),
the outermost of two or more block levels, v in [lo, hi), becomes v in [lo, lo + K) with
K = ceil((hi - lo) / ROWS), and each thread runs the body for the ROWS neighbouring rows
v_c = lo + ROWS*(v - lo) + c, c < ROWS (those below hi): a quarter of the threads cover the
same elements, so the grid, the tiles staged in shared memory and the result stay the same.
The .x level is never coarsened: its threads keep reading neighbouring elements.

The copies are jammed: a serial loop whose bounds are the same for every row runs once, with
the copies' statements side by side in its body, so that a value that does not depend on the
row (matmul's b[B0*k + z][q + x]) is loaded once for ROWS rows (nvcc shares the load), and
each row keeps accumulators of its own (they stay in registers across the loop). This runs
statements of different threads of one block in another order: one of the orders those
threads may run in (the body has no barrier), so the result is the same wherever the
iterations of v are independent, which meta_for promises (and analysis/dependence checks).
A statement the rows cannot share (a loop whose bounds read the row) is repeated whole; an
`if` around statements (PolyBench's bounds check `if (i < ni && j < nj)` around the loop) is
shared, its condition guarding each row's statements, where it keeps its value through them.

Applied only where the rows do share a load: elsewhere a quarter of the threads would do the
same loads four times as slowly. Copy c reads v_c through renamed locals and runs under
`if (v_c < hi)` for c >= 1 (ROWS*K may pass hi); a local whose value does not depend on the
row, and that nothing assigns, is shared by the copies.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import replace

from parakern import syntax
from parakern.source.diagnostics import Span
from parakern.kernel import Kernel
from parakern.model import Schedule
from parakern.strategies.base import Strategy
from parakern.analysis.rebuild import binary, chain, const, fresh_names, rebuild, used_names

ROWS = 4   # rows per thread: what a block of four times the device's threads needs


class CoarsenThreads(Strategy):
    code = "(6)"
    name = "thread coarsening"
    improves = frozenset({"threads"})
    applies_to = "source"
    applied_words = f"{ROWS} rows per thread"

    def __init__(self, settled: frozenset = frozenset()):
        self.settled = settled       # the codes of the strategies applied before the tree

    @classmethod
    def instances(cls, settled: frozenset = frozenset()) -> list[Strategy]:
        return [cls(settled)]

    def changes(self, kernel: Kernel) -> "dict | None":
        if not _as_written(kernel, self.settled) or _refusal(kernel.schedule):
            return None
        return {"schedule": coarsened(kernel.schedule)}

    def why_not(self, kernel: Kernel) -> str:
        return "thread coarsening: " + _refusal(kernel.schedule)


def _as_written(kernel: Kernel, settled: frozenset) -> bool:
    """Whether no strategy of the tree has changed the kernel yet (only those of `settled`,
    applied before the tree). (6) is offered there only:
    the other strategies then apply to its rows in its own subtree (registers, shared memory),
    instead of a coarsened twin of every case the tree already has (matmul with cache(a, b)
    had 20 cases and took ten times as long to analyse)."""
    return not set(kernel.decisions) - settled


def _level(schedule: Schedule) -> "syntax.Loop | None":
    """The block level coarsened: the outermost one, where the block has two or more."""
    levels = [lp for lp in chain(schedule.nest) if lp.parallel]
    block = levels[len(schedule.grid):]
    return block[0] if len(block) >= 2 else None


def _refusal(schedule: Schedule) -> str:
    """Why the schedule is not coarsened ('' where it is), in the user's terms."""
    if schedule.atomics:   # the jamming regroups ifs around statements: a compare-and-store must stay whole
        return f"the schedule updates {', '.join(dict.fromkeys(a.array for a in schedule.atomics))} atomically"
    level = _level(schedule)
    if level is None:
        return "the block has one level (.x), whose threads read neighbouring elements"
    if syntax.to_sympy(level.step) != 1:
        return f"meta_for {level.var} does not step by 1"
    inner = [lp for lp in chain(schedule.nest) if lp is not level]
    if any(level.var in syntax.variables(b) for lp in inner for b in (lp.lo, lp.hi, lp.step)):
        return f"the bounds of another loop of the nest read {level.var}"
    declared = [n.name for n in syntax.walk(schedule.body) if isinstance(n, syntax.Decl)]
    if len(declared) != len(set(declared)):
        return "a local is declared twice in the body"
    if not _jammed(schedule)[1]:
        return (f"every load of the body depends on {level.var}: rows of one thread would share "
                "none, so fewer threads would only run longer")
    return ""


def coarsened(schedule: Schedule) -> Schedule:
    """The schedule with ROWS rows of its outermost block level per thread (where `_refusal`
    finds nothing)."""
    return _jammed(schedule)[0]


@functools.lru_cache(maxsize=64)
def _jammed(schedule: Schedule) -> "tuple[Schedule, bool]":
    """The coarsened schedule, and whether its rows share a load (`_refusal` asks, then
    `coarsened` builds: one rewrite for both)."""
    level = _level(schedule)
    span = level.keyword_span
    lo_zero = syntax.to_sympy(level.lo) == 0
    extent = level.hi if lo_zero else binary("-", level.hi, level.lo, span)
    rows = binary("/", binary("+", extent, const(ROWS - 1, span), span), const(ROWS, span), span)
    new_hi = rows if lo_zero else binary("+", level.lo, rows, span)

    taken = used_names(schedule)
    per_copy = _varying(schedule.body, level.var) - {level.var}
    var = syntax.Var(level.var, level.ctype, span)
    first = binary("*", const(ROWS, span), var if lo_zero else binary("-", var, level.lo, span), span)
    first = first if lo_zero else binary("+", level.lo, first, span)   # lo + ROWS*(v - lo)
    copies, guards, heads = [], [], []
    for c in range(ROWS):   # ROWS neighbouring rows: the copies' accesses form one tile
        value = first if c == 0 else binary("+", first, const(c, span), span)
        names = {level.var: next(fresh_names(taken, f"{level.var}_{c}", numbered_only=False))}
        if c:
            names.update({name: next(fresh_names(taken, f"{name}_{c}", numbered_only=False))
                          for name in sorted(per_copy)})
        copies.append(names)
        row = syntax.Var(names[level.var], level.ctype, span)
        heads.append(syntax.Decl(row.name, level.ctype, value, span))
        # The first row of a thread always exists (ROWS*(K - 1) < hi - lo); the others may not.
        guards.append(() if c == 0 else (binary("<", row, level.hi, span),))
    varying = {level.var} | per_copy
    body, shares = _jam(schedule.body, copies, guards, varying)
    body = syntax.Block(tuple(heads) + (body,), schedule.body.span)

    new_level = replace(level, hi=new_hi)
    members = chain(schedule.nest)

    def go(loop: syntax.Loop) -> syntax.Loop:
        inner = _only_member(loop.body, members)
        new = new_level if loop is level else loop
        if inner is not None:
            return replace(new, body=syntax.Block((go(inner),), loop.body.span))
        return replace(new, body=body)

    return rebuild(schedule, go(schedule.nest), len(schedule.grid)), shares


def _same_bounds(loop: syntax.Loop, varying: set[str]) -> bool:
    return not any(syntax.variables(b) & varying for b in (loop.lo, loop.hi, loop.step))


def _only_member(block: syntax.Block, members):
    stmt = block.stmts[0] if len(block.stmts) == 1 else None
    while isinstance(stmt, syntax.Block) and len(stmt.stmts) == 1:
        stmt = stmt.stmts[0]
    return stmt if any(stmt is m for m in members) else None


def _varying(body: syntax.Block, var: str) -> set[str]:
    """`var` and the locals each copy needs its own of: those assigned after their declaration
    or initialised from a varying value (the others are shared by the copies)."""
    assigned = syntax.assigned_names(body)
    decls = [n for n in syntax.walk(body) if isinstance(n, syntax.Decl)]
    varying = {var} | assigned
    changed = True
    while changed:
        changed = False
        for d in decls:
            if d.name not in varying and d.init is not None and syntax.variables(d.init) & varying:
                varying.add(d.name)
                changed = True
    return varying


def _jam(block: syntax.Block, copies, guards, varying: set[str]):
    """(the copies of a block's statements, whether they share a load). A serial loop with the
    same bounds for every row is shared, with the copies side by side in its body; so is an
    `if` that guards every statement of its block alike, its condition then guarding each
    copy's statements (`guards`: per copy, the conditions it runs under). A load the copies
    share: one that does not depend on the row, in a shared declaration or in copies of one
    straight-line statement side by side (nvcc loads it once)."""
    out, shares = [], False
    for stmt in block.stmts:
        if isinstance(stmt, syntax.Block):
            new, more = _jam(stmt, copies, guards, varying)
            out.append(new)
        elif isinstance(stmt, syntax.Decl) and stmt.name not in varying:
            out.append(stmt)
            more = _reads_shared(stmt, varying)
        elif isinstance(stmt, syntax.Loop) and _same_bounds(stmt, varying):
            new, more = _jam(stmt.body, copies, guards, varying)
            out.append(replace(stmt, body=new))
        elif isinstance(stmt, syntax.If) and _distributable(stmt, varying):
            if not syntax.variables(stmt.cond) & varying:   # the same for every row: one `if`
                new, more = _jam(stmt.then, copies, guards, varying)
                out.append(replace(stmt, then=new))
            else:
                under = [g + (syntax.renamed(stmt.cond, names),) for g, names in zip(guards, copies)]
                new, more = _jam(stmt.then, copies, under, varying)
                out.append(new)
        else:
            out.extend(_copy(stmt, names, guard, c) for c, (names, guard) in enumerate(zip(copies, guards)))
            more = isinstance(stmt, (syntax.Assign, syntax.Decl)) and _reads_shared(stmt, varying)
        shares = shares or more
    return replace(block, stmts=tuple(out)), shares


def _reads_shared(stmt, varying: set[str]) -> bool:
    """Whether the statement loads an element whose subscripts do not depend on the row."""
    value = stmt.value if isinstance(stmt, syntax.Assign) else stmt
    return any(isinstance(n, syntax.Index) and not syntax.variables(n) & varying for n in syntax.walk(value))


def _distributable(stmt: syntax.If, varying: set[str]) -> bool:
    """An `if` without else whose condition keeps its value through its block (nothing there
    assigns what it reads) and whose block declares no shared local that a failing condition
    must not compute (a load, a division): its condition can guard each statement instead."""
    if stmt.other is not None or any(isinstance(n, (syntax.Call, syntax.Index)) for n in syntax.walk(stmt.cond)):
        return False
    assigned = syntax.assigned_names(stmt.then)
    if syntax.variables(stmt.cond) & assigned:
        return False
    return not any(isinstance(d, syntax.Decl) and d.name not in varying and d.init is not None and any(
        isinstance(n, (syntax.Index, syntax.Call)) or (isinstance(n, syntax.Binary) and n.op in ("/", "%"))
        for n in syntax.walk(d.init)) for d in syntax.walk(stmt.then))


def _copy(stmt, names: dict, guards: tuple, copy: int):
    """One copy of a statement: its locals renamed, its spans marked as copy `copy`, run only
    where its guards hold."""
    new = _tagged(syntax.renamed(stmt, names), copy)
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


def _tagged(node, copy: int):
    """The tree with every span marked as copy `copy` (its accesses then differ from the other
    copies' in (array, span), which the staging routes and the accumulators go by)."""
    if not copy:
        return node
    if isinstance(node, tuple):
        return tuple(_tagged(x, copy) for x in node)
    if isinstance(node, Span):
        return replace(node, copy=copy)
    if not dataclasses.is_dataclass(node):
        return node
    return replace(node, **{f.name: _tagged(getattr(node, f.name), copy) for f in dataclasses.fields(node)
                            if isinstance(getattr(node, f.name), (tuple, Span)) or
                            dataclasses.is_dataclass(getattr(node, f.name))})
