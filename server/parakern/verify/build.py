"""The two programs compared: the serial C library and the GPU version on the CPU emulation.

serial.so   the file as written, `gcc -O1 -include metafork.h` (meta_for -> for).
serial_fma.so  the same with FMA contraction (fma.py): the spread between the two bounds the
            floating differences a computation's rounding alone explains (runner.SPREAD_FACTOR).
gpu_<i>.so  the same file with schedule i's `meta_schedule` statement replaced by a
            call of its dispatcher (arrays passed as flat pointers: in the emulation
            device memory is host memory), compiled with gcc, linked with the emitted
            .cu compiled by g++ against parakern_cpu.h, and a little glue that logs
            the case every dispatcher call returns. The glue calls the default
            dispatcher or the tree's (`parakern_verify_rule`), on the emulated GPU of
            `parakern_verify_profile` and `parakern_verify_device`.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from parakern.codegen import status
from parakern.codegen.tree_dispatcher import dispatcher_name, host_arguments, is_array, tree_name
from parakern.codegen.kernel_source import kernel_name
from parakern.verify.fma import fma_flags
from parakern.verify.runner import ENTRY
from parakern.source.ctext import in_string

HEADER = Path(__file__).with_name("parakern_cpu.h")
RACE_HEADER = Path(__file__).with_name("parakern_race.h")   # traced kernels: shadow memory
METAFORK_H = """/* metafork.h: MetaFork constructs as serial C */
#ifndef METAFORK_H
#define METAFORK_H
#define meta_for for
#define meta_schedule
#define cache(...)
#endif
"""
# A call of an undeclared function (assert without <assert.h>) is an error, as in gcc 14: under
# -w it built, and the library failed to load on the undefined symbol.
UNDECLARED_CALLS = "-Werror=implicit-function-declaration"
CFLAGS = ["-O1", "-fPIC", UNDECLARED_CALLS]
CXXFLAGS = ["-std=c++17", "-O1", "-fPIC", "-pthread", "-w"]
FMA_FLAGS = fma_flags()

LOG_SIZE = 4096
ARGUMENTS_LOGGED = 64     # the dispatcher calls whose scalar arguments are kept (points.host_check)


class ToolMissing(RuntimeError):
    """gcc or g++ is not on PATH."""


class BuildError(RuntimeError):
    def __init__(self, what: str, output: str):
        super().__init__(f"{what} failed to compile")
        self.what, self.output = what, output

    def excerpt(self, lines: int = 25) -> str:
        kept = [line for line in self.output.splitlines() if line.strip()]
        return "\n".join(kept[:lines])


def tools() -> tuple[str, str]:
    """Paths of gcc and g++ (ToolMissing names the first one missing)."""
    found = []
    for name in ("gcc", "g++"):
        path = shutil.which(name)
        if path is None:
            raise ToolMissing(f"{name} not found on PATH: the CPU emulation (verify, profile --emulate) "
                              "compiles the serial C and the emulated CUDA with gcc and g++")
        found.append(path)
    return found[0], found[1]


def run_compiler(command: list, what: str, cwd: Path) -> None:
    """Runs a compiler in `cwd`, the directory of its caller's own that the caller removes. Its
    temporaries (g++'s .s, collect2's files) go to a folder of `cwd` (TMPDIR), never to the
    user's TMPDIR, so that a compile cut short (the caller killed, even by SIGKILL) leaves them
    where they are removed; it runs in a process group of its own, killed whole when the
    caller is interrupted (SIGTERM, SIGINT) or the compile times out: killing the driver alone
    left its cc1plus writing a .s that nobody removed."""
    temporaries = tempfile.mkdtemp(prefix=".tmp-", dir=cwd)
    try:
        with subprocess.Popen(command, cwd=cwd, env={**os.environ, "TMPDIR": temporaries}, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True) as process:
            try:
                out, errors = process.communicate(timeout=300)
            except subprocess.TimeoutExpired:
                _kill_group(process)
                raise BuildError(what, "the compiler ran for more than 300 s") from None
            except BaseException:
                _kill_group(process)
                raise
    finally:
        shutil.rmtree(temporaries, ignore_errors=True)
    if process.returncode != 0:
        raise BuildError(what, errors + out + _advice(errors))


def _kill_group(process: subprocess.Popen) -> None:
    """The compiler and every process it started (cc1plus, as, collect2, ld), at once."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (AttributeError, OSError):    # no process groups (Windows), or already gone
        process.kill()
    process.wait()


def _advice(errors: str) -> str:
    """What to change where gcc's message alone does not say: min and max, which a schedule may
    call (CUDA has them), are no C functions, so the serial C must define them itself."""
    missing = sorted(set(re.findall(r"implicit declaration of function .(min|max)\b", errors)))
    if not missing:
        return ""
    return (f"\n{' and '.join(missing)}: CUDA's, which C does not have: define {'them' if len(missing) > 1 else 'it'} "
            "in the file for its serial C, as functions (a function-like macro is PK002), e.g. "
            "`static int min(int a, int b) { return a < b ? a : b; }`\n")


