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

import functools
from dataclasses import replace

from parakern import syntax
from parakern.kernel import Kernel
from parakern.model import Schedule
from parakern.strategies.base import Strategy
from parakern.strategies.jam import jam, varying
from parakern.strategies.register_tiles import SmallerTiles
from parakern.analysis.rebuild import binary, chain, const, fresh_names, rebuild, used_names, with_body

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
        if kernel.tile:
            return ("thread coarsening: each thread computes a register tile (8) here; the kernel without "
                    "it is coarsened where the tile does not fit")
        return "thread coarsening: " + _refusal(kernel.schedule)


def _as_written(kernel: Kernel, settled: frozenset) -> bool:
    """Whether no strategy of the tree has changed the kernel yet (only those of `settled`,
    applied before the tree). (6) is offered there only:
    the other strategies then apply to its rows in its own subtree (registers, shared memory),
    instead of a coarsened twin of every case the tree already has (matmul with cache(a, b)
    had 20 cases and took ten times as long to analyse). A register tile (8) is not coarsened
    (its thread already does a tile's work); where (8b) has taken the tile away, the kernel is
    the one written again."""
    return not kernel.tile and not set(kernel.decisions) - settled - {SmallerTiles.code}


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
    per_copy = varying(schedule.body, level.var) - {level.var}
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
    names_varying = {level.var} | per_copy
    body, shares = jam(schedule.body, copies, guards, names_varying)
    body = syntax.Block(tuple(heads) + (body,), schedule.body.span)

    nest = with_body(schedule.nest, body, {level.var: replace(level, hi=new_hi)})
    return rebuild(schedule, nest, len(schedule.grid)), shares
