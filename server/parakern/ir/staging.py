"""Shared-memory staging of the arrays a kernel variant caches (`Kernel.cached`).

Layout. One dynamic shared buffer per block (`extern __shared__`: an
external `[0 x i8]` in address space 3) holds every cached array's part, one
after the other, largest elements first so every part stays aligned. A part
is the array's block footprint (counters/footprint.py): the max over the
choices of the uniform guards of the sum of its clusters, each cluster a box
(with strided runs where a subscript is linearised) stored row-major. So the
buffer is exactly the shared-memory counter's polynomial, `SharedMemory.bytes`,
which the launch passes as the dynamic shared size.

Per execution of the body (once, or per iteration of the serial loops
between grid and block levels, e.g. matmul's k):

    load      every thread copies elements ltid, ltid + nthreads, ... of each
              region of the choice the parameters select, skipping elements
              outside the array (a block at the edge) and regions that are
              only stored to
    barrier   llvm.nvvm.barrier0
    body      a cached access reads and writes shared memory at its global
              index minus the region's lower bound, in the region of its cluster
    barrier   only if something follows: a write-back or the next refill
    write-back, barrier (if refilled)

A region that does not move with the `between` loops (matmul's c tile while
k runs) is loaded once before them and written back once after them.

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
body has changed. A write-through store costs what the uncached kernel pays.

Overlap. Clusters are disjoint when the footprint proved it (an exact
choice). Otherwise an element may lie in two regions of one array (polydiv:
a[N-1] and the block's window of a), so an access goes to the first region
holding the element: every element has one live copy.

Host execution (`host=True`) has no shared memory and no barrier: the
buffer is an extra `i8*` argument, and the function runs one *phase* (the
code between two barriers) per call, chosen by an extra `epoch` argument; it
returns the number of phases, so `HostKernel.launch` runs phase 0 for every
thread of a block, then phase 1, and so on. The code is the same, with
barriers counting phases and each phase's code under `if (epoch == phase)`.
"""
from __future__ import annotations

import functools

import dataclasses
from dataclasses import dataclass

import sympy
from llvmlite import ir

from parakern import syntax
from parakern.counters.footprint import DimRegion, Shape, footprint, footprints
from parakern.ir.memory import GlobalMemory
from parakern.ir.types import I1, I32, I64, SHARED, LoweringError, convert, llvm_type
from parakern.kernel import Kernel
from parakern.model import Array, Schedule

BUFFER = "parakern_shared"
I8 = ir.IntType(8)


# ------------------------------------------------------------------ the plan (sympy only)

@dataclass(frozen=True)
class Region:
    """One cluster of one choice and where it lives in its array's part of the buffer."""
    dims: tuple[DimRegion, ...]
    base: sympy.Expr            # first element, counted from the start of the part
    accesses: tuple[int, ...]   # positions in schedule.accesses
    write_back: bool            # the block writes every element: copied back whole
    load: bool                  # some access may read it (not only `=` stores)
    hoisted: bool               # the same for every iteration of the `between` loops: staged once

    @property
    def elements(self) -> sympy.Expr:
        return sympy.expand(sympy.Mul(*(d.elements for d in self.dims)))


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


def plan(kernel: Kernel) -> tuple[Staged, ...]:
    """Where each cached array lives; LoweringError when one cannot be staged."""
    s = kernel.schedule
    loop_types = tuple((n.var, n.ctype) for n in syntax.walk(s.nest) if isinstance(n, syntax.Loop))
    return _plan(Shape(s, (s.cache, s.keyword_span, loop_types)), kernel.cached)


