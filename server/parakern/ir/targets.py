"""LLVM target machines: NVPTX for kernels, the host for CPU execution of the same IR."""
from __future__ import annotations

import functools

import llvmlite.binding as llvm
from parakern.machine.targets import DEFAULT_TARGET

DEVICE_TRIPLE = "nvptx64-nvidia-cuda"


@functools.cache
def _initialized() -> bool:
    # Registering targets is idempotent; done once per process.
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return True


@functools.cache
def device_machine(target: str = DEFAULT_TARGET, opt: int = 3) -> llvm.TargetMachine:
    _initialized()
    return llvm.Target.from_triple(DEVICE_TRIPLE).create_target_machine(cpu=target, opt=opt)


@functools.cache
def host_machine() -> llvm.TargetMachine:
    """The host machine for optimization pipelines; never give it to an execution engine."""
    return new_host_machine()


def new_host_machine() -> llvm.TargetMachine:
    """A fresh host machine: MCJIT takes ownership of (and frees) the one it is given."""
    _initialized()
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm.Target.from_default_triple().create_target_machine(opt=2)


def device_layout() -> str:
    return str(device_machine().target_data)


def host_triple() -> str:
    return llvm.get_process_triple()
