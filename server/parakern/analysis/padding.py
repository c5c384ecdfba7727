"""Padded rows of a staged tile, so that a warp's lanes fall in distinct banks.

A tile is stored row-major: rows of its last dimension (or runs of it, where a subscript is
linearised: `A[i * n + j]`'s B runs of n). Where the lanes of a warp reach it in different
rows (a transpose's c[j][i], a row of the tile per thread), rows of W elements put them W
elements apart, in as few of the 32 banks as W and 32 share (W = 8 floats: 4 banks, 8-way
conflicts). Rows of pitch p > W elements put them p apart (p odd: 32 banks).

Decided once per tile at the schedule's profile point (point.py: 32 threads along x, 8
along y, data sizes of about a thousand), from the access functions: every warp request
that reaches the tile (the body's accesses, each weighed by its executions per block, and
the copies that fill it and write it back, whose lanes walk along its rows) is costed in
wavefronts (warps.py) for each pitch W .. W + 31 words; the least total wins, the narrowest
on a tie, so a tile without conflicts keeps its rows. The pitch is then a rule in the
parameters rather than a number: the least p >= W with p = r (mod m), m the least power of
two above the padding chosen at the point (an odd pitch: 2*floor(W/2) + 1), so that a
warp's lanes fall in the banks they fall in at the point at every W of the same residue:
every power-of-two tile width that tune and dispatch_auto try.

The tile then takes its rows times p elements: staging.py sizes the array's part with it,
and so the shared-memory counter, the case tree's constraints on Z and the launch.
"""
from __future__ import annotations

import math

import sympy

from parakern.analysis import warps as W
from parakern.analysis.point import evaluate, profile_point
from parakern.model import Schedule
from parakern.symbolic.cinteger import LAMBDIFY_MODULES
from parakern.symbolic.symbols import sym

MAX_COPY_WARPS = 64      # warp requests of one copy costed; evenly spaced ones stand for the others
MAX_LANE_WARPS = 64      # warps of the block whose lanes are followed (a block of 1024 threads has 32)


def pitch_rule(row: sympy.Expr, pad: int, at: int) -> sympy.Expr:
    """The least p >= row with p = (at + pad) (mod m), m the least power of two above pad:
    `at + pad` where row = at, and the same residue, so the same banks, at every other row."""
    m = 1 << pad.bit_length()
    r = (at + pad) % m
    return sympy.expand(m * sympy.floor((sympy.sympify(row) + m - 1 - r) / m) + r)


