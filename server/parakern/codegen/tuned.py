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

Where the environment variable PARAKERN_TUNED_CACHE names a file, what was measured is kept there
too (as Kernel Tuner and Triton keep theirs), so that a second process launches at once: one line
per measurement, keyed by the dispatcher, the fingerprint of its kernels (`fingerprint`: another
generation of the kernels measures again), the device's name and compute capability and the
parameter values. At a call with new values the file is read first; a case it keeps that fits
is launched without measuring. A file that is not one of these (foreign) or has a line that is
not a measurement (corrupt) is ignored with one message on stderr, and never written.

What cuDNN's benchmark mode does for its algorithms, for kernels called many times with
the same sizes: the tree's order (the paper's rule) and the time model (the default
dispatcher, `dispatch_auto`) can both miss the fastest case of a given GPU. Every case computes
the same result, so any that fits may run. Where the size of a written array is not visible (a
pointer without its allocation), or the device has no memory for the copies, it is the default
dispatcher. A mutex keeps the table whole when host threads call it at once.
"""
from __future__ import annotations

import hashlib

from parakern.codegen.cprint import INDENT, Names, sym_c
from parakern.codegen.tree_dispatcher import (dispatcher_arguments, dispatcher_name, forwarded, preconditions,
                                              select_name)
from parakern.codegen.kernel_source import signature
from parakern.launch import in_parameters
from parakern.analysis.rebuild import used_names

TUNED_SLOTS = 16
TIMED_RUNS = 5       # timed runs per case at most, after the untimed first one
ENOUGH_MS = 10       # fewer where these add up to this many milliseconds (long kernels: one)
INCLUDES = "#include <mutex>\n#include <stdio.h>\n#include <stdlib.h>\n"
CACHE_VARIABLE = "PARAKERN_TUNED_CACHE"
CACHE_HEADER = "parakern dispatch_tuned measurements, version 1"
_LINE = 4096          # the longest line of the file the C reads (a longer one is corrupt)


def fingerprint(kernels) -> str:
    """What a measurement in the file is valid for: a hash of the schedule's kernels as emitted
    (every case, its compile-time instances): another generation of them measures again."""
    return hashlib.sha256("\n\n".join(kernels).encode("utf-8")).hexdigest()[:16]


def cache_support() -> str:
    """Once per file: reading and writing PARAKERN_TUNED_CACHE (see the module's docstring)."""
    return rf"""#ifndef PARAKERN_TUNED_SUPPORT
#define PARAKERN_TUNED_SUPPORT
/* dispatch_tuned's measurements kept in the file {CACHE_VARIABLE} names (codegen/tuned.py): its
 * first line is the header, then one line per measurement, fields separated by tabs: dispatcher,
 * kernels' fingerprint, device name, compute capability, parameter values (commas), case. */
#define PARAKERN_TUNED_HEADER "{CACHE_HEADER}"

static void parakern_tuned_warn(const char *path, const char *why, int line)
{{
    static std::mutex lock;
    static bool warned = false;   /* once per process */
    std::lock_guard<std::mutex> guard(lock);
    if (warned)
        return;
    warned = true;
    if (line > 0)
        fprintf(stderr, "parakern: {CACHE_VARIABLE}=%s: line %d %s: the file is ignored (remove it, or name "
                "another, to keep measurements)\n", path, line, why);
    else
        fprintf(stderr, "parakern: {CACHE_VARIABLE}=%s %s: it is ignored\n", path, why);
}}

/* the device's name as the file keeps it: no tab, no line break */
static void parakern_tuned_device(char *out, size_t size, const char *name)
{{
    size_t i = 0;
    for (; name[i] && i + 1 < size; i++)
        out[i] = (name[i] == '\t' || name[i] == '\n' || name[i] == '\r') ? ' ' : name[i];
    out[i] = 0;
}}

/* 1 where the file can be used (absent, empty, or every line a measurement), *found then the case
 * the last line with this key keeps (0: none); 0 for a foreign or corrupt file (said once). */
static int parakern_tuned_read(const char *path, const char *dispatcher, const char *fingerprint,
                               const char *device, int major, int minor, const long long *values, int count,
                               int *found)
{{
    *found = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;   /* none yet: the first measurement makes it */
    char line[{_LINE}];
    int number = 0;
    const char *why = 0;
    while (!why && fgets(line, sizeof line, f)) {{
        number++;
        size_t n = strlen(line);
        if (n == 0 || line[n - 1] != '\n') {{
            why = "is cut or too long: not a measurement";
            break;
        }}
        line[n - 1] = 0;
        if (strcmp(line, PARAKERN_TUNED_HEADER) == 0)
            continue;   /* the first line (two processes may each have begun the file) */
        if (number == 1) {{
            why = "is not a parakern dispatch_tuned file";
            break;
        }}
        char *field[6];
        int fields = 0;
        for (char *at = line; fields < 6; fields++) {{
            field[fields] = at;
            char *tab = strchr(at, '\t');
            if (!tab) {{
                fields++;
                break;
            }}
            *tab = 0;
            at = tab + 1;
        }}
        int file_major, file_minor, kept, used;
        if (fields != 6 || sscanf(field[3], "%d.%d%n", &file_major, &file_minor, &used) != 2 || field[3][used]
            || sscanf(field[5], "%d%n", &kept, &used) != 1 || field[5][used] || kept < 1) {{
            why = "is not a measurement";
            break;
        }}
        int same = strcmp(field[0], dispatcher) == 0 && strcmp(field[1], fingerprint) == 0
                   && strcmp(field[2], device) == 0 && file_major == major && file_minor == minor;
        int i = 0;
        for (char *at = field[4]; *at; i++) {{
            char *end;
            const long long v = strtoll(at, &end, 10);
            if (end == at || (*end && *end != ',')) {{
                why = "is not a measurement";
                break;
            }}
            same = same && i < count && v == values[i];
            at = *end ? end + 1 : end;
        }}
        if (!why && same && i == count)
            *found = kept;
    }}
    fclose(f);
    if (why) {{
        parakern_tuned_warn(path, why, number == 1 && strstr(why, "not a parakern") ? 0 : number);
        *found = 0;
        return 0;
    }}
    return 1;
}}

/* appends one measurement (the header first where the file is new); said once where it cannot */
static void parakern_tuned_write(const char *path, const char *dispatcher, const char *fingerprint,
                                 const char *device, int major, int minor, const long long *values, int count,
                                 int kept)
{{
    char record[{_LINE}];
    int n = snprintf(record, sizeof record, "%s\t%s\t%s\t%d.%d\t", dispatcher, fingerprint, device, major, minor);
    for (int i = 0; i < count && n > 0 && n < (int)sizeof record; i++)
        n += snprintf(record + n, sizeof record - n, i ? ",%lld" : "%lld", values[i]);
    if (n > 0 && n < (int)sizeof record)
        n += snprintf(record + n, sizeof record - n, "\t%d\n", kept);
    if (n <= 0 || n >= (int)sizeof record)
        return;
    FILE *f = fopen(path, "a");
    if (!f) {{
        parakern_tuned_warn(path, "cannot be written", 0);
        return;
    }}
    fseek(f, 0, SEEK_END);
    if (ftell(f) == 0)
        fputs(PARAKERN_TUNED_HEADER "\n", f);
    fputs(record, f);
    fclose(f);
}}
#endif"""


def measures(source: str) -> bool:
    """Whether a printed dispatch_tuned measures (and so reads and writes the cache file): one that
    cannot (no case, an array of unknown size) is the default dispatcher, and the file's functions
    would be unused (nvcc warns)."""
    return "parakern_tuned_read(" in source


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


def tuned_source(tree, kernels_fingerprint: str = "") -> str:
    """dispatch_tuned; kernels_fingerprint (`fingerprint` of the emitted kernels) keys what it
    keeps in PARAKERN_TUNED_CACHE's file."""
    s = tree.schedule
    head = signature("int " + tuned_name(s), dispatcher_arguments(s))
    forward = forwarded(s)
    tree_call = f"{dispatcher_name(s)}({', '.join(forward)})"
    arrays = copied_arrays(s)
    if not tree.cases or arrays is None:
        why = ("the tree has no case" if not tree.cases else
               "the size of " + ", ".join(f"'{a.name}'" for a in s.arrays if a.written and not a.dims)
               + " is not visible (a pointer): its copy cannot be made")
        return "\n".join([f"/* {s.id}: {why}; the default dispatcher decides */", head, "{",
                          INDENT + f"return {tree_call};", "}"])
    names = Names(used_names(s) | {"R_B", "Z", "T"})
    n = {w: names.fresh(w) for w in ("lock", "guard", "keys", "fastest", "filled", "next", "device", "key", "e",
                                    "k", "fits", "run", "start", "stop", "ms", "best", "best_ms", "status",
                                    "launched", "elapsed", "timed", "file", "prop", "name", "usable", "kept")}
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

    def remember(case: str) -> list[str]:
        """The case kept for these values in the table (the oldest entry replaced when full)."""
        return [f"memcpy({n['keys']}[{n['next']}], {n['key']}, sizeof {n['key']});",
                f"{n['fastest']}[{n['next']}] = {case};",
                f"{n['next']} = ({n['next']} + 1) % {TUNED_SLOTS};",
                f"if ({n['filled']} < {TUNED_SLOTS})",
                INDENT + f"{n['filled']}++;"]

    # what a line of the file is keyed by: the dispatcher, its kernels, the device, the values
    file_key = (f'"{tuned_name(s)}", "{kernels_fingerprint}", {n["name"]}, {n["prop"]}.major, {n["prop"]}.minor, '
                f"{n['key']} + 1, {len(keyed)}")

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
            INDENT * 2 + "/* 0: it does not fit at these values of the host loop's variables: the default decides */",
            INDENT * 2 + f"return {n['launched']} != 0 ? {n['launched']} : {tree_call};",
            INDENT + "}",
            f"/* a measurement kept in the file {CACHE_VARIABLE} names (by another process, maybe) */",
            f"const char *{n['file']} = getenv(\"{CACHE_VARIABLE}\");",
            f"char {n['name']}[256] = \"\";",
            f"int {n['usable']} = 0, {n['kept']} = 0;",
            f"cudaDeviceProp {n['prop']} = {{}};",
            f"if ({n['file']} && *{n['file']}) {{",
            INDENT + f"if (cudaGetDeviceProperties(&{n['prop']}, {n['device']}) != cudaSuccess)",
            INDENT * 2 + "return PARAKERN_CUDA_ERROR;",
            INDENT + f"parakern_tuned_device({n['name']}, sizeof {n['name']}, {n['prop']}.name);",
            INDENT + f"{n['usable']} = parakern_tuned_read({n['file']}, {file_key}, &{n['kept']});",
            "}",
            f"if ({n['kept']} > 0) {{",
            INDENT + f"const int {n['launched']} = {call('false', n['kept'])};",
            INDENT + f"if ({n['launched']} < 0)",
            INDENT * 2 + f"return {n['launched']};",
            INDENT + f"if ({n['launched']} == {n['kept']}) {{"]
    body += [INDENT * 2 + line for line in remember(n['kept'])] + [
             INDENT * 2 + f"return {n['launched']};",
             INDENT + "}",
             INDENT + "/* 0: the case kept does not fit here now: measured again */",
             "}",
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
             INDENT + "cudaGetLastError();   /* no memory for the copies: the default dispatcher decides */"]
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
             INDENT + f"return {tree_call};   /* no case fits by itself: the default dispatcher's answer */"]
    body += remember(n['best'])
    body += [f"if ({n['usable']})",
             INDENT + f"parakern_tuned_write({n['file']}, {file_key}, {n['best']});",
             f"return {call('false', n['best'])};"]
    comment = [f"/* {s.id}: the case measured fastest here (codegen/tuned.py); the first call with new values",
               f" * runs every case that fits, once untimed and up to {TIMED_RUNS} times timed (its fastest run),",
               " * each from a copy of the arrays the cases write */"]
    return "\n".join(comment + [head, "{"] + [INDENT + line if line else line for line in body] + ["}"])
