"""PTX through llvmlite's NVPTX back-end, cached per kernel variant."""
from __future__ import annotations

import functools

import llvmlite.binding as llvm
from llvmlite import ir

from parakern.ir.lower import lower
from parakern.ir.passes import optimize
from parakern.ir.targets import device_machine
from parakern.kernel import Kernel
from parakern.model import Schedule
from parakern.machine.targets import DEFAULT_TARGET


def emit_ptx(module: "ir.Module | llvm.ModuleRef | str", target: str = DEFAULT_TARGET) -> str:
    """PTX text of an (already optimized) NVPTX module."""
    ref = llvm.parse_assembly(str(module))  # a fresh copy: codegen passes rewrite the module
    return device_machine(target).emit_assembly(ref)


def kernel_ptx(kernel: Kernel, level: "int | None" = None) -> str:
    """PTX of a kernel variant at IR level `level` (default: the variant's own ir_level)."""
    level = kernel.ir_level if level is None else level
    # Only what the PTX depends on keys the cache: decisions and cse_level are history.
    return _cached_ptx(kernel.schedule, kernel.cached, level, kernel.target)


@functools.lru_cache(maxsize=256)
def _cached_ptx(schedule: Schedule, cached: tuple[str, ...], level: int, target: str) -> str:
    kernel = Kernel(schedule, cached, ir_level=level, target=target)  # lower reads ir_level
    return _ir_ptx(str(lower(kernel)), level, target)


@functools.lru_cache(maxsize=128)
def _ir_ptx(ir_text: str, level: int, target: str) -> str:
    """PTX of an IR text. Keyed by the text: a schedule edited where its IR does not change
    (comments, spacing, an edit elsewhere in the function) is not optimised again; llvmlite
    leaks native memory on every run of LLVM's O3 pipeline (see lsp/jobs.py)."""
    return emit_ptx(optimize(ir_text, level, target), target)
