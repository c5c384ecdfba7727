"""A kernel variant's per-thread code as an LLVM module (one CUDA kernel).

The kernel takes every array of the schedule as a global pointer, then every
parameter by its C type. Each grid level's variable is `blockIdx.<axis> + lo`
and each block level's `threadIdx.<axis> + lo`; the launch uses the level
extents as grid and block sizes, so no guard is added (the source's own `if`s
guard the edges). Serial loops between the grid and block levels wrap the
body. Derived scalars are not arguments: where the body needs one, it is
computed from its definition in the entry block.

With `host=True` the same code is built for the CPU: thread and block indices
come from six trailing i32 arguments (blockIdx x y z, threadIdx x y z)
instead of NVVM intrinsics, so tests and `verify` can run it with MCJIT.

Every element address goes through a `Memory` (ir/memory.py): by default
`SharedMemory` (ir/staged_copies.py) when the variant caches arrays, which stages
them in shared memory and, on the host, splits the function into the phases
between its barriers; `GlobalMemory` otherwise.
"""
from __future__ import annotations

import dataclasses

from llvmlite import ir
from llvmlite.ir import values

from parakern import syntax
from parakern.analysis.lifted import lifted
from parakern.analysis.updates import Update, made_atomically
from parakern.ir.expr import ExprLowerer
from parakern.ir.memory import GlobalMemory, Memory
from parakern.ir.targets import DEVICE_TRIPLE, device_layout, host_triple
from parakern.ir.types import GLOBAL, I32, LoweringError, convert, is_float, llvm_type
from parakern.kernel import Kernel
from parakern.model import Schedule
from parakern.ir.staged_copies import SharedMemory

HOST_INDEX_ARGS = ("ctaid.x", "ctaid.y", "ctaid.z", "tid.x", "tid.y", "tid.z")
_FALLBACK = GlobalMemory()  # optional Memory hooks an object does not define


def kernel_name(schedule: Schedule) -> str:
    return f"{schedule.function}_kernel{schedule.index}"


def argument_names(schedule: Schedule) -> tuple[str, ...]:
    """The kernel's arguments in order: arrays, then parameters."""
    return tuple(a.name for a in schedule.arrays) + tuple(p.name for p in schedule.params)


def default_memory(kernel: Kernel) -> Memory:
    """Shared-memory staging of the cached arrays, or plain global memory when none is cached."""
    if kernel.cached:
        return SharedMemory(kernel)
    return GlobalMemory()


def lower(kernel: Kernel, *, host: bool = False, memory: "Memory | None" = None,
          unroll: "bool | None" = None) -> ir.Module:
    """The kernel as an LLVM module.

    `memory` defaults to `default_memory(kernel)`. `unroll=False` marks every
    loop `llvm.loop.unroll.disable` (NVPTX then writes `.pragma "nounroll"`,
    which stops ptxas unrolling too); by default loops may be unrolled at IR
    level 0 only.
    """
    schedule = kernel.schedule
    module = ir.Module(name=schedule.id)
    if host:
        module.triple = host_triple()
    else:
        module.triple = DEVICE_TRIPLE
        module.data_layout = device_layout()
    memory = memory if memory is not None else default_memory(kernel)
    function = _declare(module, schedule, host, _hook(memory, "signature")(host))
    arrays = {a.name: function.args[i] for i, a in enumerate(schedule.arrays)}
    fn = _StmtLowerer(module, function, schedule, memory, arrays)
    fn.host = host
    if not (kernel.ir_level == 0 if unroll is None else unroll):
        fn.no_unroll = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")])

    entry, start = function.append_basic_block("entry"), function.append_basic_block("start")
    fn.entry.position_at_end(entry)
    fn.entry.position_before(fn.entry.branch(start))
    fn.builder.position_at_end(start)
    for i, p in enumerate(schedule.params):
        fn.bind(p.name, function.args[len(schedule.arrays) + i], p.ctype)
    ctypes = _loop_ctypes(schedule.nest)
    _bind_thread_indices(fn, ctypes)
    fn.memory.prologue(fn)
    plan = lifted(kernel)   # accumulators kept in registers across the between loops
    fn.push()
    for stmt in plan.before:
        fn.statement(stmt)
    fn.between(list(schedule.between), ctypes, plan.body)
    for stmt in plan.after:
        fn.statement(stmt)
    fn.pop()
    _hook(fn.memory, "epilogue")(fn)

    if not host:
        annotations = module.add_named_metadata("nvvm.annotations")
        annotations.add(module.add_metadata([function, ir.MetaDataString(module, "kernel"), ir.Constant(I32, 1)]))
    return module


