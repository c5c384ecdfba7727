"""`<function>_<index>_dispatch_auto`: the dispatcher that also picks the program parameters.

    <function>_<index>_auto <function>_<index>_dispatch_auto(<the dispatcher's arguments less the tuned ones>);

It reads the device once (cached per device): its SMs, clock, memory clock and bus width
(bandwidth = 2 x memory clock x bus width, DDR), the arithmetic lanes per SM of its compute
capability (machine/devices.py's table, printed here), each kernel's attributes. Then for every
candidate of the tuned parameters (search.py: the same values, in the same order):
the schedule's facts, then every case whose kernel fits the device there
(`<function>_<index>_select` with probe set and the case alone: the dispatcher's second pass),
the blocks resident per SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor, nvcc's registers)
and the model's time (tuning/time_model.py's FORMULA, printed once per file as
`parakern_model_time`), and the share of the serial program's iterations the candidate runs
(`<function>_<index>_coverage`, tuning/coverage.py: a grid that rounds a tuned division down
leaves points out). It launches the fastest per point computed (case and parameters), among
the candidates that compute every point wherever one does, as tune's `pick`, and returns what
it chose: `status` (the case launched, or PARAKERN_NO_CASE_FITS / PARAKERN_CUDA_ERROR), each
tuned parameter, the predicted seconds, the share it computes.
"""
from __future__ import annotations

import sympy
from sympy.printing.c import C99CodePrinter

from parakern.codegen.cprint import INDENT, CodegenError, Names, sym_c, unused
from parakern.dispatch import TIE
from parakern.tuning.space import space
from parakern.codegen.tree_dispatcher import (EMPTY, REFUSED, _host_type, dispatcher_arguments, facts_c, forwarded,
                                         precondition, select_name)
from parakern.codegen.kernel_source import kernel_name, signature
from parakern.machine.devices import CC_LIMITS
from parakern.analysis.rebuild import used_names
from parakern.tuning import coverage, time_model

MODEL_DEVICE = "parakern_model_device"
MODEL_TIME = "parakern_model_time"
CEIL_DIV = "PARAKERN_CEIL_DIV"
READ_DEVICE = "parakern_read_model_device"


def auto_name(schedule) -> str:
    return f"{schedule.function}_{schedule.index}_dispatch_auto"


def choice_type(schedule) -> str:
    return f"{schedule.function}_{schedule.index}_auto"


def _tuned(schedule) -> tuple:
    return space(schedule, {})


def _tie() -> float:
    return TIE


def auto_arguments(schedule) -> list[str]:
    """The dispatcher's arguments less the tuned parameters, in the same order."""
    names, _ = _tuned(schedule)
    return dispatcher_arguments(schedule, set(names))


def prototype(tree) -> str:
    """The choice's struct and dispatch_auto's declaration."""
    s = tree.schedule
    names, lists = _tuned(s)
    fields = [f"    long long {n};   /* chosen among {', '.join(map(str, values))} */"
              for n, values in zip(names, lists)]
    lines = [f"/* {s.id}: what {auto_name(s)} chose: status is the case launched (from 1),",
             " * PARAKERN_NO_CASE_FITS (no candidate fits, nothing launched), PARAKERN_INVALID_VALUES (every",
             " * candidate fails an assertion or a divisor), PARAKERN_NOTHING_TO_DO (every other one leaves its",
             " * meta_for empty) or PARAKERN_CUDA_ERROR. */",
             f"typedef struct {choice_type(s)} {{", "    int status;"] + fields + \
            ["    double predicted_seconds;   /* the time model's, for one launch */",
             "    double covered;   /* the share of the serial program's iterations it computes: 1 where all */",
             f"}} {choice_type(s)};",
             f"/* {s.id}: picks {', '.join(names) or 'nothing'} by the time model on the current device and launches "
             "the best case */",
             signature(f"{choice_type(s)} {auto_name(s)}", auto_arguments(s)) + ";"]
    return "\n".join(lines)


