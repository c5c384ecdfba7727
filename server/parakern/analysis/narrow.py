"""PK042: a warning where every block has a fixed number of threads below a warp.

The nest splits half and half (frontend/nest.py: an odd middle level goes to the grid), so a
3-level nest whose innermost level is 16 wide (`a[i][j][k]` with k < 16) maps to blocks of 16
threads: half of each warp's lanes idle, and an SM reaches its limit of resident blocks with a
fraction of its threads. No program parameter can change it, so tune cannot either. Reported
once, at the block's outermost level, with what to change: move a grid level into the block
(split it in two, where the nest has an odd number of levels, so that the extra level goes to
the block) or widen the block's levels to a multiple of 32.
"""
from __future__ import annotations

import sympy

from parakern.analysis.point import definitions
from parakern.analysis.warps import WARP
from parakern.source.diagnostics import Diagnostic, Related, warning
from parakern.model import Schedule

CODE = "PK042"


def narrow_blocks(schedule: Schedule) -> tuple[Diagnostic, ...]:
    if not schedule.block or not schedule.grid:   # no block level: PK016 says so
        return ()
    defs = definitions(schedule)
    threads = sympy.Mul(*(sympy.sympify(lp.extent).xreplace(defs) for lp in schedule.block))
    if not threads.is_Integer or not 0 < threads < WARP:
        return ()
    threads = int(threads)
    grid, block = schedule.grid, schedule.block
    levels = ", ".join(lp.var for lp in block)
    head = (f"every block has {threads} thread{'s' * (threads != 1)} (meta_for {levels}: the nest's "
            f"{len(grid) + len(block)} levels map {len(grid)} to the grid and {len(block)} to the block), fewer "
            f"than the {WARP} of a warp: {WARP - threads} lanes of each warp idle, and an SM reaches its limit of "
            "resident blocks with few threads; ")
    inner = grid[-1]
    if schedule.between and len(block) < 3:   # the serial loop splits the nest: levels below it are the block
        advice = (f"nest another meta_for level below the serial loop {schedule.between[-1].var} (line "
                  f"{schedule.between[-1].span.line}), or widen the block's levels to {WARP} threads or a multiple "
                  f"of {WARP}")
        return (warning(CODE, head + advice, block[0].keyword_span),)
    if len(grid) > len(block) and len(block) < 3:   # one more level goes to the block
        t, b = f"{inner.var}t", f"{inner.var}b"
        advice = (f"split meta_for {inner.var} (line {inner.span.line}) into two levels, {inner.var} = {b} * B + {t}"
                  f" with meta_for (int {t} = 0; {t} < B; {t}++) right inside meta_for {b}, so that "
                  f"{len(grid) + len(block) + 1} levels map {len(block) + 1} to the block (B x {threads} threads), "
                  f"or widen the block's levels to {WARP} threads or a multiple of {WARP}")
        return (warning(CODE, head + advice, block[0].keyword_span,
                        Related(inner.keyword_span, f"meta_for {inner.var} runs in the grid")),)
    advice = f"widen the block's levels (meta_for {levels}) to {WARP} threads or a multiple of {WARP}"
    return (warning(CODE, head + advice, block[0].keyword_span),)
