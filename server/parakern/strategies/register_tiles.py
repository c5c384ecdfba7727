"""(8) Register tiles: each thread computes a TM x TN tile of a product's result, from loads it
shares along both sides of the tile; (8b) a smaller tile, where registers or shared memory
refuse the larger one.

A product (matmul, gemm, 2mm/3mm, syrk, a batched product) has two grid levels whose blocks
read the same data along one side: the blocks of one row level read the same columns of the
right operand, those of one column level the same rows of the left one (matmul's
`b[B0*k + z][q + x]` does not depend on the row level i, `a[p][B0*k + z]` not on the column
level j). With the tile, one block does the work of TM consecutive blocks of the row level and
TN of the column level: the grid shrinks by TM x TN, the threads per block stay, and each
thread runs its own element of each of the TM x TN blocks, jammed (strategies/jam.py) so that
in the serial loop of the product the TM loads of the left operand and the TN of the right one
feed TM x TN multiply-adds into accumulators that stay in registers (PPCG's `private_c[4][4]`,
the classic SGEMM thread tile). A thread's elements are a block's extent apart along each side,
so the threads of a warp still read neighbouring elements (coalesced global accesses, staged
tiles read without bank conflicts), and what a block stages grows to TM (TN) blocks' tiles, so
one copy into shared memory feeds TM (TN) times the arithmetic. Where alignment is proved, the
staging interleaves those tiles by four (analysis/vector_layout.py): a thread reads its
elements of four of them as one float4.

Offered where the user asks for it (strategies.OPT_IN: --register-tiles, or (8) and (8b)
named in Options.strategies). Like thread granularity in the paper, the tile is a choice the
case tree makes from the registers and the shared memory: the tile TILES[0] is applied to the schedule before the tree
(decision (8)), and where the block's registers or its shared memory refuse it, (8b) makes it
the next one of TILES, then none: the kernel as written, whose subtree is today's. A tiled
kernel has no guard at the grid's edge (guards on the copies would keep every copy's loads
apart, and their conditions would take registers in the product's loop): it computes whole
tiles only, so it runs where the tile's factors divide the levels' extents
(`Kernel.requires`, which the dispatcher tests with the launch limits; elsewhere a smaller
tile or the kernel as written runs). Not applied where the two levels share no load in a
serial loop (each copy would only make its own loads: matadd, stencils, a transpose), to
atomic updates (the jamming regroups ifs around statements), nor where a loop's bounds read a
tiled level.
"""
from __future__ import annotations

import functools
from dataclasses import replace

import sympy

from parakern import syntax
from parakern.kernel import Kernel
from parakern.model import Schedule
from parakern.strategies.base import Strategy
from parakern.strategies.jam import jam, varying
from parakern.analysis.rebuild import binary, chain, const, fresh_names, rebuild, used_names, with_body

# Tiles per thread, largest first: (blocks of the row level, blocks of the column level).
TILES = ((8, 8), (4, 4))


class RegisterTiles(Strategy):
    code = "(8)"
    name = "register tiles"
    improves = frozenset()     # a tile raises registers and shared memory: (8b) lowers them
    applies_to = "source"
    applied_words = "register tile"

    def changes(self, kernel: Kernel) -> "dict | None":
        if kernel.tile or refusal(kernel.schedule):
            return None
        return {"schedule": tiled(kernel.schedule, TILES[0]), "tile": TILES[0], "untiled": kernel.schedule,
                "requires": divides(kernel.schedule, TILES[0])}

    def why_not(self, kernel: Kernel) -> str:
        return "register tiles: " + (refusal(kernel.schedule) or "the schedule has a register tile already")

    @classmethod
    def comment_words(cls, kernel: Kernel, cap: "int | None") -> "str | None":
        if not kernel.tile:
            return None
        rows, cols = tiled_levels(kernel.untiled) if kernel.untiled is not None else ("", "")
        return (f"register tile {kernel.tile[0]}x{kernel.tile[1]} (a thread computes its element of "
                f"{kernel.tile[0]} blocks of {rows} x {kernel.tile[1]} of {cols})")


class SmallerTiles(Strategy):
    code = "(8b)"
    name = "smaller register tile"
    improves = frozenset({"registers", "shared_memory"})
    applies_to = "source"
    applied_words = "register tile made smaller"
    joins = True      # the kernel as written is reached once, not once per refusal of each tile

    def __init__(self, level: int):
        self.level = level    # takes TILES[level - 1] to TILES[level], or to no tile

    @classmethod
    def instances(cls, settled: frozenset = frozenset()) -> list[Strategy]:
        return [cls(level) for level in range(1, len(TILES) + 1)]

    def changes(self, kernel: Kernel) -> "dict | None":
        if kernel.untiled is None or kernel.tile != TILES[self.level - 1]:
            return None
        if self.level < len(TILES):
            tile = TILES[self.level]
            return {"schedule": tiled(kernel.untiled, tile), "tile": tile, "requires": divides(kernel.untiled, tile)}
        return {"schedule": kernel.untiled, "tile": (), "untiled": None, "requires": ()}   # without_tile

    def why_not(self, kernel: Kernel) -> str:
        return "smaller register tile: the kernel has no register tile"

    @classmethod
    def trail(cls, kernel: Kernel) -> tuple[str, ...]:
        return tuple(d for d in kernel.decisions if d == cls.code)   # once per step down

    @classmethod
    def comment_words(cls, kernel: Kernel, cap: "int | None") -> "str | None":
        if cls.code in kernel.decisions and not kernel.tile:
            return "no register tile (a tile did not fit)"
        return None

    def __repr__(self) -> str:
        return f"<SmallerTiles level {self.level}>"