def _hook(memory, name: str):
    method = getattr(memory, name, None)
    return method if method is not None else getattr(_FALLBACK, name)


def _declare(module: ir.Module, schedule: Schedule, host: bool, signature) -> ir.Function:
    space = 0 if host else GLOBAL
    arg_types = [ir.PointerType(llvm_type(a.ctype, a.span), addrspace=space) for a in schedule.arrays]
    arg_types += [llvm_type(p.ctype, p.span) for p in schedule.params]
    names = argument_names(schedule)
    if host:
        arg_types += [I32] * len(HOST_INDEX_ARGS)
        names += tuple(n.replace(".", "_") for n in HOST_INDEX_ARGS)
    returns, extra = signature
    arg_types += [t for _, t in extra]
    names += tuple(n for n, _ in extra)
    function = ir.Function(module, ir.FunctionType(returns, arg_types), name=kernel_name(schedule))
    for arg, name in zip(function.args, names):
        arg.name = name
    return function


def _bind_thread_indices(fn: "_StmtLowerer", ctypes: dict[str, str]) -> None:
    """Each meta_for variable is its level's blockIdx/threadIdx component plus its lower bound."""
    for loop in fn.schedule.loops:
        index = fn.special(("ctaid." if loop.level == "grid" else "tid.") + loop.axis)
        ctype = ctypes.get(loop.var, "int")
        value = convert(fn.builder, index, "unsigned", ctype)
        if loop.lo != 0:
            value = fn.arith("+", value, ctype, fn.sym_value(loop.lo, ctype), ctype, ctype)
        fn.bind(loop.var, value, ctype)


def _sreg(module: ir.Module, register: str) -> ir.Function:
    name = f"llvm.nvvm.read.ptx.sreg.{register}"
    if name in module.globals:
        return module.globals[name]
    return ir.Function(module, ir.FunctionType(I32, []), name=name)


def _loop_ctypes(nest) -> dict[str, str]:
    """Declared types of the meta_for and between-loop variables."""
    ctypes: dict[str, str] = {}
    for n in syntax.walk(nest):  # pre-order: the outermost loop of a name wins
        if isinstance(n, syntax.Loop):
            ctypes.setdefault(n.var, n.ctype)
    return ctypes


class _LoopID(values.MDValue):
    """`!N = distinct !{!N, properties...}`: a loop ID, which llvmlite has no builder for."""

    def __init__(self, module: ir.Module, properties):
        super().__init__(module, properties, name=str(len(module.metadata)))

    def descr(self, buf):
        refs = [self.get_reference()] + [p.get_reference() for p in self.operands]
        buf += ("distinct !{{ {0} }}".format(", ".join(refs)), "\n")

    __eq__ = object.__eq__  # every loop has its own ID
    __ne__ = object.__ne__
    __hash__ = object.__hash__


