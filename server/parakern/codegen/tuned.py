"""`<function>_<index>_dispatch_tuned`: the dispatcher that measures the cases once.

    int <function>_<index>_dispatch_tuned(<the arguments of <function>_<index>_dispatch>);

The arguments and results of `<function>_<index>_dispatch`. The first call with some
values of the parameters on a device (the variables of host loops around the schedule
aside: a time loop measures once) runs every case whose kernel fits the device
(`<function>_<index>_select` with probe set and the case alone: the dispatcher's second
pass), once untimed (a kernel's first launch also loads it), then timed with CUDA events up
to TIMED_RUNS times, until the timed runs add up to ENOUGH_MS, keeping the fastest run (one
run of a kernel of a few microseconds is mostly the launch's noise: on an H200 it picked a
Jacobi step 11 % slower than the fastest), each on the arrays as the call received them: the
arrays the schedule writes are copied in device memory first, and copied back before every
run and after the last. The fastest is remembered (TUNED_SLOTS parameter values per
dispatcher, the oldest replaced) and launched; later calls with those values launch it at once.

What cuDNN's benchmark mode does for its algorithms, for kernels called many times with
the same sizes: the tree's order (the paper's rule, `dispatch`) and the time model
(`dispatch_auto`) can both miss the fastest case of a given GPU (docs/bench/H100.md: the
staged case that the tree prefers is slower than an unstaged one on an H100 there). Every
case computes the same result, so any that fits may run. Where the size of a written array
is not visible (a pointer without its allocation), or the device has no memory for the
copies, it is the tree's dispatcher. A mutex keeps the table whole when host threads call it
at once.
"""
from __future__ import annotations

from parakern.codegen.cprint import INDENT, Names, sym_c
from parakern.codegen.tree_dispatcher import (dispatcher_arguments, dispatcher_name, forwarded, preconditions,
                                              select_name)
from parakern.codegen.kernel_source import signature
from parakern.launch import in_parameters
from parakern.analysis.rebuild import used_names

TUNED_SLOTS = 16
TIMED_RUNS = 5       # timed runs per case at most, after the untimed first one
ENOUGH_MS = 10       # fewer where these add up to this many milliseconds (long kernels: one)
INCLUDES = "#include <mutex>\n"


def tuned_name(schedule) -> str:
    """`<function>_<index>_dispatch_tuned`: the one place its name is made."""
    return f"{schedule.function}_{schedule.index}_dispatch_tuned"


def keyed_parameters(schedule) -> list:
    """The parameters whose values the measurement is kept for (host loop variables aside)."""
    return [p for p in schedule.params if p.name not in schedule.host_loops]


def copied_arrays(schedule) -> "list | None":
    """The arrays the schedule writes, restored around each measured run; None where one's
    size is not visible."""
    written = [a for a in schedule.arrays if a.written]
    return None if any(not a.dims for a in written) else written


def prototype(tree) -> str:
    s = tree.schedule
    lines = [f"/* {s.id}: launches the case measured fastest on this device for these parameter values",
             f" * (the first call with them runs every case that fits); returns as {dispatcher_name(s)} */",
             signature("int " + tuned_name(s), dispatcher_arguments(s)) + ";"]
    return "\n".join(lines)