def without_tile(kernel: Kernel) -> Kernel:
    """The kernel as it was before its register tile (the kernel itself where it has none):
    what the last step of (8b) leaves."""
    if kernel.untiled is None:
        return kernel
    return replace(kernel, schedule=kernel.untiled, tile=(), untiled=None, requires=())


def tiled_levels(schedule: Schedule) -> tuple[str, str]:
    """The variables of the row and column levels a tile takes: the two innermost grid levels."""
    return tuple(lp.var for lp in schedule.grid[-2:])


def refusal(schedule: Schedule) -> str:
    """Why the schedule gets no register tile ('' where it does), in the user's terms."""
    if schedule.atomics:
        return f"the schedule updates {', '.join(dict.fromkeys(a.array for a in schedule.atomics))} atomically"
    if len(schedule.grid) < 2:
        return "the grid has one level: a tile takes two (the rows and the columns of a product)"
    levels = _levels(schedule)
    for level in levels:
        if syntax.to_sympy(level.step) != 1:
            return f"meta_for {level.var} does not step by 1"
    names = {level.var for level in levels}
    others = [lp for lp in chain(schedule.nest) if lp.var not in names]
    inner = [n for n in syntax.walk(schedule.body) if isinstance(n, syntax.Loop)]
    for lp in others + inner:
        if any(names & syntax.variables(b) for b in (lp.lo, lp.hi, lp.step)):
            return f"the bounds of loop {lp.var} read {', '.join(sorted(names & _bound_names(lp)))}"
    declared = [n.name for n in syntax.walk(schedule.body) if isinstance(n, syntax.Decl)]
    if len(declared) != len(set(declared)):
        return "a local is declared twice in the body"
    for level, other in ((levels[0], levels[1]), (levels[1], levels[0])):
        if not _reused(schedule.body, varying(schedule.body, level.var)):
            return (f"no load in a serial loop of the body is the same for two blocks of {level.var}: "
                    f"a tile over {level.var} x {other.var} would share nothing (it suits products, "
                    "where blocks of a row read the same columns)")
    return ""


def _bound_names(loop: syntax.Loop) -> set[str]:
    return set().union(*(syntax.variables(b) for b in (loop.lo, loop.hi, loop.step)))


def _levels(schedule: Schedule) -> tuple[syntax.Loop, syntax.Loop]:
    """The syntax loops of the row and column levels (the two innermost grid levels)."""
    names = tiled_levels(schedule)
    found = {lp.var: lp for lp in chain(schedule.nest) if lp.parallel and lp.var in names}
    return tuple(found[n] for n in names)


def _reused(body: syntax.Block, names: set[str]) -> bool:
    """Whether a load inside a serial loop of the body reads none of `names` (so copies along
    the level those names vary with make it once for all)."""
    for loop in (n for n in syntax.walk(body) if isinstance(n, syntax.Loop) and not n.parallel):
        for node in syntax.walk(loop.body):
            if isinstance(node, syntax.Index) and not syntax.variables(node) & names:
                return True
    return False


def divides(schedule: Schedule, tile: tuple[int, int]) -> tuple:
    """What the tiled kernel needs of the parameters: each factor divides its level's extent."""
    extents = {lp.var: lp.extent for lp in schedule.grid}
    return tuple(sympy.Eq(sympy.Mod(extents[level.var], factor), 0)
                 for level, factor in zip(_levels(schedule), tile))


@functools.lru_cache(maxsize=64)
def tiled(schedule: Schedule, tile: tuple[int, int]) -> Schedule:
    """The schedule where one block computes tile[0] x tile[1] blocks of its row and column
    levels (where `refusal` finds nothing): the row level jammed first, then the column level."""
    body, headers, base = schedule.body, {}, 1
    taken = used_names(schedule)
    for level, factor, mark in zip(_levels(schedule), tile, "rc"):
        body, headers[level.var] = _jammed(body, level, factor, taken, base, mark)
        taken |= {n.name for n in syntax.walk(body) if isinstance(n, syntax.Decl)}
        base *= factor
    return rebuild(schedule, with_body(schedule.nest, body, headers), len(schedule.grid))


def _jammed(body: syntax.Block, level: syntax.Loop, factor: int, taken: set[str], base: int, mark: str):
    """(the body with `factor` copies of the level's iterations per block, the level's new
    header). Copy r runs iteration lo + factor*(v - lo) + r of the old level; the new level
    has (hi - lo)/factor iterations (`divides`: whole tiles only, no copy beyond hi). The
    copies' locals are named `<name>_<mark><r>`."""
    span = level.keyword_span
    lo_zero = syntax.to_sympy(level.lo) == 0
    extent = level.hi if lo_zero else binary("-", level.hi, level.lo, span)
    blocks = binary("/", extent, const(factor, span), span)
    header = replace(level, hi=blocks if lo_zero else binary("+", level.lo, blocks, span))
    per_copy = varying(body, level.var) - {level.var}
    var = syntax.Var(level.var, level.ctype, span)
    first = binary("*", const(factor, span), var if lo_zero else binary("-", var, level.lo, span), span)
    first = first if lo_zero else binary("+", level.lo, first, span)
    copies, heads = [], []
    for c in range(factor):
        names = {level.var: next(fresh_names(taken, f"{level.var}_{c}", numbered_only=False))}
        if c:
            names.update({name: next(fresh_names(taken, f"{name}_{mark}{c}", numbered_only=False))
                          for name in sorted(per_copy)})
        copies.append(names)
        value = first if c == 0 else binary("+", first, const(c, span), span)
        heads.append(syntax.Decl(names[level.var], level.ctype, value, span))
    jammed, _ = jam(body, copies, [()] * factor, {level.var} | per_copy, base)
    return syntax.Block(tuple(heads) + (jammed,), body.span), header
