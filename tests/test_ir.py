"""Lowering to LLVM IR: every sample assembles, and the IR is the program.

Semantics are checked by execution: the same kernel is lowered for the host
(thread and block indices as arguments), JIT-compiled with MCJIT, run for
every (block, thread) of a small launch, and compared with the serial C
program compiled by gcc.
"""
from __future__ import annotations

import ctypes
import dataclasses
import math
import random
import shutil
from ctypes import c_double, c_float, c_int, c_uint
from pathlib import Path

import llvmlite.binding as llvm
import pytest

from parakern.counters.registers import ptxas_info
from parakern.frontend import analyze_file, analyze_source
from parakern.ir import (LEVELS, GlobalMemory, HostKernel, argument_names, emit_ptx,
                         kernel_name, kernel_ptx, launch_dims, lower, optimize)
from parakern.kernel import Kernel

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted((ROOT / "samples").glob("*.c"))
PTXAS = shutil.which("ptxas")
GCC = shutil.which("gcc")

needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc is needed to run the serial C program")


def sample_kernel(name: str) -> Kernel:
    result = analyze_file(ROOT / "samples" / f"{name}.c")
    assert result.schedules, [d.format() for d in result.diagnostics]
    return Kernel.initial(result.schedules[0])


def source_kernel(text: str) -> Kernel:
    result = analyze_source(text, "case.c")
    assert result.schedules, [d.format() for d in result.diagnostics]
    return Kernel.initial(result.schedules[0])


def array(ctype, values):
    return (ctype * len(values))(*values)


# ------------------------------------------------------------------ every sample


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_sample_lowers_verifies_and_assembles(path, level):
    kernel = dataclasses.replace(Kernel.initial(analyze_file(path).schedules[0]), ir_level=level)
    module = lower(kernel)
    llvm.parse_assembly(str(module)).verify()
    optimized = optimize(module, level)
    ptx = emit_ptx(optimized)
    assert f".entry {kernel_name(kernel.schedule)}(" in ptx
    if PTXAS is None:
        pytest.skip("ptxas not on PATH")
    assert ptxas_info(PTXAS, ptx, "sm_80").registers > 0


def test_kernel_signature_and_metadata():
    kernel = sample_kernel("saxpy")
    text = str(lower(kernel))
    assert 'target triple = "nvptx64-nvidia-cuda"' in text
    assert '!"kernel", i32 1' in text and "!nvvm.annotations" in text
    # arrays (global pointers) first, then parameters by C type; the derived `blocks` is no argument
    assert argument_names(kernel.schedule) == ("y", "x", "n", "B", "alpha")
    assert ('define void @"saxpy_kernel0"(float addrspace(1)* %"y", float addrspace(1)* %"x", '
            'i32 %"n", i32 %"B", float %"alpha")') in text
    assert "llvm.nvvm.read.ptx.sreg.ctaid.x" in text and "llvm.nvvm.read.ptx.sreg.tid.x" in text


def test_grid_and_block_axes_map_to_ctaid_and_tid():
    text = str(lower(sample_kernel("matadd")))
    for register in ("ctaid.x", "ctaid.y", "tid.x", "tid.y"):
        assert f"llvm.nvvm.read.ptx.sreg.{register}" in text
    assert "ctaid.z" not in text and "tid.z" not in text
    assert launch_dims(sample_kernel("matadd").schedule, {"N": 16, "B0": 4, "B1": 2}) == ((4, 4, 1), (2, 4, 1))


def test_host_variant_takes_indices_as_arguments():
    text = str(lower(sample_kernel("saxpy"), host=True))
    assert "nvvm" not in text and "addrspace" not in text
    assert 'i32 %"ctaid_x", i32 %"ctaid_y", i32 %"ctaid_z", i32 %"tid_x", i32 %"tid_y", i32 %"tid_z")' in text


def test_levels_above_zero_mark_loops_nounroll():
    kernel = sample_kernel("matvec")
    assert '.pragma "nounroll"' in kernel_ptx(kernel, 1)
    assert "llvm.loop.unroll.disable" in str(lower(dataclasses.replace(kernel, ir_level=1)))
    assert "llvm.loop.unroll.disable" not in str(lower(kernel))


