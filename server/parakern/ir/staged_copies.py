"""Shared-memory staging in LLVM IR: the lowering of analysis/staging.py's plan.

The plan says what of each cached array (`Kernel.cached`) is staged and
where, which access goes to which region (analysis/staging_routes.py) and
when the block copies and synchronises (analysis/staging_phases.py). Here:
the buffer is an external `[0 x i8]` in address space 3 (`extern __shared__`);
copies are counted loops over the block's linear thread id that skip
elements outside the array (a block at the edge); barriers are
`llvm.nvvm.barrier0`; a write-through store also stores to global memory.

Host execution (`host=True`) has no shared memory and no barrier: the
buffer is an extra `i8*` argument, and the function runs one *phase* (the
code between two barriers) per call, chosen by an extra `epoch` argument; it
returns the number of phases, so `HostKernel.launch` runs phase 0 for every
thread of a block, then phase 1, and so on. The code is the same, with
barriers counting phases and each phase's code under `if (epoch == phase)`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from llvmlite import ir

from parakern.analysis.read_boxes import whole
from parakern.analysis.regions import DimRegion
from parakern.analysis.staging import BUFFER, Region, Staged, StagingError, plan, shared_bytes, stepped
from parakern.analysis.staging_phases import Barrier, Copy, phases, thread_axes
from parakern.analysis.staging_routes import Routes, holders
from parakern.analysis.vector_layout import vector_index
from parakern.ir.memory import GlobalMemory
from parakern.ir.types import I1, I32, I64, SHARED, LoweringError, convert, llvm_type
from parakern.kernel import Kernel
from parakern.model import Array

I8 = ir.IntType(8)


@dataclass
class _State:
    """IR values of the function being lowered."""
    buffer: ir.Value = None
    epoch: ir.Value = None          # host: alloca counting barriers passed
    target: ir.Value = None         # host: the phase this call runs
    flags: dict = dataclasses.field(default_factory=dict)    # (array, choice) -> i1
    through: dict = dataclasses.field(default_factory=dict)  # id(shared pointer) -> (it, global pointer)
    vectors: dict = dataclasses.field(default_factory=dict)  # id(shared pointer) -> (it, region, vector pointer)
    body_end: "ir.Block | None" = None
    in_body: bool = False


class SharedMemory:
    """The staging hook of `lower` for `kernel.cached` (see the module docstring)."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        try:
            staged = plan(kernel)
        except StagingError as exc:
            raise LoweringError(exc.message, exc.span) from None
        self.staged = {st.array.name: st for st in staged}
        self.bytes = shared_bytes(kernel)
        self._routes = Routes(kernel.schedule, staged)
        self._phases = phases(kernel.schedule, staged)
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
        self._run(fn, self._phases.prologue)  # before the `between` loops

    def before_body(self, fn) -> None:
        st = self._st
        self._run(fn, self._phases.before_body)
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
        self._run(fn, self._phases.after_body)

    def address(self, fn, array: Array, subscripts):
        st = self._st
        if array.name not in self.staged or not st.in_body:
            return self._global.address(fn, array, subscripts)
        node = fn.accessing[-1] if getattr(fn, "accessing", None) else None
        try:
            route = self._routes.route(array.name, getattr(node, "span", None))
        except StagingError as exc:
            raise LoweringError(exc.message, exc.span) from None
        if route is None:
            return self._global.address(fn, array, subscripts)
        slots = [(self._slot(fn, route.staged, c, k, subscripts), choices)
                 for (c, k), choices in route.placements]
        if len(slots) == 1 and node is not None:
            (c, k), _ = route.placements[0]
            region = route.staged.choices[c].regions[k]
            access = next((a for a in fn.schedule.accesses if a.array == array.name and a.span == node.span
                           and a.exact), None)
            if region.lanes > 1 and holders(route.staged.choices[c], k) == (k,) and access is not None:
                st.vectors[id(slots[0][0])] = (slots[0][0], region, self._vector(fn, route.staged, region, access))
        pointer = slots[-1][0]
        for p, choices in reversed(slots[:-1]):
            pointer = fn.builder.select(self._any(fn, array.name, choices), p, pointer)
        if route.through:
            st.through[id(pointer)] = (pointer, self._global.address(fn, array, subscripts))
        return pointer

    def load(self, fn, pointer, ltype, align: int):
        """A read of an element in vector layout (analysis/vector_layout.py) is its lane of the
        aligned vector that holds it, as codegen/memory.py prints it: the lanes' reads address
        the same vector with the same instructions, one vector load (ld.shared.v4) once
        the optimiser merges them."""
        vector = self._st.vectors.get(id(pointer))
        b = fn.builder
        if vector is None or vector[0] is not pointer:
            return b.load(pointer, typ=ltype, align=align)
        _, region, address = vector
        # aligned on the device (the buffer is, and vector_layout.py proved the rest); the host's
        # buffer (ir/host.py) promises nothing beyond the element's own alignment
        whole = b.load(address, typ=address.type.pointee, align=align if fn.host else align * region.lanes)
        return b.extract_element(whole, ir.Constant(I32, region.lane))

    def _vector(self, fn, staged: Staged, region: Region, access) -> ir.Value:
        """Pointer to the vector that holds the access's element: the part as vectors, at
        vector_layout.vector_index (the same instructions for each lane's read)."""
        b = fn.builder
        vtype = ir.VectorType(llvm_type(staged.array.ctype), region.lanes)
        part = self._part(fn, staged)
        vectors = b.bitcast(part, ir.PointerType(vtype, addrspace=part.type.addrspace))
        return b.gep(vectors, [fn.sym_value(vector_index(region, access.indices), "int")], inbounds=True,
                     source_etype=vtype)

    def store(self, fn, pointer, value, align: int) -> None:
        fn.builder.store(value, pointer, align=align)
        through = self._st.through.get(id(pointer))
        if through is not None and through[0] is pointer:
            fn.builder.store(value, through[1], align=align)

    def epilogue(self, fn) -> None:
        self._run(fn, self._phases.epilogue)  # after the `between` loops
        if fn.host:
            b = fn.builder
            b.ret(b.add(b.load(self._st.epoch), ir.Constant(I32, 1)))
        else:
            fn.builder.ret_void()

    # ---- phases and barriers

    def _run(self, fn, steps) -> None:
        for step in steps:
            if isinstance(step, Barrier):
                self._barrier(fn)
            else:
                self._phase(fn, lambda copy=step: self._copy_all(fn, copy))

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
        ltid, scale = None, None
        for axis in thread_axes(fn.schedule):
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

    def _copy_all(self, fn, copy: Copy) -> None:
        for staged in self.staged.values():
            todo = [c for c, choice in enumerate(staged.choices) if any(map(copy.selects, choice.regions))]
            self._by_choice(fn, staged, todo, lambda c, staged=staged: [
                self._copy(fn, staged, region, copy.load)
                for region in staged.choices[c].regions if copy.selects(region)])

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
        array = staged.array
        sizes = [self._param(fn, d.elements, "int") for d in region.dims]
        base = self._param(fn, region.base, "int")
        align = array.element_size

        def body(e, coords):
            b = fn.builder
            index = [self._global_index(fn, staged, d, c) for d, c in zip(region.dims, coords)]
            inside = None
            if len(array.dims) == array.rank:  # size known: a block at the edge stops at it
                for g, dim in zip(index, array.dims):
                    ok = b.icmp_unsigned("<", g, self._param(fn, dim, staged.index_type))
                    inside = ok if inside is None else b.and_(inside, ok)
            if load and region.reads:  # only what some read needs (analysis/read_boxes.py)
                wanted = self._wanted(fn, region, coords)
                inside = wanted if inside is None else b.and_(inside, wanted)
            index = [convert(b, g, staged.index_type, "long") for g in index]
            if inside is not None:
                copy, skip = fn.block("stage.copy"), fn.block("stage.skip")
                b.cbranch(inside, copy, skip)
                b.position_at_end(copy)
            local = e
            if region.pitch is not None:   # padded rows: the slot from the coordinates (analysis/padding.py)
                local = None
                for k, c in enumerate(coords):
                    if region.pitch_of(k) is not None and region.dims[k].repeats:   # runs `pitch` apart
                        row = self._param(fn, region.row, "int")
                        c = b.add(b.mul(fn._int_op(b, "/", c, row, "int"), self._param(fn, region.pitch, "int")),
                                  fn._int_op(b, "%", c, row, "int"))
                    local = c if local is None else \
                        b.add(b.mul(local, self._param(fn, region.scale(k), "int"), flags=["nsw"]), c, flags=["nsw"])
            if region.lanes > 1:   # vector layout: positions `lanes` slots apart (analysis/vector_layout.py)
                local = b.mul(local, ir.Constant(I32, region.lanes), flags=["nsw"])
            shared = b.gep(self._part(fn, staged), [b.add(base, local, flags=["nsw"])], inbounds=True,
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
        if not stepped(fn.schedule, region):
            fn.counted_loop("stage", ltid, total, nthreads, lambda e: body(e, self._coords(fn, e, sizes)))
        else:
            self._stepped_loop(fn, ltid, total, nthreads, sizes, body)

    def _stepped_loop(self, fn, ltid, total, nthreads, sizes, body) -> None:
        """for (e = ltid; e < total; e += nthreads) body(e, coordinates of e in the box), the
        coordinates advancing by nthreads's with a carry instead of a division and a remainder
        per element (codegen/memory.py prints the same loop); inside `ltid < total`, where no
        size is 0."""
        b = fn.builder
        some, none = fn.block("stage.some"), fn.block("stage.none")
        b.cbranch(b.icmp_signed("<", ltid, total), some, none)
        b.position_at_end(some)
        step = self._coords(fn, nthreads, sizes)

        def advance(coords):
            after = [b.add(c, d, flags=["nsw"]) for c, d in zip(coords, step)]
            for k in reversed(range(1, len(sizes))):
                carry = b.icmp_signed(">=", after[k], sizes[k])
                after[k] = b.select(carry, b.sub(after[k], sizes[k], flags=["nsw"]), after[k])
                after[k - 1] = b.add(after[k - 1], b.zext(carry, I32), flags=["nsw"])
            return after

        fn.counted_loop("stage", ltid, total, nthreads, lambda e, *coords: body(e, list(coords)),
                        carried=self._coords(fn, ltid, sizes), advance=advance)
        b.branch(none)
        b.position_at_end(none)

    def _wanted(self, fn, region: Region, coords) -> ir.Value:
        """Some box of the region's reads holds the element at these coordinates (i1)."""
        b = fn.builder
        result = None
        for box in region.reads:
            test = ir.Constant(I1, 1)
            for c, (lo, size), covers in zip(coords, box, whole(box, region)):
                if covers:
                    continue
                relative = b.sub(c, self._param(fn, lo, "int")) if lo != 0 else c
                test = b.and_(test, b.icmp_unsigned("<", relative, self._param(fn, size, "int")))
            result = test if result is None else b.or_(result, test)
        return result

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

    def _slot(self, fn, staged: Staged, c: int, k: int, subscripts) -> ir.Value:
        """Pointer to the element's copy: the first region of the choice that holds it."""
        choice = staged.choices[c]
        b, pointer = fn.builder, None
        for j in holders(choice, k):
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
        for k, (d, g) in enumerate(zip(region.dims, subscripts)):
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
                position, holds = self._unstride(fn, d, position, region.pitch_of(k))
                if need_inside:
                    inside = b.and_(inside, holds)
            size = self._param(fn, region.scale(k), "int")
            linear = position if linear is None else b.add(b.mul(linear, size), position)
        if region.lanes > 1:   # vector layout: positions `lanes` slots apart (analysis/vector_layout.py)
            linear = b.mul(linear, ir.Constant(I32, region.lanes), flags=["nsw"])
        return linear, inside

    def _unstride(self, fn, d: DimRegion, relative, pitch=None):
        """relative = r + sum(stride * m) -> r + extent * (m1 + count1 * (m2 + ...)) (the runs
        `pitch` apart where padded), and r < extent."""
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
        position = b.add(b.mul(position, extent if pitch is None else self._param(fn, pitch, "int")), rest)
        return position, holds
