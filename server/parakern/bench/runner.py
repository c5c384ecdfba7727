"""The pycuda runner: every case kernel of a schedule, and its host dispatcher, on a GPU.

The kernels (codegen's kernel_source, wrapped in extern "C") are compiled once with nvcc
to a cubin for the device's architecture and loaded with pycuda's module_from_file. A
case is launched with its grid, block and dynamic shared bytes; CUDA events time warm-up
launches then `repeat` timed ones (median and spread); the arrays are copied back and
compared with the serial baseline (exact for integers, relative tolerance for floats).

The dispatcher path is the generated host code itself: the schedule's .cu (kernels and
dispatcher) built by nvcc into a shared library and called through ctypes on pycuda's
device buffers. The CUDA runtime inside it uses the context pycuda made current.

pycuda is imported inside functions so that the package imports without it. The tests
run this module against a pycuda and an nvcc that execute on parakern's CPU emulation
(tests/fakes); the API used here was checked against pycuda 2026.1's sources.
"""
from __future__ import annotations

import ctypes
import shlex
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from parakern.counters.registers import registers_per_block
from parakern.machine.devices import Device, from_properties
from parakern.verify.runner import TOLERANCE
from parakern.process.lifeline import ScratchDirectory
from parakern.codegen.emit import INCLUDES, PREAMBLE
from parakern.codegen.auto import model_support
from parakern.codegen.tree_dispatcher import host_arguments, is_array, tree_name
from parakern.codegen import dispatcher_name, tuned
from parakern.bench.plan import PlanError
from parakern.codegen import kernel_name
from parakern.codegen.kernel_source import instance_name
from parakern.verify.runner import CTYPES