def test_kernel_ptx_is_cached_per_variant():
    kernel = sample_kernel("transpose")
    assert kernel_ptx(kernel) is kernel_ptx(dataclasses.replace(kernel, decisions=("(2)",)))
    assert kernel_ptx(kernel, 0) != kernel_ptx(kernel, 1)


def test_memory_hook_sees_every_access_and_body():
    class Recording(GlobalMemory):
        def __init__(self):
            self.arrays, self.bodies = [], 0

        def before_body(self, fn):
            self.bodies += 1

        def address(self, fn, array, subscripts):
            self.arrays.append((array.name, len(subscripts)))
            return super().address(fn, array, subscripts)

    memory = Recording()
    lower(sample_kernel("matmul"), memory=memory)
    assert memory.bodies == 1
    assert sorted(set(memory.arrays)) == [("a", 2), ("b", 2), ("c", 2)]
    assert len(memory.arrays) == 3  # `c[..] += ..` takes its address once, as C evaluates it once


# ------------------------------------------------------------------ semantics


LEVELS_RUN = (0, 2)


@needs_gcc
@pytest.mark.parametrize("level", LEVELS_RUN)
def test_matadd_runs_like_serial_c(serial, level):
    N, B0, B1 = 16, 4, 2
    rng = random.Random(1)
    a = [rng.randrange(-1000, 1000) for _ in range(N * N)]
    b = [rng.randrange(-1000, 1000) for _ in range(N * N)]
    expected = array(c_int, [-7] * (N * N))
    serial("matadd").matadd(N, B0, B1, array(c_int, a), array(c_int, b), expected)
    got = array(c_int, [-7] * (N * N))
    HostKernel(sample_kernel("matadd"), level).launch(
        dict(N=N, B0=B0, B1=B1, a=array(c_int, a), b=array(c_int, b), c=got))
    assert list(got) == list(expected)


@needs_gcc
@pytest.mark.parametrize("level", LEVELS_RUN)
def test_saxpy_runs_like_serial_c(serial, level):
    n, B, alpha = 37, 8, 1.5  # n not a multiple of B: the guard matters
    rng = random.Random(2)
    x = [rng.uniform(-10, 10) for _ in range(n)]
    y = [rng.uniform(-10, 10) for _ in range(n)]
    expected = array(c_float, y)
    serial("saxpy").saxpy(n, B, c_float(alpha), array(c_float, x), expected)
    got = array(c_float, y)
    HostKernel(sample_kernel("saxpy"), level).launch(dict(n=n, B=B, alpha=alpha, x=array(c_float, x), y=got))
    assert list(got) == list(expected)


@needs_gcc
@pytest.mark.parametrize("level", LEVELS_RUN)
def test_jacobi1d_time_steps_run_like_serial_c(serial, level):
    s, B, T = 2, 4, 4
    N = 2 + 2 * s * B  # dim = (N-2)/(s*B) = 2 blocks
    rng = random.Random(3)
    a = [rng.randrange(0, 3000) for _ in range(2 * N)]
    expected = array(c_int, a)
    serial("jacobi1d").jacobi1d(N, T, s, B, expected)
    got = array(c_int, a)
    kernel = HostKernel(sample_kernel("jacobi1d"), level)
    for t in range(T):  # the host loop: one launch per time step
        kernel.launch(dict(N=N, s=s, B=B, t=t, a=got))
    assert list(got) == list(expected)


@needs_gcc
@pytest.mark.parametrize("level", LEVELS_RUN)
def test_transpose_runs_like_serial_c(serial, level):
    N, B0, B1, s = 16, 4, 2, 2
    a = [float(i) for i in range(N * N)]
    expected = array(c_float, [0.0] * (N * N))
    serial("transpose").transpose(N, B0, B1, s, array(c_float, a), expected)
    got = array(c_float, [0.0] * (N * N))
    HostKernel(sample_kernel("transpose"), level).launch(dict(N=N, B0=B0, B1=B1, s=s, a=array(c_float, a), c=got))
    assert list(got) == list(expected)