def serial_includes(directory: Path, file: str) -> list:
    """Writes metafork.h (MetaFork as serial C) into `directory`; the gcc flags that find it and the
    user's own headers beside `file`."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "metafork.h").write_text(METAFORK_H)
    return ["-I", str(directory), "-I", str(Path(file).resolve().parent), "-include", "metafork.h"]


def offset(text: str, line: int, col: int) -> int:
    """Offset of a 1-based (line, column) in text (columns in code points)."""
    lines = text.split("\n")
    return sum(len(l) + 1 for l in lines[:line - 1]) + col - 1


@dataclass(frozen=True)
class Call:
    """How schedule i is called: the wrapper of its dispatcher, in C and C++."""
    schedule: object
    wrapper: str               # C name of the logging wrapper
    dispatcher: str            # C++ name of the generated default dispatcher
    kernels: tuple             # ((case number, kernel name, registers), ...)
    tree: str = ""             # C++ name of the tree's dispatcher (the paper's rule)

    @property
    def parameters(self) -> list[tuple[str, str]]:
        """(C type, name) of the dispatcher's arguments, in its order."""
        return [(f"{x.ctype} *", x.name) if is_array(x) else (x.ctype, x.name) for x in host_arguments(self.schedule)]

    @property
    def scalars(self) -> list[str]:
        """The names of its scalar arguments, in its order: what parakern_verify_argument logs."""
        return [n for t, n in self.parameters if not t.endswith("*")]

    def declarations(self) -> str:
        """The wrapper's parameter list in C (`void` for none)."""
        return ", ".join(f"{t} {n}" if not t.endswith("*") else f"{t}{n}" for t, n in self.parameters) or "void"

    def prototype(self) -> str:
        return f"int {self.wrapper}({self.declarations()})"

    def statement(self) -> str:
        args = [f"({t}){n}" if t.endswith("*") else n for t, n in self.parameters]
        return f"{{ {self.wrapper}({', '.join(args)}); }}"


def make_call(schedule, tree, cu_text: str) -> Call:
    kernels = []
    for k, case in enumerate(tree.cases, start=1):
        name = kernel_name(schedule, k)
        if re.search(rf"\b{re.escape(name)}\s*\(", cu_text):
            kernels.append((k, name, int(case.counter("registers"))))
        # its compile-time instances (codegen/kernel_source.py instance_name) count as the case does
        for instance in dict.fromkeys(re.findall(rf"\b({re.escape(name)}_\w+)\s*\(", cu_text)):
            kernels.append((k, instance, int(case.counter("registers"))))
    return Call(schedule, f"parakern_call_{schedule.function}_{schedule.index}", dispatcher_name(schedule),
                tuple(kernels), tree_name(schedule))


def with_entries(text: str, functions) -> str:
    """The file and, after it, a pointer of external linkage to each function the runners call
    (`parakern_entry_<function>`, runner.setup): a `static` function has no symbol of its own in
    the library (verify: "undefined symbol: scale")."""
    return text + "".join(f"\n__typeof__({f}) *const {ENTRY}{f} = {f};" for f in sorted(set(functions))) + "\n"


def line_directive(file: str) -> str:
    """`#line 1 "file"`: compiler messages name the user's file, not the copy built here."""
    return f'#line 1 "{in_string(file)}"\n'


def gpu_host_source(text: str, file: str, call: Call) -> str:
    """The file with the schedule replaced by the dispatcher call, the wrapper declared first."""
    span = call.schedule.span
    start, end = offset(text, span.line, span.col), offset(text, span.end_line, span.end_col)
    body = text[:start] + call.statement() + text[end:]
    return f"{call.prototype()};\n{line_directive(file)}{body}"


