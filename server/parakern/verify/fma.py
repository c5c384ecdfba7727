"""How the CPU emulation rounds like a GPU: nvcc contracts a * b + c into one fused
multiply-add (--fmad=true, its default) and gcc -O1 does not, so the emulated kernels are
compiled with contraction, with the FMA instructions where the host has them (x86-64 with
FMA; elsewhere -ffp-contract=fast uses what the target has). verify then meets the rounding
a GPU gives. Standard library only: the test doubles of nvcc and pycuda load this file too.
"""
from __future__ import annotations


def host_has_fma(cpuinfo: str = "/proc/cpuinfo") -> bool:
    try:
        with open(cpuinfo) as f:
            return any(line.startswith("flags") and "fma" in line.split(":", 1)[-1].split() for line in f)
    except OSError:
        return False


def fma_flags() -> list:
    """g++ flags that make floating code round as nvcc's does."""
    # gcc forms FMAs in a pass of -O2 (-fexpensive-optimizations); the emulation is built at -O1
    return ["-ffp-contract=fast", "-fexpensive-optimizations"] + (["-mfma"] if host_has_fma() else [])