def model_support() -> str:
    """Once per file: the device facts the model reads, and FORMULA as a C function."""
    lanes = []
    for (major, minor), lim in sorted(CC_LIMITS.items(), reverse=True):
        lanes.append(f"    if (prop.major > {major} || (prop.major == {major} && prop.minor >= {minor})) {{ "
                     f"m->lanes32 = {lim.fp32_lanes_per_sm}; m->lanes64 = {lim.fp64_lanes_per_sm}; }}")
    lanes = [lanes[0]] + [INDENT + "else" + line[3:] for line in lanes[1:]]
    first = next(iter(CC_LIMITS.values()))
    inputs = ", ".join(f"double {n}" for n in time_model.QUANTITY_NAMES)
    device_locals = [f"    const double {n} = d->{n};" for n in time_model.DEVICE_NAMES]
    return "\n".join([
        "#ifndef PARAKERN_MODEL_SUPPORT",
        "#define PARAKERN_MODEL_SUPPORT",
        "/* What parakern's time model reads of a device (tuning/time_model.py). */",
        f"struct {MODEL_DEVICE} {{",
        "    " + "; ".join(f"double {n}" for n in time_model.DEVICE_NAMES) + ";",
        "    int device;   /* which device these are: what a kernel's blocks per SM are remembered for */",
        "};",
        "",
        "/* n/d rounded up for d > 0 (products of block sizes), whatever the sign of n: a quantity of the",
        " * model is a fraction rounded up. A macro: nvcc warns of a function a file does not call. */",
        f"#define {CEIL_DIV}(n, d) ((n) >= 0 ? ((n) + (d) - 1) / (d) : -((-(n)) / (d)))",
        "",
        "/* SMs, clocks, bus width and L2 size from the device; arithmetic results per clock per SM by compute",
        " * capability (machine/devices.py, the Programming Guide's throughput table). 0 when a query fails. */",
        f"static int {READ_DEVICE}(int device, const cudaDeviceProp &prop, {MODEL_DEVICE} *m)",
        "{",
        "    int clock_khz, memory_khz, bus_bits;",
        "    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device) != cudaSuccess ||",
        "        cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||",
        "        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess)",
        "        return 0;",
        "    m->device = device;",
        "    m->sms = prop.multiProcessorCount;",
        "    m->bandwidth = 2.0 * memory_khz * 1000.0 * (bus_bits / 8);   /* double data rate */",
        "    m->clock = clock_khz * 1000.0;",
        "    m->threads_per_sm = prop.maxThreadsPerMultiProcessor;",
        "    m->l2_bytes = prop.l2CacheSize;",
        f"    m->shared_bytes_per_clock = {first.shared_memory_bytes_per_clock};",
        *(f"    m->{name} = {value!r};" for name, value in time_model.CONSTANTS.items()),
        f"    m->lanes32 = {first.fp32_lanes_per_sm}; m->lanes64 = {first.fp64_lanes_per_sm};",
        *lanes,
        "    return 1;",
        "}",
        "",
        "/* The predicted seconds of one launch (tuning/time_model.py FORMULA, the same text). */",
        f"static double {MODEL_TIME}(const {MODEL_DEVICE} *d, {inputs})",
        "{",
        *device_locals,
        *time_model.formula_c(INDENT),
        "    return ranked;   /* what the candidates are compared by: time, ties broken (tuning/time_model.py) */",
        "}",
        "#endif"])


class _RealPrinter(C99CodePrinter):
    """sympy's C99 printer, with C's truncating / and % of the count-down loops' trip counts
    (cdiv, cmod: `for (i = n - 1 - t; i >= 0; i -= G*B)`) on doubles."""

    def _print_cdiv(self, expr):
        return "trunc((%s) / (%s))" % tuple(self._print(a) for a in expr.args)

    def _print_cmod(self, expr):
        return "fmod(%s, %s)" % tuple(self._print(a) for a in expr.args)


def _quantity(name: str, value) -> str:
    """`const long long name = ...;`: the quantity rounded up, as time_model.at rounds it. A sum of
    fractions (a staged tile's bytes over a block's rows, 49344/3 + 16384) is one fraction
    divided once, rounding up (C's / on each term had made it 32830 for Python's 32832); where
    no integer form exists (a mean of a loop from i % 2 in steps of 2: n/2 - i%2/2), the
    ceiling of the double, sympy's real number, less what the double's rounding may add."""
    value = sympy.sympify(value)
    numerator, denominator = sympy.fraction(sympy.together(value))
    try:
        if denominator == 1:
            return f"const long long {name} = {sym_c(value)};"
        return f"const long long {name} = {CEIL_DIV}({sym_c(numerator)}, {sym_c(denominator)});"
    except (ValueError, TypeError, CodegenError):
        real = value.xreplace({x: sympy.Symbol(f"((double){x.name})") for x in value.free_symbols})
        text = _RealPrinter().doprint(real)
        return f"const double {name} = ceil(({text}) * (1.0 - 1e-12));"


