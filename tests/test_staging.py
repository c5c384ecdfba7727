"""Shared-memory staging of cached arrays: the IR, the PTX, and execution against serial C.

The staged kernels run on the CPU phase by phase (load, body, write-back:
the code between barriers), each block with its own scratch buffer of
exactly the dynamic shared size, poisoned so that a read of an element that
was never loaded gives a wrong result, and guarded past its end.
"""
from __future__ import annotations

import dataclasses
import random
import shutil
from ctypes import c_float, c_int
from pathlib import Path

import llvmlite.binding as llvm
import pytest
import sympy

from parakern.counters.registers import RegisterCounter, ptxas_info
from parakern.counters.shared_memory import SharedMemoryCounter
from parakern.frontend import analyze_file, analyze_source
from parakern.ir import (LEVELS, GlobalMemory, HostKernel, LoweringError, SharedMemory, default_memory, emit_ptx,
                         lower, optimize, parameter_values)
from parakern.kernel import Kernel

ROOT = Path(__file__).resolve().parents[1]
PTXAS = shutil.which("ptxas")
GCC = shutil.which("gcc")
needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc is needed to run the serial C program")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas not on PATH")

# (sample, cached arrays or None for the sample's own cache(...))
STAGED = [("jacobi1d", None), ("transpose", None), ("polydiv", None), ("stencil2d", None),
          ("matmul", ("a", "b")), ("matmul", ("a", "b", "c"))]


def sample_kernel(name: str, cached=None) -> Kernel:
    result = analyze_file(ROOT / "samples" / f"{name}.c")
    assert result.schedules, [d.format() for d in result.diagnostics]
    kernel = Kernel.initial(result.schedules[0])
    return kernel if cached is None else dataclasses.replace(kernel, cached=tuple(cached))


def source_kernel(text: str) -> Kernel:
    result = analyze_source(text, "case.c")
    assert result.schedules, [d.format() for d in result.diagnostics]
    return Kernel.initial(result.schedules[0])


def array(ctype, values):
    return (ctype * len(values))(*values)


def check_shared_bytes(host: HostKernel, kernel: Kernel, params: dict) -> None:
    """The buffer the launch used is the shared-memory counter's polynomial at its parameters."""
    counted = sympy.sympify(SharedMemoryCounter().evaluate(kernel))
    assert host.shared_bytes == counted.subs(parameter_values(kernel.schedule, params)) > 0


# ------------------------------------------------------------------ IR and PTX


def ids(case):
    name, cached = case
    return name + ("" if cached is None else "[" + ",".join(cached) + "]")


@pytest.mark.parametrize("case", STAGED, ids=ids)
def test_staged_kernel_verifies_and_uses_shared_memory_and_barriers(case):
    kernel = sample_kernel(*case)
    assert isinstance(default_memory(kernel), SharedMemory)
    module = lower(kernel)
    text = str(module)
    llvm.parse_assembly(text).verify()
    assert "addrspace(3)" in text and "[0 x i8]" in text and "llvm.nvvm.barrier0" in text
    for level in LEVELS:
        ptx = emit_ptx(optimize(module, level))
        assert ".extern .shared" in ptx and "st.shared" in ptx and "ld.shared" in ptx
        assert "bar.sync" in ptx
        if PTXAS is not None:
            assert ptxas_info(PTXAS, ptx, "sm_80").registers > 0
    if PTXAS is not None:
        assert RegisterCounter().measure(kernel).value > 0


@pytest.mark.parametrize("case", STAGED, ids=ids)
def test_staged_bytes_are_the_shared_memory_counter(case):
    kernel = sample_kernel(*case)
    assert sympy.expand(SharedMemory(kernel).bytes - SharedMemoryCounter().evaluate(kernel)) == 0


def test_uncached_kernel_keeps_global_memory():
    kernel = sample_kernel("matmul")
    assert kernel.cached == () and isinstance(default_memory(kernel), GlobalMemory)
    assert "addrspace(3)" not in str(lower(kernel))


