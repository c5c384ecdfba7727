"""The shared-memory plan of a kernel variant: what of each cached array is staged, and where.

Layout. One dynamic shared buffer per block holds every cached array's part,
one after the other, largest elements first so every part stays aligned. A
part is the array's block footprint: the max over the choices of the uniform
guards of the sum of its clusters, each cluster a box (with strided runs
where a subscript is linearised) stored row-major. Where a warp's lanes reach
a tile of two or more dimensions in different rows, its rows are padded
(`Region.pitch`, decided by padding.py from the access functions), and the
part grows by the padding. So the buffer is exactly the shared-memory
counter's value, `shared_bytes`, which the launch passes as the dynamic
shared size.

Write-back of what was written. A region is copied back whole, cooperatively
(coalesced), only when the block provably writes every element of it: its
write accesses alone, unguarded except by uniform guards, form exactly the
same exact region (jacobi1d's a[N+p+1], transpose's c, matmul's c). Otherwise
(guarded writes as in polydiv, partial coverage, overlapping clusters) the
writes go *through*: each store to a staged element also stores to global
memory, so global receives exactly the elements written, by their writer, in
program order. Both are exact without extra shared memory; a dirty flag per
element would not fit the counter's byte count, and replaying write addresses
after the barrier cannot re-evaluate guards or subscripts that read data the
body has changed.

A region that does not move with the `between` loops (matmul's c tile while
k runs) is hoisted: loaded once before them and written back once after them.

Which access goes to which region: staging_routes.py; when the copies and
barriers happen: staging_phases.py. ir/staged_copies.py lowers the plan to LLVM IR,
codegen/memory.py prints it as CUDA.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import sympy

from parakern import syntax
from parakern.analysis.footprint import Shape, footprint, footprints
from parakern.analysis.padding import Padding
from parakern.analysis.point import definitions
from parakern.analysis.read_boxes import clipped, read_boxes
from parakern.analysis.vector_layout import vector_layout
from parakern.analysis.regions import DimRegion
from parakern.analysis.written_first import written_first
from parakern.kernel import Kernel
from parakern.model import Array, Schedule
from parakern.symbolic.printing import to_c

BUFFER = "parakern_shared"   # the dynamic shared buffer, named alike in the IR and the CUDA


class StagingError(Exception):
    """A cached array that cannot be staged; `span` is its item of cache(...)."""

    def __init__(self, message: str, span=None, advice: str = ""):
        super().__init__(message if span is None else f"{span.file}:{span.line}:{span.col}: {message}")
        self.message = message
        self.span = span
        self.advice = advice   # what the user can change so that it can be staged, or ""


@dataclass(frozen=True)
class Region:
    """One cluster of one choice and where it lives in its array's part of the buffer."""
    dims: tuple[DimRegion, ...]
    base: sympy.Expr            # first element, counted from the start of the part
    accesses: tuple[int, ...]   # positions in schedule.accesses
    write_back: bool            # the block writes every element: copied back whole
    load: bool                  # some access may read a value the block did not write first
    hoisted: bool               # the same for every iteration of the `between` loops: staged once
    # What a load copies when not the whole region: boxes ((lower, size) per dimension, from
    # the region's first element) whose union holds every element some read needs.
    reads: tuple = ()
    pitch: "sympy.Expr | None" = None   # elements from a row's start to the next's, where padded
    # Vector layout (vector_layout.py): the region's row-major positions `lanes` slots apart, its
    # elements lane `lane` of vectors of `lanes` elements read as one; 1: slots adjacent.
    lanes: int = 1
    lane: int = 0

    @property
    def elements(self) -> sympy.Expr:
        return sympy.expand(sympy.Mul(*(d.elements for d in self.dims)))

    @property
    def row(self) -> sympy.Expr:
        """Elements of one row: the last dimension's, or one run of it where its subscript is
        linearised (`A[i * n + j]`: B runs of n)."""
        last = self.dims[-1]
        return last.extent if last.repeats else last.elements

    @property
    def slots(self) -> sympy.Expr:
        """Elements the region takes in its part: its elements, and its rows' padding."""
        return sympy.expand(sympy.Mul(*(d.elements for d in self.dims[:-1])) * self.scale(len(self.dims) - 1))

    @property
    def vector_base(self) -> sympy.Expr:
        """Of a region in vector layout, its base in vectors of `lanes` elements (exact:
        vector_layout.py lays groups out at multiples of `lanes`)."""
        return sympy.expand((self.base - self.lane) / self.lanes)

    def pitch_of(self, k: int) -> "sympy.Expr | None":
        """The pitch of dimension k's runs: the region's for its last dimension, where padded."""
        return self.pitch if k == len(self.dims) - 1 else None

    def scale(self, k: int) -> sympy.Expr:
        """What a slot's position so far is multiplied by before dimension k's is added: the
        size of dimension k, or for the last one of a padded region its rows times the pitch
        (slot = ((p0 * scale(1) + p1) * scale(2) + p2) ..., the last position with its rows
        `pitch` apart: (p / row) * pitch + p % row)."""
        if self.pitch_of(k) is None:
            return self.dims[k].elements
        return sympy.expand(self.pitch * sympy.Mul(*(c for _, c in self.dims[k].repeats)))


