"""Vector layout of a register tile's copies of one operand: a thread's elements of four copies
side by side in shared memory, read with one 16-byte load (float4, LDS.128) instead of four.

A register tile (strategies/register_tiles.py) makes a block stage TN tiles of the right
operand a block's extent apart (matmul's b: TN regions of B0 x (s*ub1), the r-th from column
8*j*s*ub1 + r*s*ub1), and each thread reads its element of every one at the same position in
it (b[z][u + x] of each). Row-major, those TN elements are a region apart: TN scalar loads. Here
the TN regions share their rows: row z of the run holds, for each column p, the elements of
regions 4g .. 4g + 3 at slots 4p .. 4p + 3 of group g (group g's 4E slots after group g - 1's),
so region r's element (z, p) is at

    base + 4g*E + z * (TN*E) + 4p + r % 4         (E: a region's row, TN*E the rows' pitch)

and a thread's four elements of a group are one aligned float4. The run takes the slots it took
before (its rows times TN*E), so nothing else of the plan moves and the shared memory counted
is unchanged. A warp's lanes at neighbouring p read neighbouring float4s: each quarter warp
reads 128 consecutive bytes, no bank conflict.

Laid out so only where alignment is a fact: float elements; the part's byte offset a multiple
of 16 and the run's first slot a multiple of 4 for every value of the parameters (polynomials
whose coefficients, divided, stay integers); TN a multiple of 4; the regions boxes of two or
more dimensions without strided runs or padding, each the previous one moved by its extent
along the last dimension; only read (loaded, never written), and every region read by the
same accesses up to that move (the relative positions, as sympy expressions, equal): otherwise
the float4 would not be shared by four reads. Elsewhere the regions stay row-major and are
read one element at a time.
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
        while j < len(regions) and _follows(schedule, regions[j - 1], regions[j]):
            j += 1
        run = regions[i:j]
        if len(run) % LANES == 0 and _candidate(schedule, run[0]) and _multiple(run[0].base, LANES) \
                and _same_reads(schedule, run):
            regions[i:j] = _laid_out(run)
            changed = True
        i = j
    return dataclasses.replace(choice, regions=tuple(regions)) if changed else choice


def _laid_out(run: list) -> list:
    row = run[0].dims[-1].elements
    pitch = sympy.expand(len(run) * row)
    first = run[0].base
    return [dataclasses.replace(r, base=sympy.expand(first + (n // LANES) * LANES * row + n % LANES),
                                pitch=pitch, lanes=LANES, lane=n % LANES)
            for n, r in enumerate(run)]


def _candidate(schedule: Schedule, region) -> bool:
    """A box of two dimensions or more, row-major and unpadded, only read."""
    return (len(region.dims) >= 2 and region.pitch is None and region.lanes == 1 and region.load
            and not region.write_back and not any(d.repeats for d in region.dims)
            and all(schedule.accesses[a].is_read and not schedule.accesses[a].is_write
                    and schedule.accesses[a].exact for a in region.accesses))


def _follows(schedule: Schedule, before, after) -> bool:
    """`after` is `before` moved by its extent along the last dimension."""
    if not (_candidate(schedule, before) and _candidate(schedule, after)) or len(before.dims) != len(after.dims):
        return False
    for k, (p, q) in enumerate(zip(before.dims, after.dims)):
        if sympy.expand(p.elements - q.elements) != 0:
            return False
        step = p.elements if k == len(before.dims) - 1 else 0
        if sympy.expand(q.lower - p.lower - step) != 0:
            return False
    return True


def _same_reads(schedule: Schedule, run: list) -> bool:
    """Every region of the run is read at the same positions relative to its first element: a
    thread's four reads of a group are one float4."""
    def relative(region) -> frozenset:
        return frozenset(tuple(sympy.expand(sympy.sympify(index) - d.lower)
                               for index, d in zip(schedule.accesses[a].indices, region.dims))
                         for a in region.accesses)
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
    except sympy.PolynomialError:
        return False
    if poly is None:
        return (expr / m).is_Integer
    return all(c.is_Integer for c in poly.coeffs())