def test_host_variant_is_the_same_code_split_in_phases():
    kernel = sample_kernel("jacobi1d")
    host, device = str(lower(kernel, host=True)), str(lower(kernel))
    assert "addrspace" not in host and "nvvm" not in host
    assert 'i32 %"tid_z", i8* %"shared", i32 %"epoch")' in host and host.count("define i32") == 1
    # one barrier after the load; a whole write-back of a's written half needs a second one
    assert device.count("call void @\"llvm.nvvm.barrier0\"()") == 2
    assert host.count("phase.run") > 0 and "phase.body" in host


def test_write_back_only_where_the_block_writes_every_element():
    plans = {name: {st.array.name: st for st in SharedMemory(sample_kernel(name, cached)).staged.values()}
             for name, cached in (("jacobi1d", None), ("transpose", None), ("polydiv", None),
                                  ("matmul", ("a", "b", "c")))}
    jacobi = plans["jacobi1d"]["a"]
    assert [[r.write_back for r in c.regions] for c in jacobi.choices] == [[False, True], [False, True]]
    assert [[r.load for r in c.regions] for c in jacobi.choices] == [[True, False], [True, False]]
    assert [r.write_back for r in plans["transpose"]["c"].choices[0].regions] == [True]
    assert [r.load for r in plans["transpose"]["c"].choices[0].regions] == [False]
    assert [r.write_back for r in plans["matmul"]["c"].choices[0].regions] == [True]
    # c's tile stays put while k runs: staged once around the k loop; a and b move with k
    assert [[r.hoisted for r in plans["matmul"][x].choices[0].regions] for x in "abc"] == [[False], [False], [True]]
    # polydiv writes under a bounds check: written through, and its regions may overlap
    polydiv = plans["polydiv"]["a"].choices[0]
    assert polydiv.overlapping and not any(r.write_back for r in polydiv.regions)


# ------------------------------------------------------------------ execution vs serial C

LEVELS_RUN = (0, 2)


@needs_gcc
@pytest.mark.parametrize("level", LEVELS_RUN)
@pytest.mark.parametrize("N,s,B,T", [(10, 2, 2, 4), (13, 2, 2, 3), (14, 1, 3, 5)])
def test_jacobi1d_staged_runs_like_serial_c(serial, level, N, s, B, T):
    rng = random.Random(N)
    a = [rng.randrange(0, 3000) for _ in range(2 * N)]
    expected = array(c_int, a)
    serial("jacobi1d").jacobi1d(N, T, s, B, expected)
    got = array(c_int, a)
    kernel = sample_kernel("jacobi1d")
    host = HostKernel(kernel, level)
    for t in range(T):  # the host loop: one launch per time step, both uniform branches
        params = dict(N=N, s=s, B=B, t=t)
        host.launch(dict(params, a=got))
        check_shared_bytes(host, kernel, params)
    assert list(got) == list(expected)


@needs_gcc
@pytest.mark.parametrize("level", LEVELS_RUN)
@pytest.mark.parametrize("N,B0,B1,s", [(16, 4, 2, 2), (12, 3, 2, 3), (6, 6, 1, 2)])
def test_transpose_staged_runs_like_serial_c(serial, level, N, B0, B1, s):
    a = [float(i) for i in range(N * N)]
    expected = array(c_float, [0.0] * (N * N))
    serial("transpose").transpose(N, B0, B1, s, array(c_float, a), expected)
    got = array(c_float, [-1.0] * (N * N))  # every element must be written back
    kernel = sample_kernel("transpose")
    host = HostKernel(kernel, level)
    params = dict(N=N, B0=B0, B1=B1, s=s)
    host.launch(dict(params, a=array(c_float, a), c=got))
    check_shared_bytes(host, kernel, params)
    assert list(got) == list(expected)


