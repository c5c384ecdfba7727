"""Vector layout of a register tile's copies of an operand: a thread's elements of four copies
side by side in shared memory, read with one 16-byte load (float4, LDS.128) instead of four.

A register tile (strategies/register_tiles.py) makes a block stage TM (TN) tiles of each
operand a block's extent apart (matmul's b: TN regions of B0 x (s*ub1), the r-th from column
8*j*s*ub1 + r*s*ub1; a: TM regions of B0 x B0, the r-th from row 8*B0*i + r*B0), and each
thread reads its element of every one at the same position in it (b[z][u + x] and a[v][z] of
each). Stored one after the other, those elements are a region apart: one scalar load each.
Here the regions of a run are interleaved by four: region r's element at row-major position
p (of N, a region's elements) is at

    base + 4N * (r / 4) + 4p + r % 4

so a thread's elements of regions 4g .. 4g + 3 are one aligned float4, and lanes at
neighbouring positions read neighbouring float4s (no bank conflict; lanes at the same
position, a broadcast). The run takes the slots it took before (T regions of N), so nothing
else of the plan moves and the shared memory counted is unchanged.

Laid out so only where alignment is a fact: float elements; the part's byte offset a multiple
of 16 and the run's first slot a multiple of 4 for every value of the parameters (polynomials
whose coefficients, divided, stay integers); the run's length a multiple of 4; the regions
boxes without strided runs or padding, each the previous one moved by its extent along one
dimension (the same for the whole run); only read (loaded, never written); and every region
read by the same accesses up to that move (the relative positions, as sympy expressions,
equal): otherwise the float4 would not be shared by four reads. Elsewhere the regions stay as
they were and are read one element at a time.
"""
from __future__ import annotations

import dataclasses

import sympy

from parakern.model import Array, Schedule

LANES = 4            # float4: four 4-byte elements, 16 bytes
VECTOR_BYTES = 16


def vector_layout(schedule: Schedule, array: Array, choice, offset: sympy.Expr):
    """The choice (staging.StagedChoice) with its runs of adjacent read-only regions in vector
    layout where alignment is proved; the choice itself elsewhere. `offset`: the part's bytes
    from the start of the (16-byte aligned) buffer."""
    if array.ctype != "float" or choice.overlapping or not _multiple(offset, VECTOR_BYTES):
        return choice
    regions, changed, i = list(choice.regions), False, 0
    while i < len(regions):
        j = i + 1
        along = _moved_along(schedule, regions[i], regions[j]) if j < len(regions) else None
        while j < len(regions) and along is not None and _moved_along(schedule, regions[j - 1], regions[j]) == along:
            j += 1
        run = regions[i:j]
        if len(run) % LANES == 0 and _candidate(schedule, run[0]) and _multiple(run[0].base, LANES) \
                and _same_reads(schedule, run):
            regions[i:j] = _laid_out(run)
            changed = True
        i = j
    return dataclasses.replace(choice, regions=tuple(regions)) if changed else choice


def _laid_out(run: list) -> list:
    size = run[0].elements
    first = run[0].base
    return [dataclasses.replace(r, base=sympy.expand(first + (n // LANES) * LANES * size + n % LANES),
                                lanes=LANES, lane=n % LANES)
            for n, r in enumerate(run)]


def _candidate(schedule: Schedule, region) -> bool:
    """A box, unpadded and without strided runs, only read."""
    return (region.pitch is None and region.lanes == 1 and region.load and not region.write_back
            and not any(d.repeats for d in region.dims)
            and all(schedule.accesses[a].is_read and not schedule.accesses[a].is_write
                    and schedule.accesses[a].exact for a in region.accesses))


def _moved_along(schedule: Schedule, before, after) -> "int | None":
    """The dimension along which `after` is `before` moved by its extent; None where it is not."""
    if not (_candidate(schedule, before) and _candidate(schedule, after)) or len(before.dims) != len(after.dims):
        return None
    if any(sympy.expand(p.elements - q.elements) != 0 for p, q in zip(before.dims, after.dims)):
        return None
    moved = [k for k, (p, q) in enumerate(zip(before.dims, after.dims)) if sympy.expand(q.lower - p.lower) != 0]
    if len(moved) != 1 or sympy.expand(after.dims[moved[0]].lower - before.dims[moved[0]].lower
                                       - before.dims[moved[0]].elements) != 0:
        return None
    return moved[0]


def vector_index(region, indices) -> sympy.Expr:
    """Of a read of a region in vector layout at `indices` (an Access's, in loop variables and
    parameters), the index of the vector that holds the element, in vectors of `lanes` from
    the part's start: the same expression for the reads of a group's lanes (`_same_reads`), so
    the CUDA and the IR compute it once and load it once."""
    return sympy.expand(region.vector_base + _position(region, indices))


def _position(region, indices) -> sympy.Expr:
    """Row-major position of the element at `indices` in the region."""
    linear = sympy.S.Zero
    for index, d in zip(indices, region.dims):
        linear = linear * d.elements + (sympy.sympify(index) - d.lower)
    return sympy.expand(linear)


def _same_reads(schedule: Schedule, run: list) -> bool:
    """Every region of the run is read at the same positions relative to its first element,
    polynomials with integer coefficients (printed and lowered as int arithmetic): a thread's
    four reads of a group are one float4."""
    def relative(region) -> "frozenset | None":
        positions = frozenset(_position(region, schedule.accesses[a].indices) for a in region.accesses)
        return positions if all(_multiple(p, 1) for p in positions) else None
    first = relative(run[0])
    return bool(first) and all(relative(r) == first for r in run[1:])


def _multiple(expr, m: int) -> bool:
    """Whether expr is a multiple of m for every integer value of its symbols: a polynomial
    whose coefficients divided by m are integers."""
    expr = sympy.expand(sympy.sympify(expr))
    if expr == 0:
        return True
    try:
        poly = sympy.Poly(expr / m, *sorted(expr.free_symbols, key=str)) if expr.free_symbols else None
    except (sympy.PolynomialError, sympy.GeneratorsNeeded):
        return False
    if poly is None:
        return (expr / m).is_Integer
    return all(c.is_Integer for c in poly.coeffs())
