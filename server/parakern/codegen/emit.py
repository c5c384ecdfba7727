"""One self-contained CUDA translation unit for an analysed file.

Layout: a header comment (source file and target, no date so that golden
files stay stable), the contract preamble (the CPU emulation of verify/
defines PARAKERN_CPU and the two macros itself), the dispatchers'
prototypes, the kernels, then the host: the time model (once per file) and
each case's time, the tree's dispatcher, the default one (the model's fastest
case), then dispatch_tuned and dispatch_auto. A schedule with errors (or
one whose CUDA cannot be generated) gets no code; the reason is a
diagnostic.
"""
from __future__ import annotations

from dataclasses import dataclass

from parakern.process import interrupts
from parakern.analysis.fixed import case_points, fixed_points
from parakern.codegen.auto import auto_code, model_support, time_cases
from parakern.codegen.cprint import CodegenError
from parakern.codegen.fastest import default_source
from parakern.codegen.tree_dispatcher import dispatcher_name, dispatcher_source, prototype
from parakern.codegen.kernel_source import kernel_source
from parakern.codegen.trace import Sites
from parakern.codegen import tuned as tuned_dispatcher
from parakern.source.diagnostics import Diagnostic, Span, error, warning
from parakern.ir.types import LoweringError
from parakern.model import Schedule
from parakern.codegen import status
from parakern.pipeline import Analysis, ScheduleResult
from parakern.source.ctext import in_comment

PREAMBLE = """\
#ifndef PARAKERN_CPU
#include <cuda_runtime.h>
#endif
#ifndef PARAKERN_LAUNCH
#define PARAKERN_LAUNCH(kernel, grid, block, shared, ...) kernel<<<(grid), (block), (shared)>>>(__VA_ARGS__)
#endif
#ifndef PARAKERN_DYNAMIC_SHARED
#define PARAKERN_DYNAMIC_SHARED(name) extern __shared__ __align__(16) unsigned char name[]
#endif
""" + status.defines()
INCLUDES = "#include <math.h>\n#include <string.h>\n"


@dataclass(frozen=True)
class ScheduleCode:
    schedule: Schedule
    prototype: str                 # comment + declaration of the dispatcher
    kernels: tuple[str, ...]       # one per case, in the tree's order (its compile-time instances after it)
    dispatcher: str                # each case's time, the try functions, the tree's and the default dispatcher
    auto_prototype: str = ""       # dispatch_auto's result type and declaration ('' when it has none)
    auto: str = ""                 # the time model of each case and dispatch_auto
    tuned_prototype: str = ""      # dispatch_tuned's declaration
    tuned: str = ""                # dispatch_tuned: the case measured fastest (codegen/tuned.py)
    instances: tuple = ()          # per case, the points (analysis/fixed.py) of its compile-time instances
    no_auto: str = ""              # why dispatch_auto was left out ('' where it is there)
    modelled: bool = False         # the cases' times are printed: the default dispatcher reads the model


@dataclass(frozen=True)
class Emitted:
    text: str
    schedules: tuple[ScheduleCode, ...]
    diagnostics: tuple[Diagnostic, ...]   # schedules the generator had to skip (besides the analysis')


def schedule_code(result: ScheduleResult, fixed: tuple = (), trace: "Sites | None" = None) -> ScheduleCode:
    """The CUDA of one analysed schedule; CodegenError / LoweringError when it cannot be printed.
    fixed: values of program parameters chosen for compile-time instances (dicts, e.g. from
    `emit --fix`; analysis/fixed.py adds the asserted ones). trace: every element reference
    printed traced (codegen/trace.py; verify's race check)."""
    tree = result.tree
    if tree is None:
        raise CodegenError("this meta_schedule has errors", result.schedule.keyword_span)
    n = len(tree.cases)
    points = fixed_points(tree.schedule, tuple(fixed))
    instances = tuple(case_points(case, points) for case in tree.cases)
    if trace is not None:
        trace.schedule = tree.schedule.id
    kernels = tuple("\n\n".join([kernel_source(case, k, n, trace=trace)]
                                 + [kernel_source(case, k, n, trace=trace, fixed=p) for p in mine])
                    for (k, case), mine in zip(enumerate(tree.cases, 1), instances))
    no_auto, times = "", ""
    try:
        times = time_cases(tree) if tree.cases else ""
        auto_prototype, auto = ("", "") if not tree.cases else auto_code(tree)
    except CodegenError as exc:   # the kernels and the tree's dispatcher do not need it
        auto_prototype, auto, no_auto = "", "", exc.message
    dispatcher = "\n\n".join(part for part in (times, dispatcher_source(tree, instances),
                                                default_source(tree, bool(times), no_auto)) if part)
    tuned = tuned_dispatcher.tuned_source(tree, tuned_dispatcher.fingerprint(kernels))
    return ScheduleCode(tree.schedule, prototype(tree), kernels, dispatcher,
                        auto_prototype, auto, tuned_dispatcher.prototype(tree), tuned, instances, no_auto, bool(times))