WARMUP = 3
SPIN_NS = 200_000   # the GPU waits this long before each timed launch while the host enqueues it
SPIN_KERNEL = "parakern_bench_spin"
SPIN_SOURCE = f"""
/* Timing: keeps the GPU busy while the host enqueues the start event and the launch, so that
 * the events time the kernel alone, not pycuda's (or the dispatcher's) launch overhead. */
__global__ void {SPIN_KERNEL}(unsigned long long ns)
{{
#ifdef __CUDA_ARCH__
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {{
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    }} while (now - start < ns);
#endif
}}
"""
# cudaDeviceProp's names of what the runner reads, and pycuda's device attributes for them
DEVICE_PROPERTIES = (("regsPerBlock", "MAX_REGISTERS_PER_BLOCK"),
                     ("sharedMemPerBlockOptin", "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
                     ("sharedMemPerBlock", "MAX_SHARED_MEMORY_PER_BLOCK"),
                     ("maxThreadsPerBlock", "MAX_THREADS_PER_BLOCK"),
                     ("multiProcessorCount", "MULTIPROCESSOR_COUNT"), ("clockRate", "CLOCK_RATE"),
                     ("memoryClockRate", "MEMORY_CLOCK_RATE"), ("memoryBusWidth", "GLOBAL_MEMORY_BUS_WIDTH"),
                     ("l2CacheSize", "L2_CACHE_SIZE"))
DEFAULT_SHARED_LIMIT = 48 * 1024   # above it a kernel must opt in (cudaFuncAttributeMaxDynamicSharedMemorySize)
WITHOUT_GPU = ("parakern bench FILE --plan-only --profile h100 (the case each point runs) and "
               "parakern tune FILE --profile h100 (the time model's best values) need no GPU")
CUDA_NO_DEVICE = 100   # cuInit's CUDA_ERROR_NO_DEVICE


class DoesNotFit(Exception):
    """nvcc's kernel of a case needs more registers or shared memory than the device gives."""


@dataclass(frozen=True)
class Missing:
    """What the bench lacks on this machine, most fundamental first: the GPU (its driver), the
    CUDA toolkit, then the Python modules."""
    what: str          # "no NVIDIA GPU: ...", "pycuda is not installed in ..."
    advice: str = ""   # how to get it where it can be installed; "" where it is the machine
    no_gpu: bool = False

    def line(self) -> str:
        """One line for the terminal: what is missing, then what to do."""
        return f"parakern bench: {self.what}; {self.advice or WITHOUT_GPU}"


def driver_problem() -> str:
    """'' when the CUDA driver (libcuda, loaded with ctypes: no pycuda needed) sees a GPU, else why not."""
    names = ["nvcuda.dll"] if sys.platform == "win32" else ["libcuda.so.1", "libcuda.so", "libcuda.dylib"]
    for name in names:
        try:
            driver = ctypes.CDLL(name)
            break
        except OSError:
            continue
    else:
        return f"no NVIDIA GPU here: there is no CUDA driver ({names[0]} not found)"
    status = driver.cuInit(0)
    count = ctypes.c_int(0)
    if status == 0:
        status = driver.cuDeviceGetCount(ctypes.byref(count))
    if status == CUDA_NO_DEVICE or (status == 0 and count.value < 1):
        return "no NVIDIA GPU here: the CUDA driver finds none"
    if status != 0:
        return f"the CUDA driver cannot be used here (cuInit error {status})"
    return ""


def _install(modules: str) -> str:
    """Advice that works for an installed parakern: pip of the environment parakern runs in."""
    return f"install {modules} in parakern's environment: {shlex.quote(sys.executable)} -m pip install {modules}" + \
        (" (pycuda builds against the CUDA toolkit)" if "pycuda" in modules else "")


def missing() -> "Missing | None":
    """None when a GPU, its driver, nvcc, numpy and pycuda are all there; else what is missing first."""
    import importlib.util
    have = {m: importlib.util.find_spec(m) is not None for m in ("numpy", "pycuda")}
    if not have["pycuda"]:   # pycuda cannot tell whether there is a GPU: ask the driver itself
        problem = driver_problem()
        if problem:
            return Missing(problem, no_gpu=True)
    if shutil.which("nvcc") is None:
        return Missing("nvcc (the CUDA toolkit) is not on PATH",
                       "install the CUDA toolkit and put its bin folder on PATH")
    absent = " ".join(m for m in ("pycuda", "numpy") if not have[m])
    if absent:
        return Missing(f"{absent.replace(' ', ' and ')} {'is' if ' ' not in absent else 'are'} not installed",
                       _install(absent))
    try:
        import pycuda.driver as cuda
        cuda.init()
        if cuda.Device.count() < 1:
            return Missing("no NVIDIA GPU here: the CUDA driver finds none", no_gpu=True)
    except Exception as exc:  # the driver is missing or broken
        return Missing(f"the CUDA driver cannot be used here ({type(exc).__name__}: {exc})", no_gpu=True)
    return None


def requirements() -> str:
    """'' when the bench can run here; else one line: what is missing and what to do."""
    lack = missing()
    return "" if lack is None else lack.line()


def kernels_source(code) -> str:
    """The kernels of one ScheduleCode only, extern "C" (unmangled names), no host dispatcher."""
    return PREAMBLE + INCLUDES + '\nextern "C" {\n\n' + "\n\n".join([*code.kernels, SPIN_SOURCE]) + '\n\n}\n'


DISPATCH_WRAPPER = "parakern_bench_dispatch"            # the default dispatcher: the model's fastest case
DISPATCH_TREE_WRAPPER = "parakern_bench_dispatch_tree"   # the tree's (the paper's rule)
DISPATCH_TUNED_WRAPPER = "parakern_bench_dispatch_tuned"
WRAPPERS = {"default": DISPATCH_WRAPPER, "tree": DISPATCH_TREE_WRAPPER, "tuned": DISPATCH_TUNED_WRAPPER}


def dispatcher_parameters(schedule) -> list:
    """(ctype, name, is_array) in the dispatcher's order (codegen.dispatcher.host_arguments)."""
    return [(x.ctype, x.name, is_array(x)) for x in host_arguments(schedule)]


def host_library_source(code) -> str:
    """The schedule's .cu (kernels, the default and the tree's dispatcher, dispatch_tuned) and an
    extern "C" entry point to each dispatcher for ctypes."""
    s = code.schedule
    params = dispatcher_parameters(s)
    declared = ", ".join(f"{t} *{n}" if array else f"{t} {n}" for t, n, array in params) or "void"
    names = ", ".join(n for _, n, _ in params)
    entries = [f'extern "C" int {wrapper}({declared})\n{{\n    return {function}({names});\n}}'
               for wrapper, function in ((DISPATCH_WRAPPER, dispatcher_name(s)), (DISPATCH_TREE_WRAPPER, tree_name(s)),
                                         (DISPATCH_TUNED_WRAPPER, tuned.tuned_name(s)))]
    model = [model_support()] if code.modelled else []
    return "\n\n".join([
        PREAMBLE + INCLUDES + tuned.INCLUDES, code.prototype, *code.kernels, *model, code.dispatcher,
        *([tuned.cache_support()] if tuned.measures(code.tuned) else []), code.tuned, *entries,
        'extern "C" const char *parakern_bench_last_error(void)\n{\n'
        "    return cudaGetErrorString(cudaPeekAtLastError());\n}\n"])


def nvcc_cubin_command(source: Path, out: Path, arch: str) -> list:
    return ["nvcc", "-cubin", f"-arch={arch}", "-O3", "-o", str(out), str(source)]


def nvcc_library_command(source: Path, out: Path, arch: str) -> list:
    return ["nvcc", "-shared", "-Xcompiler", "-fPIC", f"-arch={arch}", "-O3", "-o", str(out), str(source)]


def _nvcc(command: list, what: str) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"nvcc ran for more than 600 s on {what}") from None
    if done.returncode != 0:
        raise RuntimeError(f"nvcc failed on {what}:\n" + (done.stderr or done.stdout)[-2000:])