@needs_gcc
@pytest.mark.parametrize("level", LEVELS_RUN)
@pytest.mark.parametrize("N0,M,P,s,B", [(13, 5, 7, 2, 2), (15, 7, 11, 2, 2), (9, 4, 5, 1, 4)])
def test_polydiv_staged_runs_like_serial_c(serial, level, N0, M, P, s, B):
    rng = random.Random(N0 * M)
    a = [rng.randrange(P) for _ in range(N0)]
    b = [rng.randrange(P) for _ in range(M - 1)] + [1]
    expected = array(c_int, a)
    serial("polydiv").polydiv(N0, M, P, s, B, expected, array(c_int, b))
    got = array(c_int, a)
    kernel = sample_kernel("polydiv")
    host = HostKernel(kernel, level)
    for N in range(N0, M - 1, -1):  # the last block is partial when s*B does not divide M-1
        params = dict(N=N, M=M, P=P, s=s, B=B)
        host.launch(dict(params, a=got, b=array(c_int, b)))
        check_shared_bytes(host, kernel, params)
    assert list(got) == list(expected)
    assert list(got) != a


@needs_gcc
@pytest.mark.parametrize("level", LEVELS_RUN)
@pytest.mark.parametrize("N,Bx,By", [(11, 4, 2), (10, 4, 4), (5, 2, 3)])
def test_stencil2d_staged_runs_like_serial_c(serial, level, N, Bx, By):
    rng = random.Random(N * Bx)
    grid = [rng.uniform(0, 1) for _ in range(N * N)]
    expected = array(c_float, [0.0] * (N * N))
    serial("stencil2d").stencil2d(N, Bx, By, array(c_float, grid), expected)
    got = array(c_float, [0.0] * (N * N))
    kernel = sample_kernel("stencil2d")
    host = HostKernel(kernel, level)
    params = dict(N=N, Bx=Bx, By=By)  # edge tiles stick out of the array: their loads are skipped
    host.launch(dict(params, **{"in": array(c_float, grid)}, out=got))
    check_shared_bytes(host, kernel, params)
    assert list(got) == list(expected)


@needs_gcc
@pytest.mark.parametrize("level", LEVELS_RUN)
@pytest.mark.parametrize("cached", [("a", "b"), ("a", "b", "c")], ids=",".join)
@pytest.mark.parametrize("n,B0,ub1,s", [(8, 2, 2, 2), (12, 3, 2, 2)])
def test_matmul_staged_tiles_per_k_run_like_serial_c(serial, level, cached, n, B0, ub1, s):
    rng = random.Random(n + B0)
    a = [rng.uniform(-1, 1) for _ in range(n * n)]
    b = [rng.uniform(-1, 1) for _ in range(n * n)]
    c = [rng.uniform(-1, 1) for _ in range(n * n)]
    expected = array(c_float, c)
    serial("matmul").matmul(n, B0, ub1, s, array(c_float, a), array(c_float, b), expected)
    got = array(c_float, c)
    kernel = sample_kernel("matmul", cached)
    host = HostKernel(kernel, level)
    params = dict(n=n, B0=B0, ub1=ub1, s=s)
    host.launch(dict(params, a=array(c_float, a), b=array(c_float, b), c=got))
    check_shared_bytes(host, kernel, params)
    assert list(got) == pytest.approx(list(expected), rel=1e-5, abs=1e-6)
    assert list(got) != c


# Even threads update their own element; odd thread i writes a[n-1-i], which for
# odd n is odd and in another block's window. No two iterations touch one
# element, yet a whole-window write-back would put a block's stale odd elements
# over what other blocks wrote: the writes are guarded, so they go through.
MIRROR = """
#include "metafork.h"
void mirror(int n, int B, int a[n], int b[n])
{
    int blocks = n / B;
    meta_schedule cache(a) {
        meta_for (int g = 0; g < blocks; g++)
            meta_for (int t = 0; t < B; t++) {
                int i = g * B + t;
                if (i % 2 == 0)
                    a[i] = a[i] + b[i];
                else
                    a[n - 1 - i] = 3 * b[i];
            }
    }
}
"""