class Padding:
    """The point a schedule's tiles are laid out at, and the pitch of each tile."""

    def __init__(self, schedule: Schedule):
        self.s = schedule
        self.subs = None
        self._placed = False

    def _place(self) -> None:
        """The point, once, when a tile of two dimensions or more asks for it."""
        self._placed = True
        schedule = self.s
        point = profile_point(schedule)
        if point is None:
            return
        subs = dict(evaluate(schedule, point))
        threads, dims = {}, {"x": 1, "y": 1, "z": 1}
        for loop in schedule.grid + schedule.block:
            lo = sympy.sympify(loop.lo).xreplace(subs)
            extent = sympy.sympify(loop.extent).xreplace(subs)
            if not (lo.is_Integer and extent.is_Integer) or extent < 1:
                return
            if loop.level == "block":
                threads[sym(loop.var)] = ("xyz".index(loop.axis), int(lo))
                dims[loop.axis] = int(extent)
            else:
                subs[sym(loop.var)] = lo
        self.trips = {}
        for loop in schedule.between + schedule.serial:   # outer first: a bound reads those before it
            lo, hi, step = (sympy.sympify(e).xreplace(subs) for e in (loop.lo, loop.hi, loop.step))
            first = lo if lo.is_Integer else sympy.S.Zero
            subs[sym(loop.var)] = first
            count = (hi - lo) / step if step != 0 else None
            self.trips[loop.var] = max(1, math.ceil(count)) if count is not None and count.is_Rational else 1
        self.subs = subs
        self.threads = threads
        self.block = (dims["x"], dims["y"], dims["z"])
        warps = W.warps(self.block)
        self.warps = warps[::max(1, -(-len(warps) // MAX_LANE_WARPS))]
        self.nwarps = len(warps)
        self.between = math.prod(self.trips[lp.var] for lp in schedule.between)

    def value(self, expr) -> int:
        v = sympy.sympify(expr).xreplace(self.subs)
        if not v.is_Integer:
            raise ValueError(f"'{expr}' is not a number at the profile point")
        return int(v)

    def pitch(self, region, size: int) -> "sympy.Expr | None":
        """The row pitch (elements) of a region of the plan (staging.Region) whose elements
        take `size` bytes; None where its rows stay as they are."""
        if len(region.dims) < 2 and not region.dims[-1].repeats:
            return None
        if not self._placed:
            self._place()
        if self.subs is None:
            return None
        try:
            requests = self._requests(region)
            sizes = [self.value(d.elements) for d in region.dims]
            row = self.value(region.row)
        except (ValueError, TypeError, ArithmeticError):
            return None
        if not requests or row < 1:
            return None

        # each lane's slot is a line in the pitch (_slot): its two numbers once, not per pitch tried
        lines = [(weight, [[_slot(lane, sizes, row) for lane in lanes] for lanes in warps])
                 for weight, warps in requests]

        def cost(p: int) -> float:
            return sum(weight * sum(W.wavefronts([(per_pitch * p + within) * size for per_pitch, within in lanes],
                                                 size)
                                    for lanes in warps) / len(warps)
                       for weight, warps in lines)

        words = max(1, W.BANKS * W.WORD // size)   # pitches W .. W + 31 words
        costs = [round(cost(row + pad), 9) for pad in range(words)]
        pad = min(range(words), key=lambda k: (costs[k], k))
        return pitch_rule(region.row, pad, row) if pad else None

    def _requests(self, region) -> list:
        """(warp requests per block, [lanes' positions in the tile, per warp request]) of each
        kind of request that reaches the region: its accesses, its copies."""
        out = []
        for i in region.accesses:
            access = self.s.accesses[i]
            lanes = self._lanes(access, region)
            if lanes is None:
                continue
            runs = math.prod(self.trips.get(v, 1) for v in access.loops)   # the between loops' too
            out.append(((int(access.is_read) + int(access.is_write)) * runs * self.nwarps, lanes))
        copies = int(region.load) + int(region.write_back)
        if copies:
            total, requests = self._copy(region)
            out.append((copies * total * (1 if region.hoisted else self.between), requests))
        return out

    def _lanes(self, access, region) -> "list[list[tuple[int, ...]]] | None":
        """Per warp, each lane's position in the region (per dimension); None where an index
        has no value per lane at the point."""
        if not access.exact or len(access.indices) != len(region.dims):
            return None
        relative = [sympy.expand(sympy.sympify(i - d.lower).xreplace(self.subs))
                    for i, d in zip(access.indices, region.dims)]
        if any(e.free_symbols - set(self.threads) for e in relative):
            return None
        functions = [sympy.lambdify(list(self.threads), e, LAMBDIFY_MODULES) for e in relative]
        out = []
        for warp in self.warps:
            lanes = []
            for lane in warp:
                at = [lo + lane[axis] for axis, lo in self.threads.values()]
                values = [f(*at) for f in functions]
                if any(v != int(v) for v in values):
                    return None
                lanes.append(tuple(d.position(int(v), self.value) for v, d in zip(values, region.dims)))
            out.append(lanes)
        return out

    def _copy(self, region) -> tuple[int, list]:
        """(warp requests of one copy of the region, [lanes' positions, per request costed]):
        the block's threads walk its elements in order, nthreads apart (staging_phases.py)."""
        sizes = [self.value(d.elements) for d in region.dims]
        total, nthreads = math.prod(sizes), math.prod(self.block)
        starts = [start + w for start in range(0, total, nthreads)
                  for w in range(0, min(nthreads, total - start), W.WARP)]
        chosen = starts[::max(1, -(-len(starts) // MAX_COPY_WARPS))]
        out = []
        for first in chosen:
            end = min(first + W.WARP, first - first % nthreads + nthreads, total)
            out.append([_coordinates(e, sizes) for e in range(first, end)])
        return len(starts), out


def _coordinates(e: int, sizes: list[int]) -> tuple[int, ...]:
    coords = []
    for n in reversed(sizes[1:]):
        coords.append(e % n)
        e //= n
    coords.append(e)
    return tuple(reversed(coords))


def _slot(position: tuple[int, ...], sizes: list[int], row: int) -> tuple[int, int]:
    """(a, b): the slot of a position (per dimension, 0 .. size - 1) in a tile whose rows of
    `row` elements start `pitch` apart (staging.Region.scale) is a·pitch + b."""
    linear = 0
    for p, n in zip(position[:-1], sizes):
        linear = linear * n + p
    last = position[-1]
    return linear * (sizes[-1] // row) + last // row, last % row