def compare(schedule, expected: dict, got: dict) -> tuple[bool, str]:
    """(all written arrays equal, the first difference): exact for integers, floats within
    verify.runner.TOLERANCE of the array's magnitude."""
    import numpy
    for a in schedule.arrays:
        if not a.written or a.name not in expected:   # a file-scope array: what the function does
            continue                                  # with it shows in its arguments
        e, g = expected[a.name], got[a.name]
        if a.ctype in TOLERANCE:   # the rule of verify.runner.same, on whole arrays
            finite = numpy.isfinite(e)
            scale = max(1.0, float(numpy.abs(e[finite]).max())) if finite.any() else 1.0
            with numpy.errstate(invalid="ignore"):
                close = numpy.abs(g.astype(numpy.float64) - e) <= TOLERANCE[a.ctype] * scale
            close |= (numpy.isnan(e) & numpy.isnan(g)) | (~finite & (g == e))
            bad = ~close
        else:
            bad = g != e
        if bad.any():
            i = int(numpy.flatnonzero(bad)[0])
            return False, f"{a.name}[{i}]: expected {e[i]}, got {g[i]} ({int(bad.sum())} differ)"
    return True, ""


def bytes_moved(schedule, arrays: dict) -> int:
    """Each array read once and/or written once: the least traffic any kernel needs."""
    return sum(arrays[a.name].nbytes * (int(a.read) + int(a.written)) for a in schedule.arrays if a.name in arrays)