@needs_gcc
@pytest.mark.parametrize("level", LEVELS_RUN)
def test_polydiv_steps_run_like_serial_c(serial, level):
    N0, M, P, s, B = 13, 5, 7, 2, 2
    rng = random.Random(4)
    a = [rng.randrange(P) for _ in range(N0)]
    b = [rng.randrange(P) for _ in range(M - 1)] + [1]
    expected = array(c_int, a)
    serial("polydiv").polydiv(N0, M, P, s, B, expected, array(c_int, b))
    got = array(c_int, a)
    kernel = HostKernel(sample_kernel("polydiv"), level)
    for N in range(N0, M - 1, -1):  # the host's while (N >= M) { ...; N--; }
        kernel.launch(dict(N=N, M=M, P=P, s=s, B=B, a=got, b=array(c_int, b)))
    assert list(got) == list(expected)
    assert list(got) != a


@needs_gcc
@pytest.mark.parametrize("level", LEVELS_RUN)
def test_matvec_runs_like_serial_c(serial, level):
    m, n, B = 13, 7, 4
    rng = random.Random(5)
    A = [rng.uniform(-1, 1) for _ in range(m * n)]
    x = [rng.uniform(-1, 1) for _ in range(n)]
    expected = array(c_double, [0.0] * m)
    serial("matvec").matvec(m, n, B, array(c_double, A), array(c_double, x), expected)
    got = array(c_double, [0.0] * m)
    HostKernel(sample_kernel("matvec"), level).launch(
        dict(m=m, n=n, B=B, A=array(c_double, A), x=array(c_double, x), y=got))
    assert list(got) == list(expected)  # same additions in the same order


@needs_gcc
@pytest.mark.parametrize("level", LEVELS_RUN)
def test_matmul_runs_like_serial_c(serial, level):
    n, B0, ub1, s = 8, 2, 2, 2
    rng = random.Random(6)
    a = [rng.uniform(-1, 1) for _ in range(n * n)]
    b = [rng.uniform(-1, 1) for _ in range(n * n)]
    c = [rng.uniform(-1, 1) for _ in range(n * n)]
    expected = array(c_float, c)
    serial("matmul").matmul(n, B0, ub1, s, array(c_float, a), array(c_float, b), expected)
    got = array(c_float, c)
    HostKernel(sample_kernel("matmul"), level).launch(
        dict(n=n, B0=B0, ub1=ub1, s=s, a=array(c_float, a), b=array(c_float, b), c=got))
    assert list(got) == pytest.approx(list(expected), rel=1e-5, abs=1e-6)
    assert list(got) != c


@needs_gcc
def test_stencil2d_runs_like_serial_c(serial):
    N, Bx, By = 11, 4, 2
    rng = random.Random(7)
    grid = [rng.uniform(0, 1) for _ in range(N * N)]
    expected = array(c_float, [0.0] * (N * N))
    serial("stencil2d").stencil2d(N, Bx, By, array(c_float, grid), expected)
    got = array(c_float, [0.0] * (N * N))
    HostKernel(sample_kernel("stencil2d")).launch(dict(N=N, Bx=Bx, By=By, **{"in": array(c_float, grid)}, out=got))
    assert list(got) == list(expected)


# ------------------------------------------------------------------ C semantics

DIVISION = """
#include "metafork.h"
void divide(int n, int B, int d, unsigned e, int a[n], int q[n], int r[n], unsigned u[n], unsigned uq[n], unsigned ur[n])
{
    int blocks = n / B;
    meta_schedule {
        meta_for (int b = 0; b < blocks; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                q[i] = a[i] / d;
                r[i] = a[i] % d;
                uq[i] = u[i] / e;
                ur[i] = u[i] % e;
            }
    }
}
"""


def _c_div(a: int, d: int) -> tuple[int, int]:
    q = abs(a) // abs(d) * (1 if (a >= 0) == (d > 0) else -1)  # C truncates toward zero
    return q, a - q * d


