"""NVIDIA's libdevice (LLVM bitcode shipped with the CUDA toolkit) for exp, log, pow, sin, ...

Math functions without an LLVM intrinsic are called as `__nv_<name>` in the
device IR; this module links libdevice into such a module, makes everything
but the kernels internal and drops what the kernel does not call, so the PTX
holds only the functions used. Without a CUDA toolkit these kernels cannot
be built, and the error says where libdevice was looked for.
"""
from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

import llvmlite.binding as llvm

from parakern.ir.types import LoweringError

PREFIX = "__nv_"


def _candidates() -> list[Path]:
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(str(Path(nvcc).resolve().parent.parent))
    roots.append("/usr/local/cuda")
    return [Path(r) / "nvvm" / "libdevice" / "libdevice.10.bc" for r in roots if r]


@functools.lru_cache(maxsize=1)
def _bitcode() -> "bytes | None":
    for path in _candidates():
        if path.is_file():
            return path.read_bytes()
    return None


def needs_libdevice(ref: llvm.ModuleRef) -> bool:
    return any(f.is_declaration and f.name.startswith(PREFIX) for f in ref.functions)


def link_libdevice(ref: llvm.ModuleRef, pass_builder) -> None:
    """Links libdevice into `ref` (in place) and keeps only what the kernels reach."""
    bitcode = _bitcode()
    if bitcode is None:
        wanted = sorted(f.name[len(PREFIX):] for f in ref.functions
                        if f.is_declaration and f.name.startswith(PREFIX))
        raise LoweringError(
            f"{', '.join(wanted)} need(s) libdevice from the CUDA toolkit, looked for in "
            f"{', '.join(str(p) for p in _candidates())}; set CUDA_HOME to the toolkit")
    kernels = {f.name for f in ref.functions if not f.is_declaration}
    library = llvm.parse_bitcode(bitcode)
    library.triple = ref.triple
    library.data_layout = ref.data_layout
    ref.link_in(library)
    for f in ref.functions:
        if not f.is_declaration and f.name not in kernels:
            f.linkage = "internal"
    pm = llvm.create_new_module_pass_manager()
    pm.add_global_dead_code_eliminate_pass()
    pm.run(ref, pass_builder)
