"""The serial C baseline: the file as written, built once with gcc, called through ctypes;
and the same function with its meta_schedule replaced by a call back into Python (the hook),
which launches a case or the dispatcher on the GPU. Comparing the two whole calls is right
for schedules inside a host loop too (polydiv's elimination steps, jacobi's time steps):
every execution of the schedule is one launch, with the host's values of that moment.

Reuses parakern.verify: the metafork.h that makes MetaFork serial C (build.py), the
function's signature (signature.py), the scalar arguments and array sizes of a point
(inputs.py) and the ctypes types (runner.py). Scalar arguments of the function that are
not schedule parameters (jacobi's time-step count T) are 1 unless given: one call of the
schedule, as one kernel launch. Arrays are filled deterministically (numpy, seeded).
"""
from __future__ import annotations

import ctypes
import os
import hashlib
import json
import shutil
import subprocess
import statistics
import time
from pathlib import Path

from parakern.analysis.facts import ARGUMENT_DEFAULT
from parakern.verify import build as building
from parakern.verify import inputs
from parakern.verify.points import build_model
from parakern.verify.runner import CTYPES, INTEGERS_BELOW, setup
from parakern.verify.signature import FLOATING, signature
from parakern.source.text import normalize_newlines
from parakern.process.lifeline import ScratchDirectory

CFLAGS = ["-O2", "-fPIC", building.UNDECLARED_CALLS]


def _gcc() -> str:
    gcc = shutil.which("gcc")
    if gcc is None:
        raise building.ToolMissing("gcc not found on PATH: the serial baseline is compiled with gcc")
    return gcc


def program_identity(directory: Path, file: str, cflags=CFLAGS) -> str:
    """sha256 of the serial program as gcc sees it (preprocessed, no line markers) and its flags:
    two files that differ only in what metafork.h erases (`cache(a, b)`) are the same program."""
    include = building.serial_includes(directory, file)
    done = subprocess.run([_gcc(), "-E", "-P", *include, "source.c"], cwd=directory, capture_output=True,
                          timeout=120)
    digest = hashlib.sha256(done.stdout if done.returncode == 0 else (directory / "source.c").read_bytes())
    digest.update(" ".join(cflags).encode())
    return digest.hexdigest()


def build_serial(text: str, file: str, directory: Path, cflags=CFLAGS, functions=()) -> Path:
    """serial.so of the file (gcc -include metafork.h), with the entries of `functions`
    (building.with_entries); BuildError / ToolMissing."""
    gcc = _gcc()
    include = building.serial_includes(directory, file)
    (directory / "source.c").write_text(building.line_directive(file) + building.with_entries(text, functions))
    building.run_compiler([gcc, *cflags, "-shared", "-Wl,-Bsymbolic", *include, "source.c", "-o", "serial.so",
                           "-lm"], "the serial C file", directory)
    return directory / "serial.so"


# the schedule's parameters go through as doubles: exact for integers below 2**53, and floats
# (saxpy's alpha) pass too
HOST_COPIES = 4   # inputs, the serial C's outputs, a run's working copy, the copy compared

HOOK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_void_p))


def hook_shim(schedule, wrapper: str) -> str:
    """C: the wrapper the hooked file calls instead of the schedule, forwarding to the hook."""
    params = [(p.ctype, p.name) for p in schedule.params]
    arrays = [(a.ctype, a.name) for a in schedule.arrays]
    # declared as the call (building.Call) passes them; handed to the hook parameters first
    declared = building.Call(schedule, wrapper, "", ()).declarations()
    values = ", ".join(f"(double){n}" for _, n in params) or "0"
    pointers = ", ".join(f"(void *){n}" for _, n in arrays) or "0"
    return "\n".join([
        "typedef int (*parakern_bench_hook_t)(const double *, void *const *);",
        "static parakern_bench_hook_t parakern_bench_hook;",
        "void parakern_bench_set_hook(parakern_bench_hook_t hook) { parakern_bench_hook = hook; }",
        f"int {wrapper}({declared})", "{",
        f"    const double parakern_values[] = {{{values}}};",   # beside the user's parameter names
        f"    void *const parakern_pointers[] = {{{pointers}}};",
        "    return parakern_bench_hook ? parakern_bench_hook(parakern_values, parakern_pointers) : -2;", "}", ""])