def tuned_source(tree) -> str:
    s = tree.schedule
    head = signature("int " + tuned_name(s), dispatcher_arguments(s))
    forward = forwarded(s)
    tree_call = f"{dispatcher_name(s)}({', '.join(forward)})"
    arrays = copied_arrays(s)
    if not tree.cases or arrays is None:
        why = ("the tree has no case" if not tree.cases else
               "the size of " + ", ".join(f"'{a.name}'" for a in s.arrays if a.written and not a.dims)
               + " is not visible (a pointer): its copy cannot be made")
        return "\n".join([f"/* {s.id}: {why}; the tree's dispatcher decides */", head, "{",
                          INDENT + f"return {tree_call};", "}"])
    names = Names(used_names(s) | {"R_B", "Z", "T"})
    n = {w: names.fresh(w) for w in ("lock", "guard", "keys", "fastest", "filled", "next", "device", "key", "e",
                                    "k", "fits", "run", "start", "stop", "ms", "best", "best_ms", "status",
                                    "launched", "elapsed", "timed")}
    copies = {a.name: names.fresh(f"{a.name}_copy") for a in arrays}
    sizes = {a.name: names.fresh(f"{a.name}_bytes") for a in arrays}
    keyed = keyed_parameters(s)
    width = 1 + len(keyed)
    select = select_name(s)

    def call(probe: str, only: str) -> str:
        return f"{select}({', '.join([probe, only] + forward)})"

    def copied(towards_copy: bool) -> str:
        """C condition: every written array copied (to its copy, or back), each call succeeding."""
        return " || ".join(
            f"cudaMemcpy({copies[a.name] + ', ' + a.name if towards_copy else a.name + ', ' + copies[a.name]}, "
            f"{sizes[a.name]}, cudaMemcpyDeviceToDevice) != cudaSuccess" for a in arrays)

    def release(pad: str) -> list[str]:
        return [f"{pad}cudaFree({copies[a.name]});" for a in arrays] + \
            [f"{pad}if ({e}) cudaEventDestroy({e});" for e in (n["start"], n["stop"])]

    body = preconditions(s) + [   # refused values, or nothing to run: before any copy is made
            f"static std::mutex {n['lock']};",
            f"static long long {n['keys']}[{TUNED_SLOTS}][{width}];   /* device, "
            + (", ".join(p.name for p in keyed) or "no parameter") + " */",
            f"static int {n['fastest']}[{TUNED_SLOTS}];",
            f"static int {n['filled']} = 0, {n['next']} = 0;",
            f"std::lock_guard<std::mutex> {n['guard']}({n['lock']});",
            f"int {n['device']};",
            f"if (cudaGetDevice(&{n['device']}) != cudaSuccess)",
            INDENT + "return PARAKERN_CUDA_ERROR;",
            f"const long long {n['key']}[{width}] = {{" + ", ".join([n["device"]] + [f"(long long){p.name}"
                                                                      for p in keyed]) + "};",
            f"for (int {n['e']} = 0; {n['e']} < {n['filled']}; {n['e']}++)",
            INDENT + f"if (memcmp({n['keys']}[{n['e']}], {n['key']}, sizeof {n['key']}) == 0) {{",
            INDENT * 2 + f"const int {n['launched']} = {call('false', n['fastest'] + '[' + n['e'] + ']')};",
            INDENT * 2 + "/* 0: it does not fit at these values of the host loop's variables: the tree decides */",
            INDENT * 2 + f"return {n['launched']} != 0 ? {n['launched']} : {tree_call};",
            INDENT + "}",
            "/* the arrays the cases write, as they came: every run starts from them */"]
    for a in arrays:
        size = " * ".join(f"(size_t)({sym_c(in_parameters(d, s))})" for d in a.dims)
        body.append(f"const size_t {sizes[a.name]} = {size} * sizeof({a.ctype});")
        body.append(f"{a.ctype} *{copies[a.name]} = 0;")
    allocated = " || ".join(
        f"cudaMalloc((void **)&{copies[a.name]}, {sizes[a.name]}) != cudaSuccess" for a in arrays)
    body += [f"cudaEvent_t {n['start']} = 0, {n['stop']} = 0;",
             f"if ({allocated}",
             INDENT + f"|| cudaEventCreate(&{n['start']}) != cudaSuccess"
             f" || cudaEventCreate(&{n['stop']}) != cudaSuccess) {{",
             INDENT + "cudaGetLastError();   /* no memory for the copies: the tree decides */"]
    body += release(INDENT) + [INDENT + f"return {tree_call};", "}",
                               f"if ({copied(True)}) {{"] + release(INDENT) + \
        [INDENT + "return PARAKERN_CUDA_ERROR;", "}"]
    body += [f"int {n['best']} = 0;",
             f"float {n['best_ms']} = 0.0f;",
             f"int {n['status']} = 0;"]
    body += [f"for (int {n['k']} = 1; {n['k']} <= {len(tree.cases)} && {n['status']} >= 0; {n['k']}++) {{",
             INDENT + f"const int {n['fits']} = {call('true', n['k'])};",
             INDENT + f"if ({n['fits']} <= 0) {{   /* its kernel does not fit this device, or an error */",
             INDENT * 2 + f"{n['status']} = {n['fits']};",
             INDENT * 2 + "continue;",
             INDENT + "}",
             INDENT + f"float {n['ms']} = 0.0f, {n['timed']} = 0.0f;   /* the fastest timed run; all of them */",
             INDENT + f"for (int {n['run']} = 0; {n['run']} <= {TIMED_RUNS} && {n['status']} >= 0 "
             f"&& {n['timed']} < {ENOUGH_MS}.0f; {n['run']}++) {{"]
    body += [INDENT * 2 + f"if ({copied(False)}) {{",
             INDENT * 3 + f"{n['status']} = PARAKERN_CUDA_ERROR;",
             INDENT * 3 + "break;",
             INDENT * 2 + "}",
             INDENT * 2 + f"cudaEventRecord({n['start']});",
             INDENT * 2 + f"const int {n['launched']} = {call('false', n['k'])};",
             INDENT * 2 + f"cudaEventRecord({n['stop']});",
             INDENT * 2 + f"float {n['elapsed']} = 0.0f;",
             INDENT * 2 + f"if ({n['launched']} <= 0 || cudaEventSynchronize({n['stop']}) != cudaSuccess",
             INDENT * 3 + f"|| cudaEventElapsedTime(&{n['elapsed']}, {n['start']}, {n['stop']}) != cudaSuccess)",
             INDENT * 3 + f"{n['status']} = {n['launched']} < 0 ? {n['launched']} : PARAKERN_CUDA_ERROR;",
             INDENT * 2 + f"else if ({n['run']} > 0) {{   /* the first run loads the kernel: untimed */",
             INDENT * 3 + f"{n['ms']} = {n['run']} == 1 || {n['elapsed']} < {n['ms']} ? {n['elapsed']} : {n['ms']};",
             INDENT * 3 + f"{n['timed']} += {n['elapsed']};",
             INDENT * 2 + "}",
             INDENT + "}",
             INDENT + f"if ({n['status']} >= 0 && ({n['best']} == 0 || {n['ms']} < {n['best_ms']})) {{",
             INDENT * 2 + f"{n['best']} = {n['k']};",
             INDENT * 2 + f"{n['best_ms']} = {n['ms']};",
             INDENT + "}",
             "}"]
    body += [f"if ({copied(False)})", INDENT + f"{n['status']} = PARAKERN_CUDA_ERROR;"] + release("")
    body += [f"if ({n['status']} < 0)",
             INDENT + f"return {n['status']};",
             f"if ({n['best']} == 0)",
             INDENT + f"return {tree_call};   /* no case fits by itself: the tree's answer */",
             f"memcpy({n['keys']}[{n['next']}], {n['key']}, sizeof {n['key']});",
             f"{n['fastest']}[{n['next']}] = {n['best']};",
             f"{n['next']} = ({n['next']} + 1) % {TUNED_SLOTS};",
             f"if ({n['filled']} < {TUNED_SLOTS})",
             INDENT + f"{n['filled']}++;",
             f"return {call('false', n['best'])};"]
    comment = [f"/* {s.id}: the case measured fastest here (codegen/tuned.py); the first call with new values",
               f" * runs every case that fits, once untimed and up to {TIMED_RUNS} times timed (its fastest run),",
               " * each from a copy of the arrays the cases write */"]
    return "\n".join(comment + [head, "{"] + [INDENT + line if line else line for line in body] + ["}"])