@dataclass(frozen=True)
class StagedChoice:
    when: tuple[tuple[sympy.Basic, bool], ...]   # uniform conditions (parameters only)
    regions: tuple[Region, ...]
    overlapping: bool                           # regions not proved disjoint


@dataclass(frozen=True)
class Staged:
    array: Array
    offset: sympy.Expr          # bytes from the start of the buffer
    elements: sympy.Expr        # size of the part: the max over choices
    choices: tuple[StagedChoice, ...]
    index_type: str             # C type of its region bounds: "int" when C computes them in int
    spanned: bool = False       # strided runs that may overlap staged as one run (_spanned)


def plan(kernel: Kernel) -> tuple[Staged, ...]:
    """Where each cached array lives; StagingError when one cannot be staged. Rows of tiles
    that a warp reads across are padded (padding.py) unless the kernel says not to."""
    s = kernel.schedule
    loop_types = tuple((n.var, n.ctype) for n in syntax.walk(s.nest) if isinstance(n, syntax.Loop))
    return _plan(Shape(s, (s.cache, s.keyword_span, loop_types, s.atomics, written_first(s))), kernel.cached,
                 kernel.padding)


def padded(staged: tuple[Staged, ...]) -> bool:
    """Whether some tile of the plan has padded rows (a vector layout's rows are not padding)."""
    return any(r.pitch is not None and r.lanes == 1 for st in staged for c in st.choices for r in c.regions)


def unpadded(kernel: Kernel) -> "Kernel | None":
    """The variant with its tiles' rows as long as their footprints' (what `profile` shows
    padding against); None where its plan pads nothing (or it cannot be staged)."""
    if not kernel.cached or not kernel.padding or not stageable(kernel) or not padded(plan(kernel)):
        return None
    return dataclasses.replace(kernel, padding=False)


def stageable(kernel: Kernel) -> bool:
    """Whether every cached array of the kernel can be staged (`plan` raises nothing)."""
    try:
        plan(kernel)
    except StagingError:
        return False
    return True


def shared_bytes(kernel: Kernel) -> sympy.Expr:
    """Dynamic shared memory of the staged kernel, bytes per block."""
    return sympy.expand(sum((st.elements * st.array.element_size for st in plan(kernel)), sympy.S.Zero))