def time_case_name(schedule, k: int) -> str:
    """`<function>_<index>_time_case<k>`: case k's predicted seconds, -1 where no block of it can be
    resident (its C arguments: the model device, then the schedule's parameters)."""
    return f"{schedule.function}_{schedule.index}_time_case{k}"


def _time_case(tree, k: int, q: time_model.Quantities, names: Names) -> list[str]:
    """The model's time of case k at the parameters (-1 when no block can be resident). The blocks
    per SM are asked once per device, block size and shared memory (the dispatcher asks at every
    call: cudaOccupancyMaxActiveBlocksPerMultiprocessor, the slow part, is not repeated)."""
    s = tree.schedule
    v = {w: names.fresh(w) for w in ("dev", "resident", "memo_device", "memo_threads", "memo_shared",
                                     "memo_resident")}
    args = [f"const {MODEL_DEVICE} *{v['dev']}"] + [f"{_host_type(p.ctype)} {p.name}" for p in s.params]
    sizes = q.expressions()
    local = {n: names.fresh(n) for n in sizes}
    body = [_quantity(local[n], e) for n, e in sizes.items()]
    threads, shared = f"(int){local['threads']}", f"(size_t){local['shared_bytes']}"
    body += ["/* blocks per SM of this kernel: asked once per device and launch shape, per host thread */",
             f"static thread_local int {v['memo_device']} = -1, {v['memo_resident']} = 0;",
             f"static thread_local int {v['memo_threads']} = 0;",
             f"static thread_local size_t {v['memo_shared']} = 0;",
             f"if ({v['memo_device']} != {v['dev']}->device || {v['memo_threads']} != {threads}"
             f" || {v['memo_shared']} != {shared}) {{",
             INDENT + f"int {v['resident']};",
             INDENT + f"if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&{v['resident']}, {kernel_name(s, k)}, "
             f"{threads}, {shared}) != cudaSuccess)",
             INDENT * 2 + "return -1.0;",
             INDENT + f"{v['memo_device']} = {v['dev']}->device;",
             INDENT + f"{v['memo_threads']} = {threads};",
             INDENT + f"{v['memo_shared']} = {shared};",
             INDENT + f"{v['memo_resident']} = {v['resident']};",
             "}",
             f"if ({v['memo_resident']} < 1)",
             INDENT + "return -1.0;",
             f"return {MODEL_TIME}({v['dev']}, " + ", ".join(
                 f"(double){v['memo_resident']}" if n == "resident" else f"(double){local[n]}"
                 for n in time_model.QUANTITY_NAMES) + ");"]
    head = signature(f"static double {time_case_name(s, k)}", args)
    return [f"/* {s.id}, case {k}: the time model (tuning/time_model.py) */", head, "{"] + \
        [INDENT + line for line in unused(args, body) + body] + ["}"]


def time_cases(tree) -> str:
    """The model's time of every case (`time_case_name`); CodegenError when a quantity has no C form."""
    s = tree.schedule
    taken = used_names(s) | {"R_B", "Z", "T"}
    try:
        quantities = time_model.tree_quantities(tree)
        return "\n\n".join("\n".join(_time_case(tree, k, q, Names(taken))) for k, q in enumerate(quantities, 1))
    except CodegenError:
        raise
    except (TypeError, ValueError) as exc:
        raise CodegenError(f"the time model has no C form here: {exc}", s.keyword_span) from exc


def _coverage(s, covers: coverage.Coverage, names: Names) -> list[str]:
    """The share of the serial program's iterations the parameters run (tuning/coverage.py):
    each group's count and reference as the same integers, the same doubles in the same order."""
    v = {w: names.fresh(w) for w in ("covered",)}
    args = [f"{_host_type(p.ctype)} {p.name}" for p in s.params]
    body = [f"double {v['covered']} = 1.0;"]
    for g in covers.groups:
        count, reference = names.fresh("count"), names.fresh("reference")
        body += [f"{{   /* loops {', '.join(g.loops)} */",
                 INDENT + _quantity(count, g.count), INDENT + _quantity(reference, g.reference),
                 INDENT + f"if ({reference} > 0)",
                 INDENT * 2 + f"{v['covered']} *= fmin(1.0, fmax(0.0, (double){count} / (double){reference}));",
                 "}"]
    body.append(f"return {v['covered']};")
    head = signature(f"static double {coverage_name(s)}", args)
    return [f"/* {s.id}: the share of the serial program's iterations these values run (tuning/coverage.py) */",
            head, "{"] + [INDENT + line for line in unused(args, body) + body] + ["}"]


