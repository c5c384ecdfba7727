"""PK044: a warning where a level that maps to the block has an extent that grows with the data.

The nest splits half and half (frontend/nest.py), so `meta_for b < nb, i < M, bx < gx, tx < BX`
maps b and i to the grid and bx and tx to the block: a block of gx·BX threads, about N, which
no GPU launches once it passes 1024 (T), and no tuning changes. Reported once, at the first
such block level, with what to change: a level whose extent is a block size in its place.
"""
from __future__ import annotations

import sympy

from parakern.analysis.point import definitions
from parakern.model import Schedule
from parakern.source.diagnostics import Diagnostic, warning
from parakern.symbolic.printing import to_plain

CODE = "PK044"


def data_sized_blocks(schedule: Schedule) -> tuple[Diagnostic, ...]:
    defs = definitions(schedule)
    data = {p.name for p in schedule.data_params}
    threads = sympy.Mul(*(sympy.sympify(lp.extent) for lp in schedule.block))   # as written: gx, not its definition
    for lp in schedule.block:
        extent = sympy.sympify(lp.extent).xreplace(defs)
        grows = sorted(s.name for s in extent.free_symbols if s.name in data)
        if not grows:
            continue
        levels = len(schedule.grid) + len(schedule.block)
        sized = [f"{n} sizes '{array}'" for n in grows for array in _sized_by(schedule, n)[:1]]
        why = f" ({'; '.join(sized)}, which makes it a data size)" if sized else ""
        return (warning(CODE, (
            f"meta_for {lp.var} runs in the block (the nest's {levels} levels map {len(schedule.grid)} to the grid "
            f"and {len(schedule.block)} to the block), yet its extent {to_plain(sympy.sympify(lp.extent))} grows with "
            f"{', '.join(grows)}{why}: a block has {to_plain(threads)} threads, and no kernel fits once they pass the "
            f"1024 a GPU allows; make the block's levels those whose extents are block sizes: put meta_for {lp.var} "
            "in the outer half of the nest (it maps to the grid), or split a level in two so that one of block "
            "size goes to the block"), lp.keyword_span),)
    return ()


def _sized_by(schedule: Schedule, name: str) -> list[str]:
    """The arrays whose declared extents read `name` (what makes it a data parameter)."""
    return [a.name for a in schedule.arrays
            if any(name in {x.name for x in sympy.sympify(d).free_symbols} for d in a.dims if d is not None)]
