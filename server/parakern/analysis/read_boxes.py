"""Which elements of a staged region a load must copy: the union of what its reads touch.

A stencil's accesses at offsets in several dimensions form one region, their bounding box
(clusters.py): the 5-point stencil's (By + 2) x (Bx + 2) tile, the 7-point one's box with
its 12 edges and 8 corners, which no access reads. The shared-memory counter counts the
box (it is what the block allocates); the load copies only the union of the boxes the
reads touch, so no global load fetches a corner.

In the region's coordinates (from its first element) each read touches, per dimension,
[o, o + run) with `o` its constant offset and `run` the extent every access of the cluster
shares (the region's extent less the spread of the offsets). Unit boxes are merged along
each dimension where their offsets are consecutive (contiguous whatever `run` is), and a
box inside another is dropped: the 5-point stencil keeps two boxes (its column and its
row through the centre), the 7-point one three. Where the reads' offsets form a full
product of consecutive runs (conv2d's 3 x 3) the union is the whole region: () is returned,
as for one dimension, strided runs, or offsets that are not constants.
"""
from __future__ import annotations

import itertools

import sympy

from parakern.model import Schedule
from parakern.symbolic.symbols import sym


def read_boxes(s: Schedule, cluster, reads) -> tuple:
    """((lower, size) per dimension, ...) per box, or () for the whole region."""
    if len(cluster.dims) < 2 or not reads or any(d.repeats for d in cluster.dims):
        return ()
    # An access that a serial loop moves runs as far as that loop's trips, not as the others:
    # the boxes' shared run would be wrong (at r = 1, `img[i][j + d]` for d in [2, r) reads
    # nothing, and img[i][j]'s box came out 2 columns short). The whole region is loaded.
    serial = {sym(lp.var) for lp in s.serial}
    if any(sympy.sympify(index).free_symbols & serial for i in cluster.accesses for index in s.accesses[i].indices):
        return ()
    offsets = {i: _offsets(s, s.accesses[i], cluster) for i in cluster.accesses}
    if any(o is None for o in offsets.values()):
        return ()
    rank = len(cluster.dims)
    spread = [max(o[d] for o in offsets.values()) for d in range(rank)]
    if any(min(o[d] for o in offsets.values()) != 0 for d in range(rank)):
        return ()
    units = {offsets[i] for i in reads}
    per_dim = [sorted({u[d] for u in units}) for d in range(rank)]
    full = len(units) == len(list(itertools.product(*per_dim))) and all(
        v == list(range(spread[d] + 1)) for d, v in enumerate(per_dim))
    if full:
        return ()
    boxes = _merged(units, rank)
    run = [sympy.expand(d.extent - spread[k]) for k, d in enumerate(cluster.dims)]
    return tuple(tuple((sympy.Integer(lo), sympy.expand(run[d] + extra)) for d, (lo, extra) in enumerate(box))
                 for box in sorted(boxes))


def _offsets(s: Schedule, access, cluster) -> "tuple[int, ...] | None":
    """The access's constant offset from the region's lower bound, per dimension, where the
    block and serial loop variables start."""
    if not access.exact:
        return None
    starts = {sym(lp.var): lp.lo for lp in s.block}
    starts.update({sym(lp.var): lp.lo for lp in s.serial if lp.var in access.loops})
    out = []
    for index, d in zip(access.indices, cluster.dims):
        o = sympy.expand((sympy.sympify(index) - d.lower).xreplace(starts))
        if not o.is_Integer:
            return None
        out.append(int(o))
    return tuple(out)


def _merged(units, rank: int) -> set:
    """Boxes ((lower, extra) per dimension: [lower, lower + run + extra)) covering the units."""
    boxes = set()
    for d in range(rank):
        groups: dict = {}
        for u in units:
            groups.setdefault(u[:d] + u[d + 1:], []).append(u[d])
        for rest, values in groups.items():
            values.sort()
            start = last = values[0]
            for v in values[1:] + [None]:
                if v is not None and v == last + 1:
                    last = v
                    continue
                box = [(x, 0) for x in rest]
                box.insert(d, (start, last - start))
                boxes.add(tuple(box))
                if v is not None:
                    start = last = v
    return {b for b in boxes if not any(o != b and _inside(b, o) for o in boxes)}


def _inside(a, b) -> bool:
    return all(lb <= la and la + ea <= lb + eb for (la, ea), (lb, eb) in zip(a, b))


def whole(box, region) -> tuple[bool, ...]:
    """Per dimension: does the box cover the region's whole extent (no test needed there)?"""
    return tuple(sympy.expand(lo) == 0 and sympy.expand(size - d.elements) == 0
                 for (lo, size), d in zip(box, region.dims))
