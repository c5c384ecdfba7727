"""Running a kernel's IR on the CPU: the host variant of `lower`, JIT-compiled with MCJIT.

Blocks and threads run one after another, so this executes kernels whose
threads do not communicate (no barrier), which is every kernel without
shared-memory staging. It checks that the lowering is the program itself.
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
from parakern.symbols import sym

_CTYPES = {"int": ctypes.c_int, "unsigned": ctypes.c_uint, "long": ctypes.c_long,
           "unsigned long": ctypes.c_ulong, "long long": ctypes.c_longlong,
           "unsigned long long": ctypes.c_ulonglong, "float": ctypes.c_float, "double": ctypes.c_double}


def launch_dims(schedule: Schedule, params: dict[str, int]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(grid, block) sizes, x y z, for parameter values: the extents of the meta_for levels."""
    values = {sym(k): v for k, v in params.items() if isinstance(v, int)}
    for d in schedule.derived:  # derived scalars may use earlier ones
        values[sym(d.name)] = sympy.sympify(d.value).subs(values)
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
        ref = optimize(lower(kernel, host=True), level)
        self._engine = llvm.create_mcjit_compiler(ref, new_host_machine())
        self._engine.finalize_object()
        s = self.schedule
        argtypes = [ctypes.c_void_p] * len(s.arrays) + [_CTYPES[p.ctype] for p in s.params] + [ctypes.c_int] * 6
        address = self._engine.get_function_address(kernel_name(s))
        self._function = ctypes.CFUNCTYPE(None, *argtypes)(address)

    def launch(self, args: dict, grid=None, block=None) -> None:
        """Run every (block, thread) once; `args` maps argument names to values, arrays as ctypes arrays."""
        s = self.schedule
        if grid is None or block is None:
            grid, block = launch_dims(s, {p.name: args[p.name] for p in s.params})
        values = []
        for name in argument_names(s):
            value = args[name]
            values.append(ctypes.cast(value, ctypes.c_void_p) if isinstance(value, ctypes.Array) else value)
        ranges = [range(n) for n in tuple(grid) + tuple(block)]
        for index in itertools.product(*ranges):
            self._function(*values, *index)
