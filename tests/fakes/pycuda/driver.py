"""pycuda.driver on the CPU: device memory is host memory, kernels run on parakern_cpu.h.

Only what parakern.bench.runner uses, with pycuda 2026.1's names and conventions: scalar
kernel arguments must be numpy scalars of exactly the kernel parameter's type (pycuda packs
their bytes as they are), buffers are DeviceAllocation, `time_till` is in milliseconds,
a launch the device refuses raises. The "cubin" comes from tests/fakes/bin/nvcc: JSON with
the source and ptxas's register counts. The emulated device's limits come from
PARAKERN_FAKE_DEVICE ("regs_per_block,shared_optin,max_threads"), as in the fake nvcc.
"""
from __future__ import annotations

import atexit
import ctypes
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np


def _fma_flags() -> list:
    """parakern.verify.fma's flags (loaded by path: this double runs without parakern's dependencies)."""
    import importlib.util
    path = Path(__file__).resolve().parents[3] / "server" / "parakern" / "verify" / "fma.py"
    spec = importlib.util.spec_from_file_location("parakern_fake_fma", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.fma_flags()


_FMA = _fma_flags()


HEADER = Path(__file__).resolve().parents[3] / "server" / "parakern" / "verify" / "parakern_cpu.h"
_WORK = Path(tempfile.mkdtemp(prefix="fake-pycuda-"))
atexit.register(shutil.rmtree, _WORK, True)


class Error(Exception):
    pass


class LogicError(Error):
    pass


class LaunchError(Error):
    pass


def _limits():
    text = os.environ.get("PARAKERN_FAKE_DEVICE", "65536,49152,1024")
    regs, optin, threads = (int(v) for v in text.split(","))
    return regs, optin, threads


class device_attribute:
    MAX_REGISTERS_PER_BLOCK = "MAX_REGISTERS_PER_BLOCK"
    MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"
    MAX_THREADS_PER_BLOCK = "MAX_THREADS_PER_BLOCK"
    MULTIPROCESSOR_COUNT = "MULTIPROCESSOR_COUNT"
    CLOCK_RATE = "CLOCK_RATE"
    MEMORY_CLOCK_RATE = "MEMORY_CLOCK_RATE"
    GLOBAL_MEMORY_BUS_WIDTH = "GLOBAL_MEMORY_BUS_WIDTH"
    L2_CACHE_SIZE = "L2_CACHE_SIZE"


# The GPU the emulation plays, what the time model reads of it: an A100's SMs, clock, L2 and
# bandwidth (1555 GB/s: 2 x 1555000 kHz x 4000 bits / 8), as tests/fakes/bin/nvcc's host library
# sets it (parakern_cpu_set_profile), so the default dispatcher and the bench's plan agree.
SPEEDS = {"MULTIPROCESSOR_COUNT": 108, "CLOCK_RATE": 1410000, "MEMORY_CLOCK_RATE": 1555000,
          "GLOBAL_MEMORY_BUS_WIDTH": 4000, "L2_CACHE_SIZE": 40 * 1024 * 1024}


class function_attribute:
    NUM_REGS = "NUM_REGS"
    MAX_DYNAMIC_SHARED_SIZE_BYTES = "MAX_DYNAMIC_SHARED_SIZE_BYTES"


_initialised = False
_contexts: list = []


def init(flags: int = 0) -> None:
    global _initialised
    _initialised = True


def _need_init():
    if not _initialised:
        raise LogicError("cuInit has not been called")


class Context:
    @staticmethod
    def synchronize():
        if not _contexts:
            raise LogicError("no context is current")

    @staticmethod
    def pop():
        if not _contexts:
            raise LogicError("context stack is empty")
        _contexts.pop()


class Device:
    def __init__(self, number: int):
        _need_init()
        if number != 0:
            raise LogicError(f"cuDeviceGet failed: invalid device ordinal {number}")

    @staticmethod
    def count() -> int:
        _need_init()
        return 1

    def name(self) -> str:
        return "parakern CPU emulation"

    def compute_capability(self):
        return (8, 0)

    def get_attribute(self, attribute):
        regs, optin, threads = _limits()
        return {device_attribute.MAX_REGISTERS_PER_BLOCK: regs,
                device_attribute.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: optin,
                device_attribute.MAX_THREADS_PER_BLOCK: threads, **SPEEDS}[attribute]

    def make_context(self, flags: int = 0):
        context = Context()
        _contexts.append(context)
        return context


# ---------------------------------------------------------------- memory

_live: dict = {}


class DeviceAllocation:
    def __init__(self, nbytes: int):
        if not _contexts:
            raise LogicError("cuMemAlloc failed: no context")
        self.buffer = np.full(max(1, int(nbytes)), 0xA5, dtype=np.uint8)  # garbage, as fresh device memory
        self.nbytes = int(nbytes)
        _live[id(self)] = self

    def __int__(self) -> int:
        if self.buffer is None:
            raise LogicError("use of a freed allocation")
        return self.buffer.ctypes.data

    __index__ = __int__

    def free(self) -> None:
        if self.buffer is None:
            raise LogicError("double free")
        self.buffer = None
        _live.pop(id(self), None)


def mem_alloc(nbytes: int) -> DeviceAllocation:
    return DeviceAllocation(nbytes)


def _bytes(obj) -> np.ndarray:
    return np.frombuffer(memoryview(obj).cast("B"), dtype=np.uint8)


def memcpy_htod(dest: DeviceAllocation, src) -> None:
    data = _bytes(src)
    if data.size > dest.nbytes:
        raise LogicError("cuMemcpyHtoD failed: copy past the allocation")
    dest.buffer[:data.size] = data


def memcpy_dtoh(dest: np.ndarray, src: DeviceAllocation) -> None:
    view = _bytes(dest)
    if view.size > src.nbytes:
        raise LogicError("cuMemcpyDtoH failed: copy past the allocation")
    dest.view(np.uint8).reshape(-1)[:] = src.buffer[:view.size]


def memcpy_dtod(dest: DeviceAllocation, src: DeviceAllocation, size: int) -> None:
    if size > dest.nbytes or size > src.nbytes:
        raise LogicError("cuMemcpyDtoD failed: copy past an allocation")
    dest.buffer[:size] = src.buffer[:size]


def to_device(array) -> DeviceAllocation:
    data = memoryview(array).tobytes()
    result = mem_alloc(len(data))
    memcpy_htod(result, data)
    return result


def from_device_like(devptr: DeviceAllocation, other: np.ndarray) -> np.ndarray:
    result = np.empty_like(other)
    memcpy_dtoh(result, devptr)
    return result


class Event:
    def __init__(self, flags: int = 0):
        self.at = None

    def record(self, stream=None):
        self.at = time.perf_counter()   # emulated launches are synchronous
        return self

    def synchronize(self):
        return self

    def time_till(self, end: "Event") -> float:
        return (end.at - self.at) * 1000.0


# ---------------------------------------------------------------- modules

_NUMPY = {"char": np.int8, "unsigned char": np.uint8, "short": np.int16, "unsigned short": np.uint16,
          "int": np.int32, "unsigned": np.uint32, "unsigned int": np.uint32, "long": np.int64,
          "unsigned long": np.uint64, "long long": np.int64, "unsigned long long": np.uint64,
          "float": np.float32, "double": np.float64}


def _kernels(source: str) -> dict:
    """{name: [(C type, is pointer), ...]} of the __global__ functions."""
    out = {}
    pattern = r"__global__\s+void\s+(?:__\w+__\s*\([^)]*\)\s*)*(\w+)\s*\(([^)]*)\)"
    for name, params in re.findall(pattern, source, re.S):
        parsed = []
        for p in (x.strip() for x in params.split(",") if x.strip()):
            words = p.replace("*", " * ").split()
            pointer = "*" in words
            ctype = " ".join(w for w in words[:-1] if w not in ("__restrict__", "*"))
            parsed.append((ctype, pointer))
        out[name] = parsed
    return out


def _glue(kernels: dict) -> str:
    lines = ["", "#include <stdlib.h>", 'extern "C" {']
    for name, params in kernels.items():
        args = []
        for i, (ctype, pointer) in enumerate(params):
            args.append(f"({ctype} *)*(void **)a[{i}]" if pointer else f"*({ctype} *)a[{i}]")
        lines += [f"int fake_launch_{name}(void **a, unsigned gx, unsigned gy, unsigned gz, unsigned bx,"
                  " unsigned by, unsigned bz, size_t shared) {",
                  "    cudaGetLastError();",
                  f"    PARAKERN_LAUNCH({name}, dim3(gx, gy, gz), dim3(bx, by, bz), shared, {', '.join(args)});",
                  "    return (int)cudaGetLastError();", "}",
                  f"int fake_set_shared_{name}(int v) {{ return (int)cudaFuncSetAttribute({name}, "
                  "cudaFuncAttributeMaxDynamicSharedMemorySize, v); }",
                  f"void fake_set_registers_{name}(int r) {{ parakern_cpu_set_registers((const void *){name}, r); }}"]
    lines += ["void fake_set_device(int regs, int optin, int threads) {",
              "    parakern_cpu_set_device(regs, (size_t)optin, threads); }",
              "const char *fake_last_message(void) { return parakern_cpu::last_message.c_str(); }", "}", ""]
    return "\n".join(lines)


class Function:
    def __init__(self, module: "Module", name: str, params: list):
        self.module, self.name, self.params = module, name, params

    def get_attribute(self, attribute):
        if attribute == function_attribute.NUM_REGS:
            return self.module.registers.get(self.name, 0)
        raise LogicError(f"fake pycuda: attribute {attribute} not emulated")

    def set_attribute(self, attribute, value):
        if attribute != function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES:
            raise LogicError(f"fake pycuda: attribute {attribute} not emulated")
        if getattr(self.module.lib, f"fake_set_shared_{self.name}")(int(value)) != 0:
            raise LogicError(f"cuFuncSetAttribute failed: {self.module.message()}")

    def __call__(self, *args, grid=(1, 1), block=None, shared=0, stream=None):
        if block is None:
            raise ValueError("must specify block size")
        if len(args) != len(self.params):
            raise TypeError(f"{self.name} takes {len(self.params)} arguments, {len(args)} given")
        keep = []
        for i, (arg, (ctype, pointer)) in enumerate(zip(args, self.params)):
            if pointer:
                if not isinstance(arg, DeviceAllocation):
                    raise TypeError(f"parameter #{i} of {self.name} is a pointer: pass a DeviceAllocation")
                keep.append(ctypes.c_void_p(int(arg)))
            else:
                if not isinstance(arg, np.number):  # pycuda: invalid type on parameter
                    raise TypeError(f"invalid type on parameter #{i} (0-based)")
                if arg.dtype != np.dtype(_NUMPY[ctype]):
                    raise TypeError(f"parameter #{i} of {self.name} is {ctype}, got a {arg.dtype} "
                                    "(pycuda would pass its bytes as they are)")
                keep.append(np.ctypeslib.as_ctypes_type(arg.dtype)(arg.item()))
        pointers = (ctypes.c_void_p * max(1, len(keep)))(*[ctypes.addressof(k) for k in keep])
        grid = tuple(grid) + (1,) * (3 - len(grid))
        block = tuple(block) + (1,) * (3 - len(block))
        status = getattr(self.module.lib, f"fake_launch_{self.name}")(
            pointers, *[ctypes.c_uint(int(v)) for v in grid + block], ctypes.c_size_t(int(shared)))
        if status != 0:
            raise LaunchError(f"cuLaunchKernel failed: {self.module.message()}")


class Module:
    def __init__(self, payload: dict):
        source = payload["source"]
        self.registers = payload.get("registers", {})
        self.kernels = _kernels(source)
        text = source + _glue(self.kernels)
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        library = _WORK / f"module_{digest}.so"
        if not library.exists():
            src = _WORK / f"module_{digest}.cpp"
            src.write_text(text)
            done = subprocess.run(["g++", "-std=c++17", "-O1", "-fPIC", "-pthread", "-shared", "-w", *_FMA,
                                   "-include", str(HEADER), str(src), "-o", str(library)],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise LogicError("cuModuleLoad failed (fake: g++ on the emulation):\n" + done.stderr[-2000:])
        self.lib = ctypes.CDLL(str(library))
        self.lib.fake_last_message.restype = ctypes.c_char_p
        self.lib.fake_set_device(*_limits())
        for name in self.kernels:
            getattr(self.lib, f"fake_set_registers_{name}")(int(self.registers.get(name, 0)))

    def message(self) -> str:
        return (self.lib.fake_last_message() or b"").decode(errors="replace")

    def get_function(self, name: str) -> Function:
        if name not in self.kernels:
            raise LogicError(f"cuModuleGetFunction failed: named symbol not found ({name})")
        return Function(self, name, self.kernels[name])


def module_from_file(filename: str) -> Module:
    _need_init()
    if not _contexts:
        raise LogicError("cuModuleLoad failed: no context")
    try:
        payload = json.loads(Path(filename).read_text())
    except (OSError, ValueError):
        raise LogicError(f"cuModuleLoad failed: {filename} is not a cubin of the fake nvcc") from None
    return Module(payload)