class GpuRunner:
    def __init__(self, code, device: int = 0, directory: "str | None" = None):
        import pycuda.driver as cuda
        cuda.init()
        self.cuda = cuda
        self.code, self.schedule = code, code.schedule
        count = cuda.Device.count()
        if not 0 <= device < count:   # pycuda's 'LogicError: cuDeviceGet failed' said nothing of the option
            has = {0: "no GPU", 1: "one GPU: --device 0"}.get(count, f"{count} GPUs: --device 0 to {count - 1}")
            raise PlanError(f"--device {device}: this machine has {has}")
        self.device = cuda.Device(device)
        self.context = self.device.make_context()
        self._scratch = ScratchDirectory("parakern-bench-cu-") if directory is None else None
        self.directory = Path(directory or self._scratch.name)
        self._host = None
        self._copies = {}
        try:
            self.name = self.device.name()
            major, minor = self.device.compute_capability()
            self.arch = f"sm_{major}{minor}"
            self.gpu = from_properties({"major": major, "minor": minor, **self._properties()}, self.name)
            source, cubin = self.directory / "kernels.cu", self.directory / "kernels.cubin"
            source.write_text(kernels_source(code))
            _nvcc(nvcc_cubin_command(source, cubin, self.arch), "the case kernels")
            self.module = cuda.module_from_file(str(cubin))
            self._spin = self.module.get_function(SPIN_KERNEL)
        except BaseException:
            self.close()
            raise

    def _properties(self) -> dict:
        """What the driver reports of the device, by cudaDeviceProp's names (those it knows)."""
        found = {}
        for field, attribute in DEVICE_PROPERTIES:
            known = getattr(self.cuda.device_attribute, attribute, None)
            if known is not None:
                found[field] = self.device.get_attribute(known)
        return found

    def machine(self) -> Device:
        """The GPU, with R_B, Z, T as the dispatcher reads them."""
        return self.gpu

    def close(self) -> None:
        if getattr(self, "context", None) is not None:
            self.context.pop()
            self.context = None
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    def function(self, k: int, fixed: tuple = ()):
        """Case k's kernel; with `fixed` (an analysis/fixed.py point), its compile-time instance there."""
        name = instance_name(self.schedule, k, fixed) if fixed else kernel_name(self.schedule, k)
        return self.module.get_function(name)

    def registers(self, k: int, fixed: tuple = ()) -> int:
        return self.function(k, fixed).get_attribute(self.cuda.function_attribute.NUM_REGS)

    def _time(self, launch, repeat: int) -> list:
        import numpy
        cuda = self.cuda
        for _ in range(WARMUP):
            launch()
        cuda.Context.synchronize()
        times = []
        for _ in range(max(1, repeat)):
            start, end = cuda.Event(), cuda.Event()
            self._spin(numpy.uint64(SPIN_NS), grid=(1, 1), block=(1, 1, 1))
            start.record()
            launch()
            end.record()
            end.synchronize()
            times.append(start.time_till(end) / 1000.0)
        return times

    def _buffers(self, arrays: dict) -> dict:
        return {a.name: self.cuda.to_device(arrays[a.name]) for a in self.schedule.arrays}

    def _reset(self, buffers: dict, arrays: dict) -> None:
        for a in self.schedule.arrays:
            self.cuda.memcpy_htod(buffers[a.name], arrays[a.name])

    def _copy_back(self, buffers: dict, host: dict) -> None:
        cuda = self.cuda
        cuda.Context.synchronize()
        for a in self.schedule.arrays:
            if a.written:
                cuda.memcpy_dtoh(host[a.name], buffers[a.name])

    def _execute(self, host: dict, build, repeat: int, succeeded=lambda result: True) -> tuple:
        """`build(buffers)` gives a no-argument launch. It is timed on device copies of `host`
        (warm-up, `repeat` launches; they may update the buffers in place, as jacobi does), then
        run once on fresh copies, whose written arrays go back into `host` when
        `succeeded(its result)`. (the times in seconds, that result)"""
        buffers = self._buffers(host)
        try:
            go = build(buffers)
            times = self._time(go, repeat)
            self._reset(buffers, host)
            result = go()
            if succeeded(result):
                self._copy_back(buffers, host)
        finally:
            for b in buffers.values():
                b.free()
        return times, result

    def launch(self, k: int, launch: dict, values: dict, host: dict, ctypes_of: dict, repeat: int = 20,
               fixed: tuple = ()) -> list:
        """One execution of the schedule by case k on `host` (the arrays as the function has them
        at that moment, updated in place). The kernel times, in seconds. fixed: launch the case's
        compile-time instance at that point instead (its fixed parameters are not arguments)."""
        import numpy
        cuda = self.cuda
        f = self.function(k, fixed)
        shared = int(launch["shared_bytes"])
        threads = int(launch["threads"])
        registers = self.registers(k, fixed)
        if registers_per_block(registers, threads) > self.gpu.R_B:
            raise DoesNotFit(f"case {k}: nvcc's kernel needs {registers} registers x {threads} threads, "
                             f"{registers_per_block(registers, threads)} > {self.gpu.R_B} per block")
        if shared > self.gpu.Z:
            raise DoesNotFit(f"case {k}: {shared} bytes of shared memory > {self.gpu.Z} per block")
        if shared > DEFAULT_SHARED_LIMIT:
            f.set_attribute(cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)
        grid = tuple(int(g) for g in launch["grid"])
        block = tuple(int(b) for b in launch["block"])
        constants = dict(fixed)
        scalars = [numpy.dtype(ctypes_of[p.ctype]).type(values[p.name]) for p in self.schedule.params
                   if p.name not in constants]

        def build(buffers):
            args = [buffers[a.name] for a in self.schedule.arrays] + scalars
            return lambda: f(*args, grid=grid, block=block, shared=shared)

        return self._execute(host, build, repeat)[0]

    def copy_time(self, nbytes: int, repeat: int) -> float:
        """Median seconds of a device-to-device copy of nbytes (reads + writes 2 * nbytes),
        measured once per size and runner."""
        if nbytes not in self._copies:
            cuda = self.cuda
            src, dst = cuda.mem_alloc(nbytes), cuda.mem_alloc(nbytes)
            try:
                self._copies[nbytes] = statistics.median(
                    self._time(lambda: cuda.memcpy_dtod(dst, src, nbytes), repeat))
            finally:
                src.free()
                dst.free()
        return self._copies[nbytes]

    # ---------------------------------------------------------------- the dispatcher path

    def host_library(self):
        """The schedule's host dispatcher, built with nvcc once and loaded with ctypes."""
        if self._host is None:
            source, library = self.directory / "dispatch.cu", self.directory / "dispatch.so"
            source.write_text(host_library_source(self.code))
            _nvcc(nvcc_library_command(source, library, self.arch), "the host dispatcher")
            lib = ctypes.CDLL(str(library))
            for name in WRAPPERS.values():
                entry = getattr(lib, name)
                entry.argtypes = [ctypes.c_void_p if array else CTYPES[t]
                                  for t, _, array in dispatcher_parameters(self.schedule)]
                entry.restype = ctypes.c_int
            lib.parakern_bench_last_error.restype = ctypes.c_char_p
            self._host = lib
        return self._host

    def dispatch(self, values: dict, host: dict, repeat: int = 20, which: str = "default") -> tuple[int, list]:
        """One execution of the schedule by a generated dispatcher (choice + launch), timed like
        `launch`: (the case it returned, its times). The case is below 1 when it launched nothing
        (codegen/status.py). which: "default" (the model's fastest case), "tree" (the paper's
        rule), "tuned" (dispatch_tuned, whose first call, the warm-up, measures the cases)."""
        entry = getattr(self.host_library(), WRAPPERS[which])

        def build(buffers):
            args = [int(buffers[n]) if array else values[n] for _, n, array in dispatcher_parameters(self.schedule)]
            return lambda: entry(*args)

        times, case = self._execute(host, build, repeat, succeeded=lambda case: case >= 0)
        return case, times

    def last_error(self) -> str:
        return (self.host_library().parakern_bench_last_error() or b"").decode(errors="replace")