class _StmtLowerer(ExprLowerer):
    no_unroll = None  # metadata property attached to every loop latch when set
    host = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.accessing: list[syntax.Index] = []  # array references being addressed, innermost last

    def element_pointer(self, node: syntax.Index) -> ir.Value:
        # A stack, not a field: a[b[i]] addresses b while a is being addressed.
        self.accessing.append(node)
        try:
            return super().element_pointer(node)
        finally:
            self.accessing.pop()

    def special(self, register: str) -> ir.Value:
        """An i32 PTX special register (tid.x, ntid.y, ctaid.z, ...); on the host, from the arguments.

        The host has no launch configuration: ntid is the block extent of the
        model, which is what `launch_dims` launches with.
        """
        if not self.host:
            return self.builder.call(_sreg(self.module, register), [])
        if register.startswith("ntid."):
            extents = [lp.extent for lp in self.schedule.block if lp.axis == register[-1]]
            return self.sym_value(extents[0], "int", self.entry) if extents else ir.Constant(I32, 1)
        first = len(self.schedule.arrays) + len(self.schedule.params)
        return self.function.args[first + HOST_INDEX_ARGS.index(register)]

    def counted_loop(self, name: str, start: ir.Value, stop: ir.Value, step: ir.Value, body,
                     carried=(), advance=None) -> None:
        """for (i = start; i < stop; i += step) body(i), on i32 values (signed). carried: i32
        values that go around the loop beside i: body(i, *values), advance(values) -> the next."""
        b = self.builder
        before = b.block
        header, body_bb, end = (self.block(f"{name}.{n}") for n in ("cond", "body", "end"))
        b.branch(header)
        b.position_at_end(header)
        index = b.phi(I32, name=name)
        index.add_incoming(start, before)
        values = []
        for k, value in enumerate(carried):
            phi = b.phi(I32, name=f"{name}.c{k}")
            phi.add_incoming(value, before)
            values.append(phi)
        b.cbranch(b.icmp_signed("<", index, stop), body_bb, end)
        b.position_at_end(body_bb)
        body(index, *values)
        after = advance(values) if values else ()
        for phi, value in zip(values, after):
            phi.add_incoming(value, b.block)
        index.add_incoming(b.add(index, step, flags=["nsw"]), b.block)
        back_edge = b.branch(header)
        if self.no_unroll is not None:
            back_edge.set_metadata("llvm.loop", _LoopID(self.module, [self.no_unroll]))
        b.position_at_end(end)

    def between(self, loops, ctypes, body: syntax.Block) -> None:
        """The serial loops between grid and block levels, then the per-thread body."""
        if not loops:
            self.memory.before_body(self)
            self.statement(body)
            self.memory.after_body(self)
            return
        loop, rest = loops[0], loops[1:]
        ctype = ctypes.get(loop.var, "int")
        self.push()
        slot = self.declare(loop.var, ctype, loop.span)
        self.builder.store(self.sym_value(loop.lo, ctype), slot.pointer)
        hi, step = self.sym_value(loop.hi, ctype), self.sym_value(loop.step, ctype)
        self._loop(loop.var, slot, lambda: (hi, ctype), lambda: (step, ctype),
                   lambda: self.between(rest, ctypes, body))
        self.pop()

    def statement(self, s) -> None:
        b = self.builder
        if isinstance(s, syntax.Block):
            self.push()
            for child in s.stmts:
                self.statement(child)
            self.pop()
        elif isinstance(s, syntax.Decl):
            init = None if s.init is None else convert(b, self.value(s.init), s.init.ctype, s.ctype)
            slot = self.declare(s.name, s.ctype, s.span)  # after init: `int x = x;` reads the outer x
            if init is not None:
                b.store(init, slot.pointer)
        elif made_atomically(self.schedule, s) is not None:
            self._atomic(made_atomically(self.schedule, s))
        elif isinstance(s, syntax.Assign):
            self._assign(s)
        elif isinstance(s, syntax.If):
            self._if(s)
        elif isinstance(s, syntax.Loop):
            if s.parallel:
                raise LoweringError("meta_for inside the per-thread body is not supported", s.keyword_span)
            self.push()
            slot = self.declare(s.var, s.ctype, s.span)
            b.store(convert(b, self.value(s.lo), s.lo.ctype, s.ctype), slot.pointer)
            self._loop(s.var, slot, lambda: (self.value(s.hi), s.hi.ctype),
                       lambda: (self.value(s.step), s.step.ctype), lambda: self.statement(s.body))
            self.pop()
        else:
            raise LoweringError(f"cannot lower statement {type(s).__name__}", getattr(s, "span", None))

    def _loop(self, var, slot, hi, step, body) -> None:
        """for (; var < hi(); var += step()) body() — hi is re-evaluated each iteration, as in C."""
        b = self.builder
        ctype = slot.ctype
        header, body_bb, latch, end = (self.block(f"{var}.{n}") for n in ("cond", "body", "inc", "end"))
        b.branch(header)
        b.position_at_end(header)
        bound, bound_type = hi()
        common = syntax.arithmetic_result(ctype, bound_type)
        compare = b.icmp_unsigned if syntax.is_unsigned(common) else b.icmp_signed
        current = convert(b, self.read(var, ctype), ctype, common)
        b.cbranch(compare("<", current, convert(b, bound, bound_type, common)), body_bb, end)
        b.position_at_end(body_bb)
        body()
        b.branch(latch)
        b.position_at_end(latch)
        increment, increment_type = step()
        common = syntax.arithmetic_result(ctype, increment_type)
        updated = self.arith("+", self.read(var, ctype), ctype, increment, increment_type, common)
        b.store(convert(b, updated, common, ctype), slot.pointer)
        back_edge = b.branch(header)
        if self.no_unroll is not None:
            back_edge.set_metadata("llvm.loop", _LoopID(self.module, [self.no_unroll]))
        b.position_at_end(end)

    def _assign(self, s: syntax.Assign) -> None:
        b = self.builder
        target = s.target
        if isinstance(target, syntax.Index):
            pointer = self.element_pointer(target)
        else:
            slot = self.lookup(target.name, target.span)
            if slot.pointer is None:
                raise LoweringError(f"'{target.name}' is read-only in the kernel", target.span)
            pointer = slot.pointer
        ltype = llvm_type(target.ctype, target.span)
        align = syntax.TYPE_SIZES[target.ctype]
        value = self.value(s.value)
        if s.op == "=":
            result = convert(b, value, s.value.ctype, target.ctype)
        else:
            op = s.op[:-1]
            current = b.load(pointer, typ=ltype, align=align)
            # `a op= v` is `a = a op v`: shifts keep a's type, the rest use the usual conversions.
            common = target.ctype if op in ("<<", ">>") else syntax.arithmetic_result(target.ctype, s.value.ctype)
            result = convert(b, self.arith(op, current, target.ctype, value, s.value.ctype, common, s.span),
                             common, target.ctype)
        if isinstance(target, syntax.Index):
            _hook(self.memory, "store")(self, pointer, result, align)
        else:
            b.store(result, pointer, align=align)

    def _atomic(self, update: Update) -> None:
        """An update other iterations may make to the same element at once: one atomicrmw
        (relaxed, as CUDA's atomicAdd / atomicMax are), which NVPTX emits as atom/red.global."""
        b = self.builder
        if update.guard is not None:   # `if (i < n && v > m[k])`: the atomic where the rest holds
            then, end = self.block("atomic.then"), self.block("atomic.end")
            b.cbranch(self.cond(update.guard), then, end)
            b.position_at_end(then)
            self._atomic(dataclasses.replace(update, guard=None))
            b.branch(end)
            b.position_at_end(end)
            return
        ctype = update.target.ctype
        pointer = self.element_pointer(update.target)
        value = convert(b, self.value(update.value), update.value.ctype, ctype)
        if update.kind == "add":
            if is_float(ctype):
                if update.op == "sub":   # atomicAdd(&x, -v): there is no atomic float subtraction
                    value = b.fsub(ir.Constant(value.type, -0.0), value)
                op = "fadd"
            else:
                op = "sub" if update.op == "sub" else "add"
        else:
            op = ("u" if syntax.is_unsigned(ctype) else "") + update.kind
        b.atomic_rmw(op, pointer, value, "monotonic")

    def _if(self, s: syntax.If) -> None:
        b = self.builder
        test = self.cond(s.cond)
        then_bb, end = self.block("if.then"), self.block("if.end")
        else_bb = end if s.other is None else self.block("if.else")
        b.cbranch(test, then_bb, else_bb)
        b.position_at_end(then_bb)
        self.statement(s.then)
        b.branch(end)
        if s.other is not None:
            b.position_at_end(else_bb)
            self.statement(s.other)
            b.branch(end)
        b.position_at_end(end)