# One cluster per block, [g*B - 1, g*B + B): odd threads add their even left
# neighbour, which nobody writes. The window's first element is odd and written
# by the block before; a whole-window write-back would put it back stale.
HALO = """
#include "metafork.h"
void halo(int n, int B, int a[n], int b[n])
{
    int blocks = n / B;
    meta_schedule cache(a) {
        meta_for (int g = 0; g < blocks; g++)
            meta_for (int t = 0; t < B; t++) {
                int i = g * B + t;
                if (i % 2 == 1)
                    a[i] = a[i] + a[i - 1] + b[i];
            }
    }
}
"""


@needs_gcc
@pytest.mark.parametrize("level", LEVELS_RUN)
@pytest.mark.parametrize("text,n,B", [(MIRROR, 15, 4), (MIRROR, 13, 2), (MIRROR, 11, 5),
                                      (HALO, 12, 4), (HALO, 13, 2)], ids=["mirror", "mirror", "mirror", "halo", "halo"])
def test_guarded_writes_do_not_clobber_other_blocks(serial, level, text, n, B):
    kernel = source_kernel(text)
    choices = SharedMemory(kernel).staged["a"].choices
    assert not any(r.write_back for c in choices for r in c.regions)
    assert choices[0].overlapping == (text is MIRROR)
    rng = random.Random(n)
    a = [rng.randrange(-100, 100) for _ in range(n)]
    b = [rng.randrange(-100, 100) for _ in range(n)]
    expected = array(c_int, a)
    getattr(serial(text=text), kernel.schedule.function)(n, B, expected, array(c_int, b))
    got = array(c_int, a)
    host = HostKernel(kernel, level)
    host.launch(dict(n=n, B=B, a=got, b=array(c_int, b)))
    check_shared_bytes(host, kernel, dict(n=n, B=B))
    assert list(got) == list(expected)


# a[i] and a[m + i] are two clusters a symbolic distance m apart; with m = 0 each
# thread reads back, through the second, the element it wrote through the first.
ALIAS = """
#include "metafork.h"
void alias(int n, int B, int m, int a[n], int b[n], int y[n])
{
    int blocks = n / B;
    meta_schedule cache(a) {
        meta_for (int g = 0; g < blocks; g++)
            meta_for (int t = 0; t < B; t++) {
                int i = g * B + t;
                a[i] = 2 * b[i];
                y[i] = a[m + i] + 1;
            }
    }
}
"""


@needs_gcc
@pytest.mark.parametrize("level", LEVELS_RUN)
def test_overlapping_clusters_share_one_copy_of_an_element(serial, level):
    n, B, m = 12, 4, 0
    kernel = source_kernel(ALIAS)
    assert SharedMemory(kernel).staged["a"].choices[0].overlapping
    rng = random.Random(9)
    a, b = [rng.randrange(100) for _ in range(n)], [rng.randrange(100) for _ in range(n)]
    expected_a, expected_y = array(c_int, a), array(c_int, [0] * n)
    serial(text=ALIAS).alias(n, B, m, expected_a, array(c_int, b), expected_y)
    got_a, got_y = array(c_int, a), array(c_int, [0] * n)
    HostKernel(kernel, level).launch(dict(n=n, B=B, m=m, a=got_a, b=array(c_int, b), y=got_y))
    assert list(got_y) == list(expected_y) == [2 * x + 1 for x in b]
    assert list(got_a) == list(expected_a)


# ------------------------------------------------------------------ what cannot be staged

UNBOUNDED = """
#include "metafork.h"
void squares(int n, int B, float *x, float *y)
{
    int blocks = n / B;
    meta_schedule cache(x) {
        meta_for (int g = 0; g < blocks; g++)
            meta_for (int t = 0; t < B; t++) {
                int i = g * B + t;
                y[i] = x[i * i];
            }
    }
}
"""

STRIDED = """
#include "metafork.h"
void rows(int n, int B, int s, int m, float *A, float *y)
{
    int blocks = n / B;
    meta_schedule cache(A) {
        meta_for (int g = 0; g < blocks; g++)
            meta_for (int t = 0; t < B; t++) {
                int i = g * B + t;
                float acc = 0.0f;
                for (int j = 0; j < m; j++)
                    acc += A[i * s + j];
                y[i] = acc;
            }
    }
}
"""