def build_hooked(text: str, file: str, schedule, directory: Path) -> Path:
    """hooked.so: the file with the schedule replaced by a call of the hook (gcc, metafork.h)."""
    stem = f"{schedule.function}_{schedule.index}"
    call = building.Call(schedule, f"parakern_call_{stem}", "", ())
    (directory / "hooked.c").write_text(building.with_entries(building.gpu_host_source(text, file, call),
                                                              [schedule.function]))
    (directory / "hook.c").write_text(hook_shim(schedule, call.wrapper))
    include = building.serial_includes(directory, file)
    building.run_compiler([_gcc(), *CFLAGS, "-shared", "-Wl,-Bsymbolic", *include, "hooked.c", "hook.c", "-o",
                           "hooked.so", "-lm"], "the C file calling the GPU", directory)
    return directory / "hooked.so"


def dtype(ctype: str):
    import numpy
    return numpy.dtype(CTYPES[ctype])


class Baseline:
    """The serial function of one schedule, ready to call at parameter points."""

    def __init__(self, text: str, file: str, result, directory: "str | Path | None" = None):
        self.text = normalize_newlines(text)
        self.schedule, self.tree = result.schedule, result.tree
        self.signature = signature(self.text, file, self.schedule.function)
        self.model = build_model(self.schedule, self.tree, {a.name for a in self.signature.arguments})
        self._scratch = ScratchDirectory("parakern-bench-") if directory is None else None
        self.directory = Path(directory) if directory is not None else Path(self._scratch.name)
        self.library = build_serial(self.text, file, self.directory, functions=[self.schedule.function])
        self._lib = ctypes.CDLL(str(self.library))
        self.arguments = [{"name": a.name, "ctype": a.ctype, "kind": a.kind} for a in self.signature.arguments]
        self.function = setup(self._lib, self.signature.function, self.arguments)
        self.file = file
        self._hooked_lib = self._hooked_fn = self._hooked_handle = None

    def close(self) -> None:
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def scalars(self, values: dict, seed: str = "bench") -> dict:
        params = {p.name for p in self.schedule.params}
        given = dict(values)
        for a in self.signature.arguments:
            if not a.is_array and a.name not in given and a.name not in params and a.ctype not in FLOATING:
                given[a.name] = ARGUMENT_DEFAULT
        return inputs.scalars(self.signature, self.schedule, given, seed)

    def memory_problem(self, values: dict) -> str:
        """Why the point's arrays cannot be held on this machine ('' where they can): the bench keeps
        its inputs, the serial C's outputs and each run's copies (HOST_COPIES in all); n = 2*10^9
        ints were allocated until the kernel killed the process."""
        count, _ = inputs.sizes(self.signature, self.schedule, self.model, self.scalars(values))
        size = sum(count[a.name] * dtype(a.ctype).itemsize for a in self.signature.arguments if a.is_array)
        try:
            memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):   # not a POSIX system: nothing to compare with
            return ""
        if size * HOST_COPIES <= memory:
            return ""
        return (f"its arrays take {size / 1e9:.3g} GB, and the bench holds {HOST_COPIES} copies of them: more than "
                f"this machine's {memory / 1e9:.3g} GB of memory; give smaller sizes")

    def inputs(self, values: dict, seed: int = 0) -> tuple:
        """(scalar arguments, {array: numpy array (flat)}, {array: dims}) of a point. The arrays
        are read-only and shared by the points of the same sizes (filling a gigabyte of random
        numbers takes seconds): callers work on copies, as run and run_hooked do."""
        import numpy
        scalars = self.scalars(values)
        count, dims = inputs.sizes(self.signature, self.schedule, self.model, scalars)
        key = (tuple(sorted(count.items())), seed)
        if getattr(self, "_inputs", (None,))[0] == key:
            return scalars, self._inputs[1], dims
        self._inputs = (None, None)   # let the previous arrays go before the next are made
        rng = numpy.random.default_rng(seed)
        limits = inputs.index_limits(self.schedule, count, dims)   # as verify's runner fills them
        arrays = {}
        for a in self.signature.arguments:
            if not a.is_array:
                continue
            if a.ctype in FLOATING:
                arrays[a.name] = rng.uniform(-1.0, 1.0, count[a.name]).astype(dtype(a.ctype))
            else:
                below = max(1, min(INTEGERS_BELOW, limits.get(a.name, INTEGERS_BELOW)))
                arrays[a.name] = rng.integers(0, below, count[a.name]).astype(dtype(a.ctype))
            arrays[a.name].flags.writeable = False
        self._inputs = (key, arrays)
        return scalars, arrays, dims

    def call(self, scalars: dict, arrays: dict) -> float:
        """One call on `arrays` (modified in place); seconds."""
        args = [ctypes.c_void_p(arrays[a["name"]].ctypes.data) if a["kind"] != "scalar" else scalars[a["name"]]
                for a in self.arguments]
        start = time.perf_counter()
        self.function(*args)
        return time.perf_counter() - start

    # ------------------------------------------------------------ the hooked program

    def _hooked(self):
        if self._hooked_lib is None:
            self._hooked_lib = build_hooked(self.text, self.file, self.schedule, self.directory)
            lib = ctypes.CDLL(str(self._hooked_lib))
            self._hooked_fn = setup(lib, self.signature.function, self.arguments)
            lib.parakern_bench_set_hook.argtypes = [HOOK]
            lib.parakern_bench_set_hook.restype = None
            self._hooked_handle = lib
        return self._hooked_handle, self._hooked_fn

    def run_hooked(self, scalars: dict, arrays: dict, launch) -> tuple:
        """(outputs, calls): the function on copies of `arrays`, each execution of the schedule
        being `launch(values, host)` (values: the schedule's parameters at that moment; host:
        {array: the numpy array the function is working on}, updated in place by `launch`)."""
        lib, function = self._hooked()
        out = {n: a.copy() for n, a in arrays.items()}
        by_address = {a.ctypes.data: (n, a) for n, a in out.items()}
        params = [(p.name, p.ctype in FLOATING) for p in self.schedule.params]
        names = [a.name for a in self.schedule.arrays]
        file_scope = set(names) - {a["name"] for a in self.arguments}   # `float coef[K];` beside the function
        failure, calls = [], [0]

        def hook(p, ptrs):
            try:
                calls[0] += 1
                values = {n: float(p[i]) if floating else int(p[i]) for i, (n, floating) in enumerate(params)}
                host = {}
                for i, n in enumerate(names):
                    found = by_address.get(ptrs[i] or 0)
                    if found is None and n in file_scope:   # the program's own memory, seen in place
                        host[n] = self._file_scope_view(n, ptrs[i], values)
                        continue
                    if found is None or found[0] != n:
                        raise RuntimeError(f"the schedule's array {n} is not the function's argument {n} "
                                           "(an offset or a local array): the bench cannot copy it")
                    host[n] = found[1]
                return int(launch(values, host))
            except BaseException as exc:  # never let an exception cross the C frames
                failure.append(exc)
                return -2

        callback = HOOK(hook)
        lib.parakern_bench_set_hook(callback)
        args = [ctypes.c_void_p(out[a["name"]].ctypes.data) if a["kind"] != "scalar" else scalars[a["name"]]
                for a in self.arguments]
        function(*args)
        lib.parakern_bench_set_hook(HOOK())
        if failure:
            raise failure[0]
        return out, calls[0]

    def _file_scope_view(self, name: str, address: int, values: dict):
        """A numpy array over a file-scope array of the hooked program (its declared size at these
        values): what the launch writes there is the program's, as the serial C writes it."""
        import numpy
        import sympy
        array = self.schedule.array(name)
        sizes = [sympy.sympify(d) for d in array.dims]
        count = int(sympy.Mul(*(d.subs({x: values[x.name] for x in d.free_symbols if x.name in values})
                                for d in sizes)))
        raw = (CTYPES[array.ctype] * count).from_address(address)
        return numpy.ctypeslib.as_array(raw).view(dtype(array.ctype))

    def run(self, scalars: dict, arrays: dict, repeat: int = 5, cache: "str | Path | None" = None) -> tuple:
        """(median seconds, all seconds, outputs): every repeat on fresh copies of the inputs.

        cache: a folder where the result is kept, keyed by the program (program_identity), the
        scalars and the inputs' bytes, so that another bench of the same serial program (the
        same sample with and without `cache(...)`) does not run a long serial C again."""
        path = self._cache_path(cache, scalars, arrays) if cache is not None else None
        if path is not None and path.exists():
            import numpy
            with numpy.load(path) as saved:
                times = [float(t) for t in saved["__times__"]]
                return statistics.median(times), times, {n: saved[n] for n in arrays}
        times, out = [], None
        for _ in range(max(1, repeat)):
            out = {n: a.copy() for n, a in arrays.items()}
            times.append(self.call(scalars, out))
        if path is not None:
            import numpy
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(".part.npz")
            numpy.savez(partial, __times__=numpy.array(times), **out)
            partial.replace(path)
        return statistics.median(times), times, out

    def _cache_path(self, cache, scalars: dict, arrays: dict) -> Path:
        if not hasattr(self, "_identity"):
            self._identity = program_identity(self.directory, self.file)
        digest = hashlib.sha256(self._identity.encode())
        digest.update(json.dumps(sorted(scalars.items())).encode())
        for name in sorted(arrays):
            digest.update(name.encode())
            digest.update(arrays[name].tobytes())
        return Path(cache) / f"{self.signature.function}-{digest.hexdigest()[:24]}.npz"