@functools.lru_cache(maxsize=256)
def _plan(shape: Shape, cached: tuple[str, ...]) -> tuple[Staged, ...]:
    # What a plan reads of the schedule keys the cache: register levels and CSE
    # variants of one schedule share a plan.
    s = shape.schedule
    known = {a.name for a in s.arrays}
    for name in cached:
        if name not in known:
            raise LoweringError(f"cannot stage '{name}' in shared memory: not an array of the schedule",
                                _cache_span(s, name))
    arrays = sorted((s.array(n) for n in cached), key=lambda a: -a.element_size)
    prints = {fp.array: fp for fp in footprints(s, [a.name for a in arrays])}
    staged, offset = [], sympy.S.Zero
    for array in arrays:
        fp = prints[array.name]
        if not fp.bounded:
            raise LoweringError(f"cannot stage '{array.name}' in shared memory: its block footprint is "
                                f"unbounded ({fp.note})", _cache_span(s, array.name))
        choices = tuple(_choice(s, array, c) for c in fp.regions)
        staged.append(Staged(array, offset, fp.elements, choices, _index_type(s, array, choices)))
        offset = sympy.expand(offset + fp.elements * array.element_size)
    return tuple(staged)


def _choice(s: Schedule, array: Array, choice) -> StagedChoice:
    overlapping = not choice.exact and len(choice.clusters) > 1
    between = {lp.var for lp in s.between}
    regions, base = [], sympy.S.Zero
    for cluster in choice.clusters:
        _check(s, array, cluster)
        write_back = not overlapping and _covered(s, array, choice, cluster)
        # Stores alone never read the copy; with overlap another region's accesses might.
        load = overlapping or any(s.accesses[i].is_read for i in cluster.accesses)
        hoisted = bool(between) and not any(v.name in between for d in cluster.dims
                                             for v in sympy.sympify(d.lower).free_symbols)
        regions.append(Region(cluster.dims, base, cluster.accesses, write_back, load, hoisted))
        base = sympy.expand(base + cluster.elements)
    return StagedChoice(choice.when, tuple(regions), overlapping)


def _check(s: Schedule, array: Array, cluster) -> None:
    """The mapping global index -> slot must be one-to-one on the region."""
    span = _cache_span(s, array.name)
    if len(cluster.dims) != array.rank:
        raise LoweringError(f"cannot stage '{array.name}': its region has {len(cluster.dims)} "
                            f"dimension(s) for {array.rank} subscript(s)", span)
    params = {p.name for p in s.params} | {d.name for d in s.derived}
    fixed = params | {lp.var for lp in s.grid + s.between}
    for d in cluster.dims:
        sizes = [d.extent] + [x for r in d.repeats for x in r]
        if any({v.name for v in sympy.sympify(x).free_symbols} - params for x in sizes):
            raise LoweringError(f"cannot stage '{array.name}': a region size depends on the block", span)
        if {v.name for v in sympy.sympify(d.lower).free_symbols} - fixed:
            raise LoweringError(f"cannot stage '{array.name}': a region bound depends on the thread", span)
        if d.repeats and not cluster.exact:
            raise LoweringError(f"cannot stage '{array.name}': its strided runs may overlap, so an "
                                "element would have two places in shared memory", span)


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


def shared_bytes(kernel: Kernel) -> sympy.Expr:
    """Dynamic shared memory of the staged kernel, bytes per block."""
    return SharedMemory(kernel).bytes


# ------------------------------------------------------------------ the IR

@dataclass
class _State:
    """IR values of the function being lowered."""
    buffer: ir.Value = None
    epoch: ir.Value = None          # host: alloca counting barriers passed
    target: ir.Value = None         # host: the phase this call runs
    flags: dict = dataclasses.field(default_factory=dict)    # (array, choice) -> i1
    through: dict = dataclasses.field(default_factory=dict)  # id(shared pointer) -> (it, global pointer)
    body_end: "ir.Block | None" = None
    in_body: bool = False


