"""Kernel lowering to LLVM IR (llvmlite), optimization levels, and PTX."""
from parakern.ir.host import HostKernel, launch_dims, parameter_values
from parakern.ir.lower import argument_names, default_memory, kernel_name, lower
from parakern.ir.memory import GlobalMemory, Memory
from parakern.ir.passes import LEVEL_NOTES, LEVELS, optimize
from parakern.ir.ptx import emit_ptx, kernel_ptx
from parakern.ir.staged_copies import SharedMemory
from parakern.ir.types import LoweringError

__all__ = ["lower", "optimize", "emit_ptx", "kernel_ptx", "kernel_name", "argument_names",
           "LoweringError", "LEVELS", "LEVEL_NOTES", "Memory", "GlobalMemory", "SharedMemory",
           "default_memory", "HostKernel", "launch_dims", "parameter_values"]