@functools.lru_cache(maxsize=256)
def _plan(shape: Shape, cached: tuple[str, ...], padding: bool = True) -> tuple[Staged, ...]:
    # What a plan reads of the schedule keys the cache: register levels and CSE
    # variants of one schedule share a plan.
    s = shape.schedule
    known = {a.name for a in s.arrays}
    for name in cached:
        if name not in known:
            raise StagingError(f"cannot stage '{name}' in shared memory: not an array of the schedule",
                               _cache_span(s, name))
    for name in cached:
        update = next((a for a in s.atomics if a.array == name), None)
        if update is not None:
            # A block's copy would take its own threads' updates only: those of other blocks
            # meet the element in global memory, and the copy written back would undo them.
            raise StagingError(f"cannot stage '{name}' in shared memory: iterations of other blocks may update "
                               f"the same elements (line {update.span.line}, made with {update.function}), and a "
                               "block's copy written back would overwrite their updates",
                               _cache_span(s, name),
                               f"the kernels update '{name}' with atomics in global memory; remove it from cache()")
    arrays = sorted((s.array(n) for n in cached), key=lambda a: -a.element_size)
    prints = {fp.array: fp for fp in footprints(s, [a.name for a in arrays])}
    pads = Padding(s) if padding else None
    staged, offset = [], sympy.S.Zero
    for array in arrays:
        fp = prints[array.name]
        if not fp.bounded:
            raise StagingError(f"cannot stage '{array.name}' in shared memory: its block footprint is "
                               f"unbounded ({fp.note})", _cache_span(s, array.name))
        if any(c.whole for c in fp.regions) and not sympy.sympify(fp.elements).is_number:
            # every block would copy all of it: clamp_blur's in[i][max(j - 1, 0)] staged 4*h*w bytes
            where = next((a.span.line for a in s.accesses if a.array == array.name and not a.exact), None)
            raise StagingError(f"cannot stage '{array.name}': a subscript of it is not affine in the block's loop "
                               f"variables ({'line ' + str(where) + ': ' if where else ''}min, max, ?:, % or / of "
                               "them), so its tile would be the whole array, copied by every block",
                               _cache_span(s, array.name),
                               "a subscript linear in the loop variables stages its tile: where a clamp or a "
                               "wrap only acts at the edges, a meta_schedule over the interior without it and "
                               "another over the edges with it compute the same result (a bounds test instead "
                               "would change the edge values)")
        covered = shape.key[-1]   # written_first: reads of what the thread wrote first
        regions = tuple(dataclasses.replace(c, clusters=tuple(_spanned(array, cl) for cl in c.clusters))
                        for c in fp.regions)
        spanned = any(new is not old for c, d in zip(regions, fp.regions) for new, old in zip(c.clusters, d.clusters))
        choices = tuple(_choice(s, array, c, covered) for c in regions)
        _check_useful(s, array, choices)
        # the part's size: the footprint's, but the runs' spans where they are staged as one
        elements = _largest(choices) if spanned else fp.elements
        if pads is not None:
            choices = tuple(_padded(choice, pads, array.element_size) for choice in choices)
            if any(r.pitch is not None for c in choices for r in c.regions):
                elements = _largest(choices)
        # a register tile's copies of one operand side by side, read as vectors where alignment is proved
        choices = tuple(vector_layout(s, array, choice, offset) for choice in choices)
        staged.append(Staged(array, offset, elements, choices, _index_type(s, array, choices), spanned))
        offset = sympy.expand(offset + elements * array.element_size)
    return tuple(staged)


def _largest(choices) -> sympy.Expr:
    """The slots of the choice that takes the most (its regions' elements and rows' padding)."""
    sums = [sympy.expand(sum((r.slots for r in c.regions), sympy.S.Zero)) for c in choices]
    return sums[0] if len(sums) == 1 else sympy.Max(*sums)


def _padded(choice: StagedChoice, pads: Padding, size: int) -> StagedChoice:
    """The choice with the rows of its tiles padded where padding.py says, one after the other."""
    regions, base = [], sympy.S.Zero
    for region in choice.regions:
        region = dataclasses.replace(region, base=base, pitch=pads.pitch(region, size))
        regions.append(region)
        base = sympy.expand(base + region.slots)
    return dataclasses.replace(choice, regions=tuple(regions))