class SharedMemory:
    """The staging hook of `lower` for `kernel.cached` (see the module docstring)."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.staged = {st.array.name: st for st in plan(kernel)}
        self.bytes = sympy.expand(sum((st.elements * st.array.element_size for st in self.staged.values()),
                                      sympy.S.Zero))
        self._spans: dict = {}
        for i, a in enumerate(kernel.schedule.accesses):
            self._spans.setdefault((a.array, a.span), []).append(i)
        self._global = GlobalMemory()
        self._st = _State()

    # ---- hooks

    def signature(self, host: bool):
        if host:  # the block's scratch buffer and the phase to run; returns the number of phases
            return I32, (("shared", ir.PointerType(I8)), ("epoch", I32))
        return ir.VoidType(), ()

    def prologue(self, fn) -> None:
        st = self._st = _State()
        args = {a.name: a for a in fn.function.args}
        if fn.host:
            st.buffer, st.target = args["shared"], args["epoch"]
            st.epoch = fn.entry.alloca(I32, name="phase")
            fn.entry.store(ir.Constant(I32, 0), st.epoch)
        else:
            st.buffer = self._buffer(fn.module)
        for name, staged in self.staged.items():
            for c, choice in enumerate(staged.choices):
                st.flags[name, c] = self._when(fn, choice.when)
        if self._any_region(lambda r: r.hoisted and r.load):  # before the `between` loops
            self._phase(fn, lambda: self._copy_all(fn, lambda r: r.hoisted and r.load, load=True))
            self._barrier(fn)

    def before_body(self, fn) -> None:
        st = self._st
        if self._any_region(lambda r: not r.hoisted and r.load):
            self._phase(fn, lambda: self._copy_all(fn, lambda r: not r.hoisted and r.load, load=True))
            self._barrier(fn)
        if fn.host:
            body, st.body_end = fn.block("phase.body"), fn.block("phase.body.end")
            fn.builder.cbranch(self._now(fn), body, st.body_end)
            fn.builder.position_at_end(body)
        st.in_body = True

    def after_body(self, fn) -> None:
        st = self._st
        st.in_body = False
        if fn.host:
            fn.builder.branch(st.body_end)
            fn.builder.position_at_end(st.body_end)
        def written(r):
            return r.write_back and not r.hoisted
        refill = bool(fn.schedule.between) and self._any_region(lambda r: not r.hoisted and r.load)
        if self._any_region(written) or refill:
            self._barrier(fn)
        if self._any_region(written):
            self._phase(fn, lambda: self._copy_all(fn, written, load=False))
            if refill:
                self._barrier(fn)

    def address(self, fn, array: Array, subscripts):
        st = self._st
        staged = self.staged.get(array.name)
        if staged is None or not st.in_body:
            return self._global.address(fn, array, subscripts)
        node = fn.accessing[-1] if getattr(fn, "accessing", None) else None
        ids = set(self._spans.get((array.name, getattr(node, "span", None)), ()))
        options = [(c, k) for c, choice in enumerate(staged.choices)
                   for k, region in enumerate(choice.regions) if ids & set(region.accesses)]
        if not options:
            raise LoweringError(f"cannot stage '{array.name}': this access is in no region of its footprint",
                                getattr(node, "span", None))
        regions = [staged.choices[c].regions[k] for c, k in options]
        if not any(r.load or r.write_back for r in regions):  # stored to, never read nor copied back
            return self._global.address(fn, array, subscripts)
        pointers: dict = {}  # one pointer per distinct placement, with the choices that use it
        for c, k in options:
            key = self._placement(staged, c, k)
            if key not in pointers:
                pointers[key] = (self._slot(fn, staged, c, k, subscripts), [])
            pointers[key][1].append(c)
        values = list(pointers.values())
        pointer = values[-1][0]
        for p, choices in reversed(values[:-1]):
            pointer = fn.builder.select(self._any(fn, array.name, choices), p, pointer)
        accesses = fn.schedule.accesses
        writes = any(accesses[i].is_write for i in ids)
        if writes and not all(r.write_back for r in regions):
            st.through[id(pointer)] = (pointer, self._global.address(fn, array, subscripts))
        return pointer

    def store(self, fn, pointer, value, align: int) -> None:
        fn.builder.store(value, pointer, align=align)
        through = self._st.through.get(id(pointer))
        if through is not None and through[0] is pointer:
            fn.builder.store(value, through[1], align=align)

    def epilogue(self, fn) -> None:
        def written(r):
            return r.write_back and r.hoisted
        if self._any_region(written):  # after the `between` loops
            self._barrier(fn)
            self._phase(fn, lambda: self._copy_all(fn, written, load=False))
        if fn.host:
            b = fn.builder
            b.ret(b.add(b.load(self._st.epoch), ir.Constant(I32, 1)))
        else:
            fn.builder.ret_void()

    # ---- phases and barriers

    def _now(self, fn) -> ir.Value:
        return fn.builder.icmp_signed("==", fn.builder.load(self._st.epoch), self._st.target)

    def _phase(self, fn, emit) -> None:
        """Code between two barriers; on the host only in the call for its phase."""
        if not fn.host:
            emit()
            return
        b = fn.builder
        run, done = fn.block("phase.run"), fn.block("phase.end")
        b.cbranch(self._now(fn), run, done)
        b.position_at_end(run)
        emit()
        b.branch(done)
        b.position_at_end(done)

    def _barrier(self, fn) -> None:
        b = fn.builder
        if fn.host:
            b.store(b.add(b.load(self._st.epoch), ir.Constant(I32, 1)), self._st.epoch)
            return
        name = "llvm.nvvm.barrier0"
        barrier = fn.module.globals.get(name) or ir.Function(fn.module, ir.FunctionType(ir.VoidType(), []), name)
        b.call(barrier, [])

    # ---- buffer, threads, choices

    @staticmethod
    def _buffer(module: ir.Module) -> ir.Value:
        if BUFFER in module.globals:
            return module.globals[BUFFER]
        buffer = ir.GlobalVariable(module, ir.ArrayType(I8, 0), BUFFER, addrspace=SHARED)
        buffer.linkage = "external"
        buffer.align = 16
        return buffer

    def _part(self, fn, staged: Staged) -> ir.Value:
        """Pointer to the first element of the array's part of the buffer."""
        b, offset = fn.builder, self._param(fn, staged.offset, "long")
        if fn.host:
            byte, space = b.gep(self._st.buffer, [offset], source_etype=I8), 0
        else:
            byte = b.gep(self._st.buffer, [ir.Constant(I64, 0), offset], inbounds=True,
                         source_etype=self._st.buffer.value_type)
            space = SHARED
        return b.bitcast(byte, ir.PointerType(llvm_type(staged.array.ctype), addrspace=space))

    def _thread_id(self, fn):
        """Linear thread id tid.x + tid.y*ntid.x + tid.z*ntid.x*ntid.y, and the block size."""
        b = fn.builder
        # Axes without a block level have tid 0 and ntid 1 at launch: left out.
        axes = [a for a in "xyz" if any(lp.axis == a for lp in fn.schedule.block)] or ["x"]
        ltid, scale = None, None
        for axis in axes:
            term = fn.special("tid." + axis)
            ltid = term if ltid is None else b.add(ltid, b.mul(term, scale, flags=["nuw"]), flags=["nuw"])
            extent = fn.special("ntid." + axis)
            scale = extent if scale is None else b.mul(scale, extent, flags=["nuw"])
        return ltid, scale

    def _when(self, fn, when) -> ir.Value:
        flag = ir.Constant(I1, 1)
        for condition, taken in when:
            value = fn.sym_condition(condition, "long", fn.entry)
            flag = fn.entry.and_(flag, value if taken else fn.entry.not_(value))
        return flag

    def _any(self, fn, name: str, choices) -> ir.Value:
        flag = self._st.flags[name, choices[0]]
        for c in choices[1:]:
            flag = fn.builder.or_(flag, self._st.flags[name, c])
        return flag

    @staticmethod
    def _param(fn, expr, ctype: str) -> ir.Value:
        # Parameter-only values are recomputed where used, like the lower bounds: at level 2
        # (no LICM, no GVN) nothing is kept live for them; -O3 hoists and shares them.
        return fn.sym_value(expr, ctype)

    # ---- copies between global and shared memory

    def _any_region(self, wanted) -> bool:
        return any(wanted(r) for s in self.staged.values() for c in s.choices for r in c.regions)

    def _copy_all(self, fn, wanted, load: bool) -> None:
        for staged in self.staged.values():
            todo = [c for c, choice in enumerate(staged.choices) if any(map(wanted, choice.regions))]
            self._by_choice(fn, staged, todo, lambda c: [
                self._copy(fn, staged, region, load) for region in staged.choices[c].regions if wanted(region)])

    def _by_choice(self, fn, staged: Staged, todo, emit) -> None:
        """emit(c) under the flag of choice c (a single choice needs no test)."""
        if len(staged.choices) == 1:
            if todo:
                emit(todo[0])
            return
        b = fn.builder
        end = fn.block("choice.end")
        for c in todo:
            then, other = fn.block("choice"), fn.block("choice.next")
            b.cbranch(self._st.flags[staged.array.name, c], then, other)
            b.position_at_end(then)
            emit(c)
            b.branch(end)
            b.position_at_end(other)
        b.branch(end)
        b.position_at_end(end)

    def _copy(self, fn, staged: Staged, region: Region, load: bool) -> None:
        """Threads of the block copy the region's elements, nthreads apart, skipping those off the array."""
        array, st = staged.array, self._st
        sizes = [self._param(fn, d.elements, "int") for d in region.dims]
        base = self._param(fn, region.base, "int")
        align = array.element_size

        def body(e):
            b = fn.builder
            index = [self._global_index(fn, staged, d, c) for d, c in zip(region.dims, self._coords(fn, e, sizes))]
            inside = None
            if len(array.dims) == array.rank:  # size known: a block at the edge stops at it
                for g, dim in zip(index, array.dims):
                    ok = b.icmp_unsigned("<", g, self._param(fn, dim, staged.index_type))
                    inside = ok if inside is None else b.and_(inside, ok)
            index = [convert(b, g, staged.index_type, "long") for g in index]
            if inside is not None:
                copy, skip = fn.block("stage.copy"), fn.block("stage.skip")
                b.cbranch(inside, copy, skip)
                b.position_at_end(copy)
            shared = b.gep(self._part(fn, staged), [b.add(base, e, flags=["nsw"])], inbounds=True,
                           source_etype=llvm_type(array.ctype))
            glob = fn.global_pointer(array, fn.linear_index(array, tuple(index)))
            source, dest = (glob, shared) if load else (shared, glob)
            b.store(b.load(source, typ=llvm_type(array.ctype), align=align), dest, align=align)
            if inside is not None:
                b.branch(skip)
                b.position_at_end(skip)

        total = sizes[0]
        for size in sizes[1:]:
            total = fn.builder.mul(total, size, flags=["nsw"])
        ltid, nthreads = self._thread_id(fn)
        fn.counted_loop("stage", ltid, total, nthreads, body)

    def _coords(self, fn, e, sizes):
        """Row-major coordinates of local element e in a box of the given sizes (i32)."""
        coords, q = [], e
        for k in reversed(range(len(sizes))):
            if k == 0:
                coords.append(q)
            else:
                coords.append(fn._int_op(fn.builder, "%", q, sizes[k], "int"))
                q = fn._int_op(fn.builder, "/", q, sizes[k], "int")
        return coords[::-1]

    @staticmethod
    def _lower(fn, staged: Staged, d: DimRegion) -> ir.Value:
        # Recomputed where used (grid and `between` variables, parameters): nothing stays live
        # across the body for it; the -O3 levels hoist and share it anyway.
        return fn.sym_value(d.lower, staged.index_type)

    def _global_index(self, fn, staged: Staged, d: DimRegion, local) -> ir.Value:
        """lower + r + sum(stride * m) for the local position in the dimension, in the index type."""
        b, t = fn.builder, staged.index_type
        run, q = local, None
        if d.repeats:
            extent = self._param(fn, d.extent, "int")
            run, q = fn._int_op(b, "%", local, extent, "int"), fn._int_op(b, "/", local, extent, "int")
        index = fn._int_op(b, "+", self._lower(fn, staged, d), convert(b, run, "int", t), t)
        for n, (stride, count) in enumerate(d.repeats):
            if n + 1 < len(d.repeats):
                m = fn._int_op(b, "%", q, self._param(fn, count, "int"), "int")
                q = fn._int_op(b, "/", q, self._param(fn, count, "int"), "int")
            else:
                m = q
            step = fn._int_op(b, "*", self._param(fn, stride, t), convert(b, m, "int", t), t)
            index = fn._int_op(b, "+", index, step, t)
        return index

    # ---- where an access goes

    def _placement(self, staged: Staged, c: int, k: int):
        """What decides an access's slot: its region, and the regions before it when they may overlap."""
        choice = staged.choices[c]
        considered = choice.regions[:k + 1] if choice.overlapping else choice.regions[k:k + 1]
        return tuple((r.dims, r.base) for r in considered)

    def _slot(self, fn, staged: Staged, c: int, k: int, subscripts) -> ir.Value:
        """Pointer to the element's copy: the first region of the choice that holds it."""
        choice = staged.choices[c]
        b, pointer = fn.builder, None
        for j in reversed(range(k + 1) if choice.overlapping else (k,)):
            region = choice.regions[j]
            local, inside = self._locate(fn, staged, region, subscripts, need_inside=j != k)
            here = b.gep(self._part(fn, staged), [b.add(self._param(fn, region.base, "int"), local)],
                         source_etype=llvm_type(staged.array.ctype))
            pointer = here if pointer is None else b.select(inside, here, pointer)
        return pointer

    def _locate(self, fn, staged: Staged, region: Region, subscripts, need_inside: bool):
        """Row-major position of the element in the region (i32), and whether the region holds it."""
        b = fn.builder
        linear, inside = None, ir.Constant(I1, 1)
        for d, g in zip(region.dims, subscripts):
            lower = self._lower(fn, staged, d)
            if need_inside:  # in 64 bits: an element far away must not wrap into the region
                relative = b.sub(g, convert(b, lower, staged.index_type, "long"))
                inside = b.and_(inside, b.icmp_unsigned("<", relative, self._param(fn, d.span, "long")))
                position = b.trunc(relative, I32)
            elif staged.index_type == "int":  # the difference is small: its low 32 bits are it
                position = b.sub(b.trunc(g, I32), lower)
            else:
                position = b.trunc(b.sub(g, lower), I32)
            if d.repeats:
                position, holds = self._unstride(fn, d, position)
                if need_inside:
                    inside = b.and_(inside, holds)
            size = self._param(fn, d.elements, "int")
            linear = position if linear is None else b.add(b.mul(linear, size), position)
        return linear, inside

    def _unstride(self, fn, d: DimRegion, relative):
        """relative = r + sum(stride * m) -> r + extent * (m1 + count1 * (m2 + ...)), and r < extent."""
        b = fn.builder
        ms, rest = [], relative
        for stride, _ in reversed(d.repeats):  # outermost stride first: the runs do not overlap
            step = self._param(fn, stride, "int")
            m = fn._int_op(b, "/", rest, step, "int")
            rest = b.sub(rest, b.mul(m, step))
            ms.insert(0, m)
        extent = self._param(fn, d.extent, "int")
        holds = b.icmp_unsigned("<", rest, extent)
        position = None
        for m, (_, count) in zip(reversed(ms), reversed(d.repeats)):
            holds = b.and_(holds, b.icmp_unsigned("<", m, self._param(fn, count, "int")))
            position = m if position is None else b.add(b.mul(position, self._param(fn, count, "int")), m)
        position = b.add(b.mul(position, extent), rest)
        return position, holds