@pytest.mark.parametrize("text,reason", [(UNBOUNDED, "unbounded"), (STRIDED, "may overlap")],
                         ids=["unbounded", "overlapping-runs"])
def test_unstageable_arrays_are_lowering_errors(text, reason):
    kernel = source_kernel(text)
    with pytest.raises(LoweringError, match=f"cannot stage '{kernel.cached[0]}'.*{reason}") as error:
        lower(kernel)
    assert error.value.span is not None and error.value.span.line == 6  # the cache(...) item
    lower(dataclasses.replace(kernel, cached=()))  # dropping the cache (4b) lowers


# ------------------------------------------------------------------ registers


@needs_ptxas
def test_register_table_cached_vs_uncached():
    counter = RegisterCounter()
    rows = [f"{'sample':22} level  uncached  cached"]
    for name, cached in STAGED:
        kernel = sample_kernel(name, cached)
        for level in LEVELS:
            staged = dataclasses.replace(kernel, ir_level=level)
            plain = dataclasses.replace(staged, cached=())
            a, b = counter.measure(plain).value, counter.measure(staged).value
            assert a > 0 and b > 0
            rows.append(f"{ids((name, cached)):22} {level:5}  {a:8}  {b:6}")
    print("\nregisters per thread (ptxas -arch=sm_80)\n" + "\n".join(rows))