def _choice(s: Schedule, array: Array, choice, covered: frozenset) -> StagedChoice:
    overlapping = not choice.exact and len(choice.clusters) > 1
    # Where regions may overlap, a read of region j finds its element in the first of regions
    # 0..j that holds it (staging_routes.holders): region k is loaded where some region from k
    # on is read. Where none is, it is not: its load would read elements other blocks write
    # (covariance's cov[i][j] beside cov[j][i]), a race for values nobody uses.
    read = [any(s.accesses[i].is_read and i not in covered for i in c.accesses) for c in choice.clusters]
    read_from = [any(read[k:]) for k in range(len(read))]
    between = {lp.var for lp in s.between}
    regions, base = [], sympy.S.Zero
    for k, cluster in enumerate(choice.clusters):
        _check(s, array, cluster)
        write_back = not overlapping and _covered(s, array, choice, cluster)
        # Stores alone never read the copy, nor reads of what the thread wrote first
        # (written_first.py); with overlap another region's accesses might.
        reads = [i for i in cluster.accesses if s.accesses[i].is_read and i not in covered]
        load = read_from[k] if overlapping else bool(reads)
        hoisted = bool(between) and not any(v.name in between for d in cluster.dims
                                             for v in sympy.sympify(d.lower).free_symbols)
        boxes = read_boxes(s, cluster, reads) if load and not overlapping else ()
        if load and not overlapping and any(s.accesses[i].is_write for i in cluster.accesses):
            boxes = clipped(s, cluster, reads, boxes)   # nothing another block writes is loaded
        regions.append(Region(cluster.dims, base, cluster.accesses, write_back, load, hoisted, boxes))
        base = sympy.expand(base + cluster.elements)
    return StagedChoice(choice.when, tuple(regions), overlapping)


def _check_useful(s: Schedule, array: Array, choices) -> None:
    """A staged array whose tile is neither loaded nor written back does nothing but take shared
    memory: its writes, all under a condition of the thread (`if (i < n && j < n)`), go to
    global memory as written, while the case claimed the staging and its bytes."""
    if any(r.load or r.write_back for c in choices for r in c.regions):
        return
    guards = [g for a in s.accesses if a.array == array.name and a.is_write for g in a.guards if not g.uniform]
    where = f" (the `if` of line {guards[0].span.line})" if guards else ""
    raise StagingError(f"cannot stage '{array.name}': the block writes it under a condition of the thread{where}, "
                       "so its tile cannot be written back whole, and it reads none of it: staged, it would "
                       "only take shared memory", _cache_span(s, array.name),
                       "block sizes that divide the array's extents (an assert) let the bounds test go" if guards
                       else "")


def _check(s: Schedule, array: Array, cluster) -> None:
    """The mapping global index -> slot must be one-to-one on the region."""
    span = _cache_span(s, array.name)
    if len(cluster.dims) != array.rank:
        raise StagingError(f"cannot stage '{array.name}': its region has {len(cluster.dims)} "
                           f"dimension(s) for {array.rank} subscript(s)", span)
    params = {p.name for p in s.params} | {d.name for d in s.derived}
    fixed = params | {lp.var for lp in s.grid + s.between}
    for d in cluster.dims:
        sizes = [d.extent] + [x for r in d.repeats for x in r]
        if any({v.name for v in sympy.sympify(x).free_symbols} - params for x in sizes):
            raise StagingError(f"cannot stage '{array.name}': a region size depends on the block", span)
        if {v.name for v in sympy.sympify(d.lower).free_symbols} - fixed:
            raise StagingError(f"cannot stage '{array.name}': a region bound depends on the thread", span)
        if d.repeats and not cluster.exact:   # a read-only array's are staged as one run (_spanned)
            raise StagingError(f"cannot stage '{array.name}': its strided runs may overlap and the block writes "
                               "it, so an element would have two places in shared memory that could disagree",
                               span, _as_rows(array, d))


def _spanned(array: Array, cluster):
    """A read-only array's strided runs that may overlap (a decimating filter's in[2*i + k]: runs
    of F taps, 2 apart) staged as the one run from the first element to the last: every element
    has one place, the copy loads each once, and where the runs overlap it is exactly their
    union (elsewhere a few elements more, at most the constant stride times their number; never
    one another block writes: nothing is written). Runs a parameter apart stay refused."""
    if cluster.exact or array.written or not any(d.repeats for d in cluster.dims):
        return cluster
    if any(not sympy.sympify(stride).is_number for d in cluster.dims for stride, _ in d.repeats):
        return cluster   # A[i*s + j]: rows s apart, perhaps far more than the run; the span would hold them all
    return dataclasses.replace(cluster, exact=True,
                               dims=tuple(DimRegion(d.lower, d.span) if d.repeats else d for d in cluster.dims))


