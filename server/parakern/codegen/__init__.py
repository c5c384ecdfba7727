"""CUDA from case trees: per case a readable kernel, its launch, and a host dispatcher.

    emit_file(analysis) -> str           the .cu of a whole file (`parakern emit`)
    emit_schedule(result) -> str         one schedule, self-contained (the editor's code action)
    emit(analysis) -> Emitted            the text, per-schedule parts and generator diagnostics
    kernel_source(case, k) -> str        case k's __global__ function and its comment
    launch_of(case) -> Launch            grid, block, dynamic shared bytes (sympy)
    case_ptx(case) -> str                the PTX its registers were counted on
"""
from parakern.codegen.cprint import CodegenError
from parakern.codegen.dispatcher import dispatcher_name, dispatcher_source, prototype
from parakern.codegen.emit import Emitted, ScheduleCode, emit, emit_file, emit_schedule, schedule_code
from parakern.codegen.kernel import case_ptx, kernel_name, kernel_source, register_cap
from parakern.codegen.launch import Launch, launch_of, launch_snippet

__all__ = ["CodegenError", "Emitted", "Launch", "ScheduleCode", "case_ptx", "dispatcher_name",
           "dispatcher_source", "emit", "emit_file", "emit_schedule", "kernel_name", "kernel_source",
           "launch_of", "launch_snippet", "prototype", "register_cap", "schedule_code"]