EMPTY_LOOP_1D = """void win(int n, int m, int B, float x[n + m], float y[n])
{
    int g = (n + B - 1) / B;
    meta_schedule cache(x) {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n) {
                    float s = x[i];
                    for (int k = 1; k < m; k += 2)
                        s += x[i + k];
                    y[i] = s;
                }
            }
    }
}
"""
EMPTY_LOOP_2D = """void boxr(int h, int w, int r, int Bx, int By, float img[h][w + r], float out[h][w])
{
    int gy = (h + By - 1) / By, gx = (w + Bx - 1) / Bx;
    meta_schedule cache(img) {
        meta_for (int by = 0; by < gy; by++)
            meta_for (int bx = 0; bx < gx; bx++)
                meta_for (int ty = 0; ty < By; ty++)
                    meta_for (int tx = 0; tx < Bx; tx++) {
                        int i = by * By + ty;
                        int j = bx * Bx + tx;
                        if (i < h && j < w) {
                            float acc = img[i][j];
                            for (int d = 2; d < r; d++)
                                acc += img[i][j + d];
                            out[i][j] = acc;
                        }
                    }
    }
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not on PATH")
@pytest.mark.parametrize("text, sid, values", [
    (EMPTY_LOOP_1D, "win:0", dict(n=61, m=1, B=48)),
    (EMPTY_LOOP_1D, "win:0", dict(n=61, m=0, B=48)),
    (EMPTY_LOOP_1D, "win:0", dict(n=61, m=6, B=48)),
    (EMPTY_LOOP_2D, "boxr:0", dict(h=33, w=199, r=1, Bx=3, By=48)),
    (EMPTY_LOOP_2D, "boxr:0", dict(h=33, w=199, r=5, Bx=3, By=48))])
def test_a_serial_loop_that_runs_no_iteration_leaves_the_other_reads_staged(text, sid, values):
    """A thread's serial loop may run no iteration (m = 1, r = 1) while a read outside it still
    reads: the tile was sized as if the loop ran (B - 1 elements for B threads' x[i]), and the
    2-D load copied what the reads of the loop's first iteration would need (2 columns short):
    the staged case computed garbage there. Every case that holds runs against the serial C."""
    from parakern.verify import Session
    from parakern.verify.points import device
    with Session(text, "t.c") as session:
        tree = session.analysis.results[0].tree
        assert any(c.kernel.cached for c in tree.cases)
        point = session.run(sid, values, device(65536, 1 << 16, 1024))
        assert point.ok and not point.mismatches, (point.error, point.mismatches)
        assert tree.cases[point.expected - 1].kernel.cached     # the staged case ran


GUARDED_WRITE = """#include "metafork.h"
void tr(int n, int B0, int B1, float a[n][n], float c[n][n])
{
    int g0 = (n + B0 - 1) / B0, g1 = (n + B1 - 1) / B1;
    meta_schedule cache(c) {
        meta_for (int v0 = 0; v0 < g0; v0++)
            meta_for (int v1 = 0; v1 < g1; v1++)
                meta_for (int u0 = 0; u0 < B0; u0++)
                    meta_for (int u1 = 0; u1 < B1; u1++) {
                        int i = v0 * B0 + u0, j = v1 * B1 + u1;
                        if (i < n && j < n)
                            c[j][i] = a[i][j];
                    }
    }
}
"""


def test_an_array_written_under_a_condition_of_the_thread_and_never_read_is_not_staged():
    """cache(c) of a transpose with a bounds test: the tile was neither loaded nor written back
    (the writes went to global memory), yet case 1 claimed 4*B0*B1 bytes of shared memory."""
    from parakern.pipeline import analyze
    (result,) = analyze(GUARDED_WRITE, "t.c").results
    (warning,) = [d for d in result.diagnostics if d.code == "PK031"]
    assert (warning.span.line, warning.span.col) == (5, 25)
    assert warning.message.startswith("cannot stage 'c': the block writes it under a condition of the thread "
                                      "(the `if` of line 11)")
    assert all(sympy.sympify(c.counter("shared_memory")) == 0 for c in result.tree.cases)


SOFTMAX_LOOPS = """#include "metafork.h"
void sm(int m, int n, int B, float x[m][n], float y[m])
{
    meta_schedule cache(x) {
        meta_for (int b = 0; b < m / B; b++)
            meta_for (int t = 0; t < B; t++) {
                int r = b * B + t;
                float s = x[r][0];
                for (int j = 1; j < n; j++)
                    s += x[r][j];
                for (int j = 0; j < n; j++)
                    s += x[r][j];
                y[r] = s;
            }
    }
}
"""


def test_two_serial_loops_of_one_name_stage_the_rows_they_read():
    """softmax's loops all named j (from 1, then from 0): the accesses in them were not told
    apart and the whole array was staged, 4*m*n bytes for the 4*B*n its B rows need (each row
    padded by one float: a thread reads a row of its own, analysis/padding.py)."""
    from parakern.pipeline import analyze
    (result,) = analyze(SOFTMAX_LOOPS, "sm.c").results
    staged = [sympy.sympify(c.counter("shared_memory")) for c in result.tree.cases if "(4a)" in c.decisions]
    at = {"B": 32, "n": 64, "m": 4096}
    assert staged and all(x.subs({v: at[v.name] for v in x.free_symbols}) == 4 * 32 * 65 for x in staged), staged


def test_an_array_whose_tile_would_be_all_of_it_is_not_staged():
    """in[i][max(j - 1, 0)] (a clamp): not affine, its footprint the whole array, which case 1
    staged (4*h*w bytes, copied by every block) with no word; the dispatcher preferred it."""
    from parakern.pipeline import analyze
    source = """int max(int a, int b);
void blur(int h, int w, int Bx, int By, float in[h][w], float out[h][w])
{
    meta_schedule cache(in) {
        meta_for (int by = 0; by < h / By; by++)
            meta_for (int bx = 0; bx < w / Bx; bx++)
                meta_for (int ty = 0; ty < By; ty++)
                    meta_for (int tx = 0; tx < Bx; tx++) {
                        int i = by * By + ty, j = bx * Bx + tx;
                        out[i][j] = 0.5f * in[i][max(j - 1, 0)] + 0.5f * in[i][j];
                    }
    }
}
"""
    (result,) = analyze(source, "blur.c").results
    (warning,) = [d for d in result.diagnostics if d.code == "PK031"]
    assert warning.message.startswith("cannot stage 'in': a subscript of it is not affine")
    assert "its tile would be the whole array, copied by every block" in warning.message
    assert all(sympy.sympify(c.counter("shared_memory")) == 0 for c in result.tree.cases)
