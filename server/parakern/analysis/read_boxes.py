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

`clipped` ends the boxes of an array the block also writes where every read is proved below
a bound its guards give: thread coarsening (6) makes a tile of 4 * ceil(B0 / 4) rows whose
rows past B0 no thread reads (`ti_1 < B0 ? C[i_1][j] : 0`), and loading them read the next
block's rows while that block wrote them (mm_tile: a race). An array no block writes is left
as it is: reading more of it only costs bandwidth.
"""
from __future__ import annotations

import itertools

import sympy

from parakern.symbolic import constraints as cs
from parakern import syntax
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


CLIP_WORK = cs.DEFAULT_WORK // 2   # z3's resource units per question (formerly 1 s)


def clipped(s: Schedule, cluster, reads, boxes: tuple) -> tuple:
    """`boxes` (read_boxes; () for the whole region) with each box's end lowered, per dimension,
    to a bound U taken from a read's guard (`rel < U`, rel its subscript less the region's lower
    bound) that z3 proves every read below, under its guards and its loops' ranges."""
    if not reads or any(d.repeats for d in cluster.dims) or not all(s.accesses[i].exact for i in reads):
        return boxes
    shown = boxes or (tuple((sympy.S.Zero, d.extent) for d in cluster.dims),)
    facts = tuple(f.relation for f in s.facts)
    selected = _selected(s)
    conditions = {i: _conditions(s.accesses[i], selected) for i in reads}
    changed = False
    for d, dim in enumerate(cluster.dims):
        relative = {i: sympy.expand(sympy.sympify(s.accesses[i].indices[d]) - dim.lower) for i in reads}
        bound = next((u for u in _bounds(s, reads, relative, conditions)
                      if all(_proved(s, conditions[i], sympy.Lt(relative[i], u), facts) for i in reads)), None)
        if bound is None:
            continue
        new = []
        for box in shown:
            lo, size = box[d]
            if _proved(s, (), sympy.Le(bound, lo + size), facts) and _proved(s, (), sympy.Le(lo, bound), facts):
                box = box[:d] + ((lo, sympy.expand(bound - lo)),) + box[d + 1:]
                changed = True
            new.append(box)
        shown = tuple(new)
    return shown if changed else boxes


def _bounds(s: Schedule, reads, relative: dict, conditions: dict) -> list:
    """Candidate ends: U of each read's condition `rel + shift < U + shift` (shift free of loop
    variables)."""
    loops = {sym(lp.var) for lp in s.grid + s.between + s.block + s.serial}
    found = []
    for i in reads:
        for cond in conditions[i]:
            if not isinstance(cond, (sympy.StrictLessThan, sympy.LessThan)):
                continue
            shift = sympy.expand(cond.lhs - relative[i])
            if shift.free_symbols & loops:
                continue
            bound = sympy.expand(cond.rhs - shift + (1 if isinstance(cond, sympy.LessThan) else 0))
            if bound not in found:
                found.append(bound)
    return found


def _conditions(access, selected: dict) -> tuple:
    """What holds where the access runs: its guards' conditions (taken or not), and those of the
    `?:`s it is a branch of."""
    held = [g.condition if g.taken else sympy.Not(g.condition) for g in access.guards if g.condition is not None]
    return tuple(held) + selected.get((access.array, access.span), ())


def _selected(s: Schedule) -> dict:
    """(array, span) of each element reference in a branch of a `?:` -> the conditions that
    select the branch, in loop variables and parameters (a local declared once and never
    assigned stands for its value; a condition reading another is left out). Thread
    coarsening loads a row's accumulator as `ti_1 < B0 ? C[i_1][j] : 0`."""
    declared: dict = {}
    for n in syntax.walk(s.body):
        if isinstance(n, syntax.Decl):
            declared[n.name] = declared.get(n.name, 0) + 1
    assigned = syntax.assigned_names(s.body)
    env: dict = {}
    for n in syntax.walk(s.body):   # in source order: a local's value before its uses
        if isinstance(n, syntax.Decl) and n.init is not None and declared[n.name] == 1 and n.name not in assigned:
            value = syntax.to_sympy(n.init, env)
            if value is not None:
                env[n.name] = value
    found: dict = {}

    def visit(node, held: tuple) -> None:
        if isinstance(node, syntax.Ternary):
            cond = syntax.to_sympy_condition(node.cond, env)
            local = syntax.variables(node.cond) - set(env)
            usable = cond is not None and not (local - {lp.var for lp in s.loops + s.between + s.serial}
                                                - {p.name for p in s.params} - {d.name for d in s.derived})
            visit(node.cond, held)
            visit(node.then, held + ((cond,) if usable else ()))
            visit(node.other, held + ((sympy.Not(cond),) if usable else ()))
            return
        if isinstance(node, syntax.Index) and held:
            found.setdefault((node.array, node.span), held)
        for child in syntax.children(node):
            visit(child, held)

    visit(s.body, ())
    return found


def _proved(s: Schedule, premises: tuple, goal, facts) -> bool:
    """goal under the facts and `premises`, with the ranges of the loops they name."""
    premises = list(premises)
    names = {v.name for v in goal.free_symbols} | {v.name for p in premises for v in p.free_symbols}
    for lp in s.grid + s.between + s.block + s.serial:
        if lp.var in names:
            premises += [sympy.Ge(sym(lp.var), lp.lo), sympy.Lt(sym(lp.var), lp.hi)]
    return cs.implies(cs.System(tuple(premises), facts), goal, work=CLIP_WORK) == "proved"


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
