"""Running a kernel's IR on the CPU: the host variant of `lower`, JIT-compiled with MCJIT.

Blocks and threads run one after another. A kernel without shared-memory
staging has no barrier: each thread runs once. A staged kernel (ir/staged_copies.py)
runs phase by phase: the host function takes the block's scratch buffer (the
shared memory) and the phase to run, and returns how many phases there are;
every thread of a block runs phase 0, then every thread phase 1, and so on,
which is what the barriers between the phases guarantee on the GPU. The
buffer has exactly the staged kernel's dynamic shared size, is filled with a
poison byte for each block (a read of an element never loaded shows up as a
wrong result) and is followed by a guard zone checked after each block.
"""
from __future__ import annotations

import ctypes
import itertools

import llvmlite.binding as llvm
import sympy

from parakern.ir.lower import argument_names, kernel_name, lower
from parakern.ir.passes import optimize
from parakern.ir.targets import new_host_machine
from parakern.kernel import Kernel
from parakern.model import Schedule
from parakern.symbolic.symbols import sym
from parakern.ir.staged_copies import SharedMemory

_CTYPES = {"int": ctypes.c_int, "unsigned": ctypes.c_uint, "long": ctypes.c_long,
           "unsigned long": ctypes.c_ulong, "long long": ctypes.c_longlong,
           "unsigned long long": ctypes.c_ulonglong, "float": ctypes.c_float, "double": ctypes.c_double}
POISON = 0xA5
GUARD_BYTES = 64


def parameter_values(schedule: Schedule, params: dict[str, int]) -> dict[sympy.Symbol, sympy.Expr]:
    """Symbol -> value for the integer parameters and the derived scalars defined from them."""
    values = {sym(k): v for k, v in params.items() if isinstance(v, int)}
    for d in schedule.derived:  # derived scalars may use earlier ones
        values[sym(d.name)] = sympy.sympify(d.value).subs(values)
    return values


def launch_dims(schedule: Schedule, params: dict[str, int]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(grid, block) sizes, x y z, for parameter values: the extents of the meta_for levels."""
    values = parameter_values(schedule, params)
    sizes = {}
    for loop in schedule.loops:
        extent = sympy.sympify(loop.extent).subs(values)
        if not extent.is_Integer:
            raise ValueError(f"extent of '{loop.var}' is not a number: {extent}")
        sizes[(loop.level, loop.axis)] = int(extent)
    dims = tuple(tuple(sizes.get((level, axis), 1) for axis in "xyz") for level in ("grid", "block"))
    return dims[0], dims[1]


class HostKernel:
    """The kernel compiled for this CPU; call `launch` like a CUDA launch."""

    def __init__(self, kernel: Kernel, level: int = 0):
        self.schedule = kernel.schedule
        self.memory = None
        if kernel.cached:
            self.memory = SharedMemory(kernel)
        self.shared_bytes = 0  # dynamic shared memory of the last launch
        ref = optimize(lower(kernel, host=True, memory=self.memory), level)
        self._engine = llvm.create_mcjit_compiler(ref, new_host_machine())
        self._engine.finalize_object()
        s = self.schedule
        argtypes = [ctypes.c_void_p] * len(s.arrays) + [_CTYPES[p.ctype] for p in s.params] + [ctypes.c_int] * 6
        restype = None
        if self.memory is not None:
            argtypes += [ctypes.c_void_p, ctypes.c_int]
            restype = ctypes.c_int
        address = self._engine.get_function_address(kernel_name(s))
        self._function = ctypes.CFUNCTYPE(restype, *argtypes)(address)

    def launch(self, args: dict, grid=None, block=None) -> None:
        """Run every (block, thread) once; `args` maps argument names to values, arrays as ctypes arrays."""
        s = self.schedule
        params = {p.name: args[p.name] for p in s.params}
        if grid is None or block is None:
            grid, block = launch_dims(s, params)
        values = []
        for name in argument_names(s):
            value = args[name]
            values.append(ctypes.cast(value, ctypes.c_void_p) if isinstance(value, ctypes.Array) else value)
        blocks = list(itertools.product(*(range(n) for n in grid)))
        threads = list(itertools.product(*(range(n) for n in block)))
        if self.memory is None:
            for b in blocks:
                for t in threads:
                    self._function(*values, *b, *t)
            return
        size = self.memory.bytes.subs(parameter_values(s, params))
        if not size.is_Integer or size < 0:
            raise ValueError(f"dynamic shared memory is not a size for these parameters: {size}")
        self.shared_bytes = int(size)
        for b in blocks:
            self._run_block(values, b, threads)

    def _run_block(self, values, b, threads) -> None:
        buffer = (ctypes.c_ubyte * (self.shared_bytes + GUARD_BYTES))(*([POISON] * (self.shared_bytes + GUARD_BYTES)))
        pointer = ctypes.cast(buffer, ctypes.c_void_p)
        phase, phases = 0, 1
        while phase < phases:  # every thread finishes a phase before any starts the next: a barrier
            for t in threads:
                phases = self._function(*values, *b, *t, pointer, phase)
            phase += 1
        if any(byte != POISON for byte in buffer[self.shared_bytes:]):
            raise RuntimeError(f"block {b} wrote past its {self.shared_bytes} bytes of shared memory")
