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

import llvmlite.binding as llvm
import pytest
import sympy

from parakern.counters.registers import RegisterCounter, ptxas_info
from parakern.ir import LEVELS, HostKernel, SharedMemory, default_memory, emit_ptx, lower, optimize
from unit.test_staging import (
    ALIAS,
    EMPTY_LOOP_1D,
    EMPTY_LOOP_2D,
    GUARDED_WRITE,
    HALO,
    LEVELS_RUN,
    MIRROR,
    PTXAS,
    SOFTMAX_LOOPS,
    STAGED,
    array,
    check_shared_bytes,
    ids,
    needs_gcc,
    needs_ptxas,
    sample_kernel,
    source_kernel,
)


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
    from parakern.verify.points import TREE, device
    with Session(text, "t.c") as session:
        tree = session.analysis.results[0].tree
        assert any(c.kernel.cached for c in tree.cases)
        # the tree's order launches the staged case (the default dispatcher may prefer another)
        point = session.run(sid, values, device(65536, 1 << 16, 1024), rule=TREE)
        assert point.ok and not point.mismatches, (point.error, point.mismatches)
        assert tree.cases[point.expected - 1].kernel.cached     # the staged case ran


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


def test_two_serial_loops_of_one_name_stage_the_rows_they_read():
    """softmax's loops all named j (from 1, then from 0): the accesses in them were not told
    apart and the whole array was staged, 4*m*n bytes for the 4*B*n its B rows need (each row
    padded by one float: a thread reads a row of its own, analysis/padding.py)."""
    from parakern.pipeline import analyze
    (result,) = analyze(SOFTMAX_LOOPS, "sm.c").results
    staged = [sympy.sympify(c.counter("shared_memory")) for c in result.tree.cases if "(4a)" in c.decisions]
    at = {"B": 32, "n": 64, "m": 4096}
    assert staged and all(x.subs({v: at[v.name] for v in x.free_symbols}) == 4 * 32 * 65 for x in staged), staged
