"""CUDA from case trees: per case a readable kernel, its launch, and a host dispatcher.

    emit_file(analysis) -> str           the .cu of a whole file (`parakern emit`)
    emit_schedule(result) -> str         one schedule, self-contained (the editor's code action)
    emit(analysis) -> Emitted            the text, per-schedule parts and generator diagnostics
    kernel_source(case, k) -> str        case k's __global__ function and its comment
    launch_snippet(case, name) -> str    the launch as a CUDA programmer writes it (reports)
    case_ptx(case) -> str                the PTX its registers were counted on
"""
from parakern.codegen.cprint import CodegenError
from parakern.codegen.tree_dispatcher import dispatcher_name, dispatcher_source, prototype
from parakern.codegen.emit import Emitted, ScheduleCode, emit, emit_file, emit_schedule, schedule_code
from parakern.codegen.kernel_source import case_ptx, kernel_name, kernel_source, launch_snippet, register_cap

__all__ = ["CodegenError", "Emitted", "ScheduleCode", "case_ptx", "dispatcher_name",
           "dispatcher_source", "emit", "emit_file", "emit_schedule", "kernel_name", "kernel_source",
           "launch_snippet", "prototype", "register_cap", "schedule_code"]