def glue_source(cu_name: str, calls: list[Call]) -> str:
    """C++: the emitted .cu, a logging wrapper per dispatcher, the driver's controls."""
    width = max([len(c.scalars) for c in calls] + [1])
    out = [f'#include "{cu_name}"', "#include <string>", "",
           "namespace {", f"int parakern_log[{LOG_SIZE}];", "int parakern_calls = 0;",
           "int parakern_tree_rule = 0;   /* 1: the tree's dispatcher, 0: the default one */",
           f"double parakern_arguments[{ARGUMENTS_LOGGED}][{width}];   /* the scalars each call received */",
           "std::string parakern_failure;", "}", "", 'extern "C" {']
    for call in calls:
        names = ", ".join(n for _, n in call.parameters)
        # the wrapper's parameters are the user's names: its own local is in parakern's namespace
        out += [f"{call.prototype()}", "{",
                f"    if (parakern_calls < {ARGUMENTS_LOGGED}) {{"]
        out += [f"        parakern_arguments[parakern_calls][{i}] = (double){n};" for i, n in enumerate(call.scalars)]
        out += ["    }",
                f"    int parakern_result = parakern_tree_rule ? {call.tree or call.dispatcher}({names})"
                f" : {call.dispatcher}({names});",
                f"    if (parakern_calls < {LOG_SIZE}) parakern_log[parakern_calls] = parakern_result;",
                "    ++parakern_calls;",
                "    if (parakern_result < 0 && parakern_failure.empty())",
                "        parakern_failure = "
                + "".join(f"parakern_result == {code} ? std::string(\"{text}\") : "
                          for code, text in status.MEANINGS.items() if code < 0)
                + "\"CUDA error: \" + parakern_cpu::last_message;",
                "    return parakern_result;", "}", ""]
    out += ["void parakern_verify_init(void)", "{"]
    for call in calls:
        for _, kernel, registers in call.kernels:
            out.append(f"    parakern_cpu_set_registers((const void *)&{kernel}, {registers});")
    out += ["}", "",
            "void parakern_verify_device(int regs, long optin, long dflt, int threads)",
            "{", "    parakern_cpu_set_device(regs, (size_t)optin, threads, (size_t)dflt);", "}", "",
            "void parakern_verify_profile(int sms, int major, int minor, int threads, int blocks, long reserved,",
            "                             int clock_khz, int memory_khz, int bus_bits, long l2_bytes)",
            "{", "    parakern_cpu_set_profile(sms, major, minor, threads, blocks, (size_t)reserved, clock_khz, "
            "memory_khz, bus_bits, (int)l2_bytes);", "}", "",
            "void parakern_verify_rule(int tree) { parakern_tree_rule = tree != 0; }",
            "void parakern_verify_reset(void) { parakern_calls = 0; parakern_failure.clear(); "
            "parakern_cpu::last_message.clear(); parakern_race::reset(); }",
            "void parakern_verify_races(int on) { parakern_race::enabled = on != 0; }",
            "void parakern_verify_order(unsigned long long seed) { parakern_cpu_set_order(seed); }",
            "const char *parakern_verify_race(void) { return parakern_race::report(); }",
            "long parakern_verify_race_count(void) { return parakern_race::count(); }",
            "int parakern_verify_calls(void) { return parakern_calls; }",
            f"double parakern_verify_argument(int call, int i) {{ return call >= 0 && call < {ARGUMENTS_LOGGED} "
            f"&& i >= 0 && i < {width} ? parakern_arguments[call][i] : 0; }}",
            f"int parakern_verify_case(int i) {{ return i >= 0 && i < {LOG_SIZE} ? parakern_log[i] : 0; }}",
            "const char *parakern_verify_failure(void) { return parakern_failure.c_str(); }",
            "}", ""]
    return "\n".join(out)


@dataclass(frozen=True)
class Libraries:
    serial: Path
    gpu: dict            # schedule id -> Path of its library
    errors: dict         # schedule id -> BuildError

    @property
    def fused(self) -> Path:
        """The serial C built with FMA contraction."""
        return self.serial.with_name("serial_fma.so")


def build(text: str, file: str, cu_text: str, calls: list[Call], directory: Path) -> Libraries:
    """Compile serial.so and one gpu_<i>.so per call, in `directory`."""
    gcc, gxx = tools()
    include = serial_includes(directory, file)
    (directory / "source.c").write_text(line_directive(file) + with_entries(text, (c.schedule.function for c in calls)))
    run_compiler([gcc, *CFLAGS, "-shared", "-Wl,-Bsymbolic", *include, "source.c", "-o", "serial.so", "-lm"],
         "the serial C file", directory)
    run_compiler([gcc, *CFLAGS, *FMA_FLAGS, "-shared", "-Wl,-Bsymbolic", *include, "source.c", "-o",
                  "serial_fma.so", "-lm"], "the serial C file (with FMA contraction)", directory)
    (directory / "kernels.cu").write_text(cu_text)
    (directory / "glue.cpp").write_text(glue_source("kernels.cu", calls))
    errors, gpu = {}, {}
    try:
        run_compiler([gxx, *CXXFLAGS, *FMA_FLAGS, "-include", str(HEADER), "-include", str(RACE_HEADER), "-c",
                      "glue.cpp", "-o", "glue.o"],
             "the emitted .cu (with the CPU emulation header)", directory)
    except BuildError as exc:
        return Libraries(directory / "serial.so", {}, {c.schedule.id: exc for c in calls})
    for i, call in enumerate(calls):
        host = f"host_{i}.c"
        (directory / host).write_text(with_entries(gpu_host_source(text, file, call), [call.schedule.function]))
        try:
            run_compiler([gcc, *CFLAGS, *include, "-c", host, "-o", f"host_{i}.o"],
                 f"the C file calling {call.dispatcher}", directory)
            run_compiler([gxx, "-shared", "-pthread", "-Wl,-Bsymbolic", f"host_{i}.o", "glue.o", "-o", f"gpu_{i}.so",
                  "-lm"], f"the GPU library of {call.schedule.id}", directory)
            gpu[call.schedule.id] = directory / f"gpu_{i}.so"
        except BuildError as exc:
            errors[call.schedule.id] = exc
    return Libraries(directory / "serial.so", gpu, errors)


def environment() -> dict:
    """The child's environment: no inherited sanitizer or preload surprises."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env