@pytest.mark.parametrize("d", [3, -3, 7, -7])
def test_division_and_modulo_follow_c_on_negative_operands(d):
    n, B, e = 16, 4, 5
    a = [-9, -8, -7, -6, -5, -3, -1, 0, 1, 3, 5, 6, 7, 8, 9, -2147483647]
    u = [0xFFFFFFF0 - i for i in range(n)]  # would be negative as int: udiv differs from sdiv
    q, r, uq, ur = array(c_int, [0] * n), array(c_int, [0] * n), array(c_uint, [0] * n), array(c_uint, [0] * n)
    HostKernel(source_kernel(DIVISION)).launch(
        dict(n=n, B=B, d=d, e=e, a=array(c_int, a), q=q, r=r, u=array(c_uint, u), uq=uq, ur=ur))
    assert list(zip(q, r)) == [_c_div(x, d) for x in a]
    assert list(uq) == [x // e for x in u] and list(ur) == [x % e for x in u]


OPERATORS = r"""#include <math.h>
#include "metafork.h"
#define HALF 0.5f

void ops(int n, int B, int d, unsigned u, double w, int a[n], unsigned ua[n], float f[n], double g[n], int o[n][8], float fo[n][4], double go[n][2])
{
    int blocks = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < blocks; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n && a[i] != 0 || i == 0) {
                    int x = a[i];
                    unsigned y = ua[i];
                    o[i][0] = x / d + x % d;
                    o[i][1] = (int)(y / u + y % u) + (y > 3u ? 1 : -1);
                    o[i][2] = (x << 2) ^ (x >> 3) ^ (~x & 12) | 5;
                    o[i][3] = !x + -x + (x > 0 ? x : -x) * 3;
                    int acc = 0;
                    for (int k = 1; k < 9; k += 2) {
                        int x = k * 2;
                        acc += x;
                        acc -= k;
                    }
                    acc *= 3;
                    acc /= 2;
                    acc %= 7;
                    acc <<= 1;
                    acc |= x & 1;
                    o[i][4] = acc + x;
                    o[i][5] = (int)(f[i] * 10.0f) + (int)g[i] + (unsigned)(x & 255);
                    o[i][6] = blocks + (x < 0 && y > 10u) + (x >= 0 || y == 0u);
                    long long big = (long long)x * 1000000;
                    o[i][7] = (int)(big % 1000003);
                    fo[i][0] = f[i] * HALF + 1.25f;
                    fo[i][1] = sqrtf(fabsf(f[i])) + fminf(f[i], 0.5f) + fmaxf(f[i], -0.5f);
                    fo[i][2] = floorf(f[i]) + ceilf(f[i]) + (float)x / 3;
                    fo[i][3] = x > 2 ? f[i] : (float)w;
                    go[i][0] = sqrt(fabs(g[i])) + floor(g[i]) * w + 0.1;
                    double h = g[i];
                    h += f[i];
                    h *= 2;
                    h -= x;
                    h /= 3;
                    go[i][1] = h + fmin(h, w) + fmax(h, -w) + ceil(h);
                }
            }
    }
}
"""


@needs_gcc
def test_operators_conversions_and_math_run_like_gcc(serial):
    """Ternaries, short-circuit logic, shifts, casts, compound assignments, float/double math."""
    text = OPERATORS
    n, B, d, u, w = 13, 4, -3, 3, 0.75
    rng = random.Random(8)
    a = [0] + [rng.choice([-1, 1]) * rng.randrange(1, 5000) for _ in range(n - 1)]
    ua = [rng.randrange(0, 40) for _ in range(n)]
    f = [rng.uniform(-5, 5) for _ in range(n)]
    g = [rng.uniform(-50, 50) for _ in range(n)]

    def run(call):
        outputs = dict(o=array(c_int, [-1] * (n * 8)), fo=array(c_float, [-1.0] * (n * 4)),
                       go=array(c_double, [-1.0] * (n * 2)))
        call(dict(a=array(c_int, a), ua=array(c_uint, ua), f=array(c_float, f), g=array(c_double, g), **outputs))
        return {k: list(v) for k, v in outputs.items()}

    library = serial(text=text)
    library.ops.argtypes = [c_int, c_int, c_int, c_uint, c_double] + [ctypes.c_void_p] * 7
    expected = run(lambda x: library.ops(n, B, d, u, w, *(ctypes.cast(x[k], ctypes.c_void_p)
                                                         for k in ("a", "ua", "f", "g", "o", "fo", "go"))))
    kernel = HostKernel(source_kernel(text))
    got = run(lambda x: kernel.launch(dict(n=n, B=B, d=d, u=u, w=w, **x)))
    assert got["o"] == expected["o"]
    assert got["fo"] == expected["fo"]
    assert got["go"] == expected["go"]
    assert not any(math.isnan(v) for v in got["go"])