def _as_rows(array: Array, dim) -> str:
    """Advice for a flattened array (`in[i * n + j]`): declared with its rows, its tile is a box."""
    if array.rank != 1:
        return ""
    row = dim.repeats[-1][0]
    rows = sympy.cancel(array.dims[0] / row) if array.dims else None
    whole = rows is None or (rows.is_Integer if rows.is_number else
                             rows.is_polynomial() and all(c.is_Integer for c in sympy.Poly(rows).coeffs()))
    if not whole:
        return ""   # its extent is no whole number of rows (buf[3*n + F] in rows of 2): no such declaration
    rows = to_c(rows) if rows is not None else "rows"
    return (f"declare '{array.name}' with its rows, {array.ctype} {array.name}[{rows}][{to_c(row)}], "
            f"and index it {array.name}[row][column]: its tile is then one box")


def _index_type(s: Schedule, array: Array, choices) -> str:
    """int when every name in the bounds is an int, as in C's own subscripts: 32-bit index arithmetic."""
    types = {p.name: p.ctype for p in s.params} | {d.name: d.ctype for d in s.derived}
    types |= {n.var: n.ctype for n in syntax.walk(s.nest) if isinstance(n, syntax.Loop)}
    exprs = list(array.dims) + [x for c in choices for r in c.regions for d in r.dims
                                for x in (d.lower, d.extent, *(y for t in d.repeats for y in t))]
    names = {v.name for e in exprs for v in sympy.sympify(e).free_symbols}
    return "int" if all(types.get(n) == "int" for n in names) else "long"


def _covered(s: Schedule, array: Array, choice, cluster) -> bool:
    """Does the block write every element of the cluster (so a whole write-back is exact)?"""
    writes = [i for i in cluster.accesses if s.accesses[i].is_write]
    if not writes or any(not g.uniform for i in writes for g in s.accesses[i].guards):
        return False
    alone = footprint(dataclasses.replace(s, accesses=tuple(s.accesses[i] for i in writes)), array.name)
    taken = dict(choice.when)
    for c in alone.regions:
        if all(taken.get(cond) == t for cond, t in c.when):
            return (c.exact and len(c.clusters) == 1 and c.clusters[0].exact
                    and _same(c.clusters[0].dims, cluster.dims))
    return False


def _same(a, b) -> bool:
    def zero(x):
        return sympy.expand(x) == 0
    return len(a) == len(b) and all(
        zero(p.lower - q.lower) and zero(p.extent - q.extent) and len(p.repeats) == len(q.repeats)
        and all(zero(x - y) for r, t in zip(p.repeats, q.repeats) for x, y in zip(r, t))
        for p, q in zip(a, b))


def _cache_span(s: Schedule, name: str):
    return next((c.span for c in s.cache if c.name == name), s.keyword_span)


def stepped(schedule: Schedule, region: Region) -> bool:
    """Whether the copy loop of a region walks its box with coordinates that step by those of
    nthreads (a division for the start and one for the step, per thread) rather than dividing
    each element's index (one division per element copied). Where every thread copies a
    parameter's worth of elements (transpose's B0 x (B1*s) tile by B0 x B1 threads: s each),
    stepping pays: on an H100 that kernel got 4 to 14 % faster. Where a thread copies about one
    element (a B0 x B1 tile for each k, a halo tile), the second division costs more than it
    saves: up to 18 % slower there (docs/bench/README.md)."""
    if len(region.dims) < 2:
        return False
    threads = sympy.Mul(*(lp.extent for lp in schedule.loops if lp.level == "block"))
    ratio = sympy.cancel((region.elements / threads).xreplace(definitions(schedule)))
    return not ratio.is_number and ratio.as_numer_denom()[1].is_number