def coverage_name(schedule) -> str:
    return f"{schedule.function}_{schedule.index}_coverage"


def auto_source(tree) -> str:
    """The coverage of the iteration space, then dispatch_auto (after `time_cases`, which the
    default dispatcher prints before it)."""
    s = tree.schedule
    taken = used_names(s) | {"R_B", "Z", "T"}
    quantities = time_model.tree_quantities(tree)
    parts = []
    names_, lists = _tuned(s)
    covers = coverage.coverage(s, names_)   # every tuned parameter: none is given here
    if covers.groups:
        parts.append("\n".join(_coverage(s, covers, Names(taken))))
    n = Names(taken)
    v = {w: n.fresh(w) for w in ("chosen", "prop", "dev", "known", "device", "best", "found", "k", "t", "read",
                                 "got", "best_case", "valid", "nonempty", "covered", "key", "partial",
                                 "best_partial", "best_time", "best_covered")}
    tuned = set(names_)
    count = len(tree.cases)
    body = [f"{choice_type(s)} {v['chosen']};",
            f"memset(&{v['chosen']}, 0, sizeof {v['chosen']});",
            f"{v['chosen']}.status = PARAKERN_NO_CASE_FITS;",
            "/* read once per device and host thread */",
            f"static thread_local cudaDeviceProp {v['prop']};",
            f"static thread_local {MODEL_DEVICE} {v['dev']};",
            f"static thread_local int {v['known']} = -1;",
            f"int {v['device']};",
            f"if (cudaGetDevice(&{v['device']}) != cudaSuccess) {{",
            INDENT + f"{v['chosen']}.status = PARAKERN_CUDA_ERROR;", INDENT + f"return {v['chosen']};", "}",
            f"if ({v['device']} != {v['known']}) {{",
            INDENT + f"if (cudaGetDeviceProperties(&{v['prop']}, {v['device']}) != cudaSuccess ||",
            INDENT + f"    !{READ_DEVICE}({v['device']}, {v['prop']}, &{v['dev']})) {{",
            INDENT * 2 + f"{v['chosen']}.status = PARAKERN_CUDA_ERROR;", INDENT * 2 + f"return {v['chosen']};",
            INDENT + "}"]
    for k, q in enumerate(quantities, 1):   # the occupancy of a tile above 48 KiB needs the opt-in
        if sympy.sympify(q.shared_bytes) != 0:
            attribute = "cudaFuncAttributeMaxDynamicSharedMemorySize"
            body += [INDENT + f"if (cudaFuncSetAttribute({kernel_name(s, k)}, {attribute},",
                     INDENT + f"                         (int){v['prop']}.sharedMemPerBlockOptin) != cudaSuccess) {{",
                     INDENT * 2 + f"{v['chosen']}.status = PARAKERN_CUDA_ERROR;",
                     INDENT * 2 + f"return {v['chosen']};", INDENT + "}"]
    body += [INDENT + f"{v['known']} = {v['device']};", "}"]
    index = {name: n.fresh(f"i_{name}") for name in names_}
    keep = {name: n.fresh(f"best_{name}") for name in names_}
    table = {name: n.fresh(f"{name}_values") for name in names_}
    for name, values in zip(names_, lists):
        body.append(f"static const long long {table[name]}[] = {{{', '.join(map(str, values))}}};")
    body += [f"double {v['best']} = 0.0;", f"double {v['best_time']} = 0.0;", f"double {v['best_covered']} = 1.0;",
             f"int {v['best_partial']} = 0;", f"int {v['found']} = 0;", f"int {v['best_case']} = 0;",
             f"int {v['valid']} = 0;", f"int {v['nonempty']} = 0;"] + \
        [f"long long {keep[name]} = 0;" for name in names_]
    loops, depth = [], 0
    for name, values in zip(names_, lists):
        loops += [INDENT * depth + f"for (int {index[name]} = 0; {index[name]} < {len(values)}; ++{index[name]}) {{",
                  INDENT * (depth + 1) + f"const long long {name} = {table[name]}[{index[name]}];"]
        depth += 1
    inner = INDENT * depth
    refused, empty = precondition(s, REFUSED), precondition(s, EMPTY)
    rest = [f for f in precondition(s, tuple(dict.fromkeys(x.origin for x in s.facts if x.origin not in
                                                            REFUSED + EMPTY)))
            if f not in refused + empty]
    call = forwarded(s, lambda x: f"({x.ctype}){x.name}" if x.name in tuned else None)
    time_args = [f"&{v['dev']}"] + [p.name for p in s.params]
    step = []   # as the dispatcher's preconditions: a candidate refused, or with nothing to run
    if refused:
        step += [f"if (!({facts_c(refused)}))", INDENT + "continue;  /* a divisor, a shift, an assertion */"]
    step += [f"{v['valid']} = 1;"]
    if empty:
        step += [f"if (!({facts_c(empty)}))", INDENT + "continue;  /* an empty meta_for */"]
    step += [f"{v['nonempty']} = 1;"]
    if rest:
        step += [f"if (!({facts_c(rest)}))", INDENT + "continue;"]
    covered = f"{coverage_name(s)}({', '.join(p.name for p in s.params)})" if covers.groups else "1.0"
    step += [f"const double {v['covered']} = {covered};",
             f"const int {v['partial']} = {v['covered']} < 1.0;   /* it leaves points of the iteration space out */"]
    per_case = [f"const int {v['got']} = {select_name(s)}({', '.join(['true', v['k']] + call)});",
                f"if ({v['got']} == PARAKERN_CUDA_ERROR) {{",
                INDENT + f"{v['chosen']}.status = PARAKERN_CUDA_ERROR;", INDENT + f"return {v['chosen']};", "}",
                f"if ({v['got']} != {v['k']})", INDENT + "continue;  /* its kernel does not fit there */",
                f"double {v['t']} = -1.0;",
                f"switch ({v['k']}) {{"]
    per_case += [f"case {k}: {v['t']} = {time_case_name(s, k)}({', '.join(time_args)}); break;"
                 for k in range(1, count + 1)]
    per_case += ["}", f"if ({v['t']} < 0.0)", INDENT + "continue;",
                 "/* time per point computed; one that computes every point first; ties: the first */",
                 f"const double {v['key']} = {v['covered']} > 0.0 ? {v['t']} / {v['covered']} : HUGE_VAL;",
                 f"if (!{v['found']} || ({v['partial']} != {v['best_partial']} ? !{v['partial']} : "
                 f"{v['key']} < {v['best']} * (1.0 - {_tie()!r}))) {{",
                 INDENT + f"{v['found']} = 1;", INDENT + f"{v['best']} = {v['key']};",
                 INDENT + f"{v['best_time']} = {v['t']};", INDENT + f"{v['best_covered']} = {v['covered']};",
                 INDENT + f"{v['best_partial']} = {v['partial']};",
                 INDENT + f"{v['best_case']} = {v['k']};"] + \
        [INDENT + f"{keep[name]} = {name};" for name in names_] + ["}"]
    step += [f"for (int {v['k']} = 1; {v['k']} <= {count}; ++{v['k']}) {{  /* every case whose kernel fits */"] + \
        [INDENT + line for line in per_case] + ["}"]
    if not names_:
        step = ["do {"] + [INDENT + line for line in step] + ["} while (0);"]
    body += loops + [inner + line for line in step]
    body += [INDENT * d + "}" for d in reversed(range(depth))]
    final = forwarded(s, lambda x: f"({x.ctype}){keep[x.name]}" if x.name in tuned else None)
    body += [f"if (!{v['found']}) {{  /* every candidate refused; or none with something to run */",
             INDENT + f"if (!{v['valid']})", INDENT * 2 + f"{v['chosen']}.status = PARAKERN_INVALID_VALUES;",
             INDENT + f"else if (!{v['nonempty']})", INDENT * 2 + f"{v['chosen']}.status = PARAKERN_NOTHING_TO_DO;",
             INDENT + f"return {v['chosen']};", "}"] + \
        [f"{v['chosen']}.{name} = {keep[name]};" for name in names_] + \
        [f"{v['chosen']}.predicted_seconds = {v['best_time']};",
         f"{v['chosen']}.covered = {v['best_covered']};",
         f"{v['chosen']}.status = {select_name(s)}("
         f"{', '.join(['false', v['best_case']] + final)});",
         f"return {v['chosen']};"]
    head = signature(f"{choice_type(s)} {auto_name(s)}", auto_arguments(s))
    parts.append("\n".join([head, "{"] + [INDENT + line for line in body] + ["}"]))
    return "\n\n".join(parts)


def auto_code(tree) -> "tuple[str, str]":
    """(prototype, source) of dispatch_auto; CodegenError when a quantity has no C form."""
    try:
        return prototype(tree), auto_source(tree)
    except CodegenError:
        raise
    except (TypeError, ValueError) as exc:
        raise CodegenError(f"no dispatch_auto: {exc}", tree.schedule.keyword_span) from exc