def _generate(result: ScheduleResult, fixed: tuple = (), trace: "Sites | None" = None
              ) -> "tuple[ScheduleCode | None, Diagnostic | None]":
    if result.tree is None:
        return None, None  # the analysis already reported why
    try:
        code = schedule_code(result, fixed, trace)
        if code.no_auto:
            default = "" if code.modelled else f"; {dispatcher_name(result.schedule)} launches in the tree's order"
            return code, warning("PK030", f"no dispatch_auto for this meta_schedule ({code.no_auto}){default}; its "
                                          "kernels and the other dispatchers are written", result.schedule.keyword_span)
        return code, None
    except (CodegenError, LoweringError) as exc:
        where = exc.span if isinstance(exc.span, Span) else result.schedule.keyword_span
        return None, error("PK030", f"no CUDA can be generated for this meta_schedule: {exc.message}", where)
    except Exception as exc:  # a bug of the generator: one diagnostic, never a traceback for the user
        interrupts.reraise()
        return None, error("PK099", f"internal error while generating CUDA for this meta_schedule "
                           f"({type(exc).__name__}: {exc}); please report it with this file",
                           result.schedule.keyword_span)


def header(file: str, target: str) -> str:
    return f"""\
/*
 * Comprehensive parametric CUDA kernels generated by parakern from {in_comment(file)}
 * (registers counted for {target}). Regenerate with `parakern emit` rather than edit.
 *
 * Per meta_schedule: one __global__ kernel per case of its case tree, and a host
 * dispatcher that launches, of the cases whose compiled kernel fits the current device,
 * the one the time model predicts fastest there (dispatch_tree: the first whose
 * constraints hold, the paper's rule; dispatch_tuned: the case measured fastest there;
 * dispatch_auto: the time model's choice, block sizes included).
 *
 * Integer / and % are C's, which truncate. The analysis reads them as floor and mod:
 * the same for the non-negative parameters and loop variables that hypothesis (H1)
 * of the paper assumes, which is what every expression printed here relies on.
 */
"""


# Around the dispatchers' declarations (their definitions inherit it): C names, so that a host
# written in C (gcc) links with them, and the section can be copied into a header for C and C++.
C_LINKAGE = ('#ifdef __cplusplus\nextern "C" {\n#endif\n\n', '\n#ifdef __cplusplus\n}\n#endif\n')


def _assemble(parts: list[ScheduleCode], preamble: bool) -> str:
    chunks = [PREAMBLE + INCLUDES] if preamble else []
    if parts:
        chunks.append("/* ------------------------------------------------------------ dispatchers */\n\n"
                      + C_LINKAGE[0]
                      + "\n\n".join([p.prototype for p in parts] + [p.tuned_prototype for p in parts if p.tuned]
                                   + [p.auto_prototype for p in parts if p.auto])
                      + "\n" + C_LINKAGE[1])
        chunks.append("/* ------------------------------------------------------------ kernels */\n\n"
                      + "\n\n".join(k for p in parts for k in p.kernels) + "\n")
        chunks.append("/* ------------------------------------------------------------ host */\n\n"
                      + "\n\n".join(([model_support()] if any(p.modelled for p in parts) else [])
                                    + [p.dispatcher for p in parts]) + "\n")
        if any(p.tuned for p in parts):
            chunks.append("/* ------------------------------------------------------------ dispatch_tuned */\n\n"
                          + "\n\n".join([tuned_dispatcher.INCLUDES.rstrip("\n")]
                                        + ([tuned_dispatcher.cache_support()]
                                           if any(tuned_dispatcher.measures(p.tuned) for p in parts if p.tuned)
                                           else [])
                                        + [p.tuned for p in parts if p.tuned])
                          + "\n")
        if any(p.auto for p in parts):
            chunks.append("/* ------------------------------------------------------------ dispatch_auto */\n\n"
                          + "\n\n".join(p.auto for p in parts if p.auto) + "\n")
    return "\n".join(chunks)


def emit(analysis: Analysis, fixed: tuple = (), trace: "Sites | None" = None) -> Emitted:
    """fixed: dicts of program parameter values to emit compile-time instances for (each
    schedule takes the names it has; analysis/fixed.py). trace: the kernels printed traced."""
    parts, problems = [], []
    for result in analysis.results:
        code, problem = _generate(result, fixed, trace)
        if code is not None:
            parts.append(code)
        if problem is not None:
            problems.append(problem)
    text = header(analysis.file, analysis.options.target) + "\n" + _assemble(parts, preamble=True)
    return Emitted(text, tuple(parts), tuple(problems))


def emit_file(analysis: Analysis, fixed: tuple = (), trace: "Sites | None" = None) -> str:
    """The whole translation unit (schedules that cannot be generated are left out)."""
    return emit(analysis, fixed, trace).text


def emit_schedule(result: ScheduleResult, preamble: bool = True, fixed: tuple = ()) -> str:
    """One schedule's prototype, kernels and dispatcher; with the preamble (which may be repeated:
    every line of it is guarded or an identical redefinition) it compiles on its own."""
    return _assemble([schedule_code(result, fixed)], preamble)
