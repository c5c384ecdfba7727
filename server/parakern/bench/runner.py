"""The pycuda runner. NOT TESTED: written without a GPU; pycuda is imported inside functions
so that the package imports without it.

The kernels of a schedule (codegen's kernel_source, wrapped in extern "C") are compiled once
with nvcc to a cubin for the device's architecture and loaded with module_from_file. A point
is launched with its case's grid, block and dynamic shared bytes; CUDA events time warm-up
launches then `repeat` timed ones (median and spread); the arrays are copied back and compared
with the serial baseline (exact for integers, 1e-5 relative for float, 1e-12 for double).
"""
from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

TOLERANCE = {"float": 1e-5, "double": 1e-12}
WARMUP = 3


def requirements() -> str:
    """'' when pycuda, numpy, nvcc and a GPU are all there; else one line: what is missing."""
    how = ("install it with `pip install -e '.[bench]'` together with the CUDA toolkit, "
           "on a machine with an NVIDIA GPU (`parakern bench --plan-only --profile h100` works without one)")
    import importlib.util
    for module in ("numpy", "pycuda"):
        if importlib.util.find_spec(module) is None:
            return f"parakern bench: {module} is not installed; {how}"
    if shutil.which("nvcc") is None:
        return f"parakern bench: nvcc (the CUDA toolkit) is not on PATH; {how}"
    try:
        import pycuda.driver as cuda
        cuda.init()
        if cuda.Device.count() < 1:
            return f"parakern bench: no NVIDIA GPU found; {how}"
    except Exception as exc:  # the driver is missing or broken
        return f"parakern bench: the CUDA driver cannot be used ({type(exc).__name__}: {exc}); {how}"
    return ""


def kernels_source(code) -> str:
    """The kernels of one ScheduleCode only, extern "C" (unmangled names), no host dispatcher."""
    from parakern.codegen.emit import INCLUDES, PREAMBLE
    return PREAMBLE + INCLUDES + '\nextern "C" {\n\n' + "\n\n".join(code.kernels) + '\n\n}\n'


class GpuRunner:
    def __init__(self, code, device: int = 0, directory: "str | None" = None):
        import pycuda.driver as cuda
        cuda.init()
        self.cuda = cuda
        self.device = cuda.Device(device)
        self.context = self.device.make_context()
        self.schedule = code.schedule
        a = cuda.device_attribute
        self.name = self.device.name()
        major, minor = self.device.compute_capability()
        self.arch = f"sm_{major}{minor}"
        self.regs_per_block = self.device.get_attribute(a.MAX_REGISTERS_PER_BLOCK)
        self.shared_optin = self.device.get_attribute(a.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        self.max_threads = self.device.get_attribute(a.MAX_THREADS_PER_BLOCK)
        self._scratch = tempfile.TemporaryDirectory(prefix="parakern-bench-cu-") if directory is None else None
        self.directory = Path(directory or self._scratch.name)
        source = self.directory / "kernels.cu"
        source.write_text(kernels_source(code))
        cubin = self.directory / "kernels.cubin"
        done = subprocess.run(["nvcc", "-cubin", f"-arch={self.arch}", "-O3", "-o", str(cubin), str(source)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            self.close()
            raise RuntimeError("nvcc failed on the kernels:\n" + (done.stderr or done.stdout)[-2000:])
        self.module = cuda.module_from_file(str(cubin))

    def machine(self) -> dict:
        """R, Z, T as the dispatcher reads them (R is capped per case by regs_per_block / threads)."""
        return {"R": 255, "Z": self.shared_optin, "T": self.max_threads, "regs_per_block": self.regs_per_block,
                "name": self.name}

    def close(self) -> None:
        if getattr(self, "context", None) is not None:
            self.context.pop()
            self.context = None
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    def function(self, k: int):
        from parakern.codegen import kernel_name
        return self.module.get_function(kernel_name(self.schedule, k))

    def registers(self, k: int) -> int:
        return self.function(k).get_attribute(self.cuda.function_attribute.NUM_REGS)

    def _time(self, launch, repeat: int) -> list:
        cuda = self.cuda
        for _ in range(WARMUP):
            launch()
        cuda.Context.synchronize()
        times = []
        for _ in range(max(1, repeat)):
            start, end = cuda.Event(), cuda.Event()
            start.record()
            launch()
            end.record()
            end.synchronize()
            times.append(start.time_till(end) / 1000.0)
        return times

    def run(self, point, scalars: dict, arrays: dict, expected: dict, ctypes_of: dict, repeat: int = 20) -> dict:
        """Launch the point's case on copies of `arrays`; timings, correctness, bandwidth."""
        import numpy
        cuda = self.cuda
        s = self.schedule
        k, launch = point.case, point.launch
        f = self.function(k)
        shared = int(launch["shared_bytes"])
        if shared > 48 * 1024:
            f.set_attribute(cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)
        buffers = {a.name: cuda.to_device(arrays[a.name]) for a in s.arrays}
        args = [buffers[a.name] for a in s.arrays]
        for p in s.params:
            value = scalars.get(p.name, point.values.get(p.name, 0))
            args.append(numpy.dtype(ctypes_of[p.ctype]).type(value))
        grid = tuple(int(g) for g in launch["grid"])
        block = tuple(int(b) for b in launch["block"])

        def go():
            f(*args, grid=grid, block=block, shared=shared)

        # the timed launches run on the same buffers: results are taken from a fresh single launch
        times = self._time(go, repeat)
        for a in s.arrays:
            cuda.memcpy_htod(buffers[a.name], arrays[a.name])
        go()
        cuda.Context.synchronize()
        got = {a.name: cuda.from_device_like(buffers[a.name], arrays[a.name]) for a in s.arrays}
        correct, mismatch = True, ""
        for a in s.arrays:
            if not a.written:
                continue
            e, g = expected[a.name], got[a.name]
            if a.ctype in TOLERANCE:
                bad = ~numpy.isclose(g, e, rtol=TOLERANCE[a.ctype], atol=TOLERANCE[a.ctype], equal_nan=True)
            else:
                bad = g != e
            if bad.any():
                i = int(numpy.flatnonzero(bad)[0])
                correct, mismatch = False, f"{a.name}[{i}]: expected {e[i]}, got {g[i]} ({int(bad.sum())} differ)"
                break
        moved = sum(arrays[a.name].nbytes * (int(a.read) + int(a.written)) for a in s.arrays)
        median = statistics.median(times)
        copy_s = self.copy_time(moved // 2 or 1, repeat)
        for b in buffers.values():
            b.free()
        return {"gpu_s": median, "gpu_spread_s": max(times) - min(times), "bytes_moved": moved,
                "bandwidth_gbs": moved / median / 1e9 if median else float("nan"),
                "copy_gbs": 2 * (moved // 2 or 1) / copy_s / 1e9 if copy_s else float("nan"),
                "registers": self.registers(k), "correct": correct, "mismatch": mismatch}

    def copy_time(self, nbytes: int, repeat: int) -> float:
        """Median seconds of a device-to-device copy of nbytes (reads + writes 2 * nbytes)."""
        cuda = self.cuda
        src, dst = cuda.mem_alloc(nbytes), cuda.mem_alloc(nbytes)
        try:
            return statistics.median(self._time(lambda: cuda.memcpy_dtod(dst, src, nbytes), repeat))
        finally:
            src.free()
            dst.free()
