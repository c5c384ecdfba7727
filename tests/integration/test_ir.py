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
from ctypes import c_double, c_float, c_int, c_uint

import llvmlite.binding as llvm
import pytest

from parakern.counters.registers import ptxas_info
from parakern.frontend import analyze_file
from parakern.ir import LEVELS, HostKernel, emit_ptx, kernel_name, lower, optimize
from parakern.kernel import Kernel
from unit.test_ir import LEVELS_RUN, OPERATORS, PTXAS, SAMPLES, array, needs_gcc, sample_kernel, source_kernel


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
