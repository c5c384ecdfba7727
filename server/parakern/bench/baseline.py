"""The serial C baseline: the file as written, built once with gcc, called through ctypes.

Reuses parakern.verify: the metafork.h that makes MetaFork serial C (build.py), the
function's signature (signature.py), the scalar arguments and array sizes of a point
(inputs.py) and the ctypes types (runner.py). Scalar arguments of the function that are
not schedule parameters (jacobi's time-step count T) are 1 unless given: one call of the
schedule, as one kernel launch. Arrays are filled deterministically (numpy, seeded).
"""
from __future__ import annotations

import ctypes
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from parakern.verify import build as building
from parakern.verify import inputs
from parakern.verify.points import build_model
from parakern.verify.runner import CTYPES, setup
from parakern.verify.signature import FLOATING, signature

CFLAGS = ["-O2", "-fPIC", "-w"]


def build_serial(text: str, file: str, directory: Path, cflags=CFLAGS) -> Path:
    """serial.so of the file (gcc -include metafork.h); BuildError / ToolMissing."""
    gcc = shutil.which("gcc")
    if gcc is None:
        raise building.ToolMissing("gcc not found on PATH: the serial baseline is compiled with gcc")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "metafork.h").write_text(building.METAFORK_H)
    (directory / "source.c").write_text(building.line_directive(file) + text)
    include = ["-I", str(directory), "-I", str(Path(file).resolve().parent), "-include", "metafork.h"]
    building._run([gcc, *cflags, "-shared", "-Wl,-Bsymbolic", *include, "source.c", "-o", "serial.so", "-lm"],
                  "the serial C file", directory)
    return directory / "serial.so"


def dtype(ctype: str):
    import numpy
    return numpy.dtype(CTYPES[ctype])


class Baseline:
    """The serial function of one schedule, ready to call at parameter points."""

    def __init__(self, text: str, file: str, result, directory: "str | Path | None" = None):
        self.text = text.replace("\r\n", "\n").replace("\r", "\n")
        self.schedule, self.tree = result.schedule, result.tree
        self.signature = signature(self.text, file, self.schedule.function)
        self.model = build_model(self.schedule, self.tree, {a.name for a in self.signature.arguments})
        self._scratch = tempfile.TemporaryDirectory(prefix="parakern-bench-") if directory is None else None
        self.directory = Path(directory) if directory is not None else Path(self._scratch.name)
        self.library = build_serial(self.text, file, self.directory)
        self._lib = ctypes.CDLL(str(self.library))
        self.arguments = [{"name": a.name, "ctype": a.ctype, "kind": a.kind} for a in self.signature.arguments]
        self.function = setup(self._lib, self.signature.function, self.arguments)

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
                given[a.name] = 1
        return inputs.scalars(self.signature, self.schedule, given, seed)

    def inputs(self, values: dict, seed: int = 0) -> tuple:
        """(scalar arguments, {array: numpy array (flat)}, {array: dims}) of a point."""
        import numpy
        scalars = self.scalars(values)
        count, dims = inputs.sizes(self.signature, self.schedule, self.model, scalars)
        rng = numpy.random.default_rng(seed)
        arrays = {}
        for a in self.signature.arguments:
            if not a.is_array:
                continue
            if a.ctype in FLOATING:
                arrays[a.name] = rng.uniform(-1.0, 1.0, count[a.name]).astype(dtype(a.ctype))
            else:
                arrays[a.name] = rng.integers(0, 100, count[a.name]).astype(dtype(a.ctype))
        return scalars, arrays, dims

    def call(self, scalars: dict, arrays: dict) -> float:
        """One call on `arrays` (modified in place); seconds."""
        args = [ctypes.c_void_p(arrays[a["name"]].ctypes.data) if a["kind"] != "scalar" else scalars[a["name"]]
                for a in self.arguments]
        start = time.perf_counter()
        self.function(*args)
        return time.perf_counter() - start

    def run(self, scalars: dict, arrays: dict, repeat: int = 5) -> tuple:
        """(median seconds, all seconds, outputs): every repeat on fresh copies of the inputs."""
        times, out = [], None
        for _ in range(max(1, repeat)):
            out = {n: a.copy() for n, a in arrays.items()}
            times.append(self.call(scalars, out))
        return statistics.median(times), times, out
