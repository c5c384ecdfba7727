"""Shared-memory staging of cached arrays: the IR, the PTX, and execution against serial C.

The staged kernels run on the CPU phase by phase (load, body, write-back:
the code between barriers), each block with its own scratch buffer of
exactly the dynamic shared size, poisoned so that a read of an element that
was never loaded gives a wrong result, and guarded past its end.
"""
from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
import sympy

from parakern.counters.shared_memory import SharedMemoryCounter
from parakern.frontend import analyze_file, analyze_source
from parakern.ir import GlobalMemory, HostKernel, LoweringError, SharedMemory, default_memory, lower, parameter_values
from parakern.kernel import Kernel

ROOT = Path(__file__).resolve().parents[2]
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



def test_a_region_nothing_reads_is_not_loaded_where_regions_may_overlap():
    """MIRROR's second region (a[n - 1 - i]) is only written, through to global memory: loading
    it would read elements other blocks write (a race), for values no access reads. The first
    region, which a[i] reads, is loaded."""
    (staged,) = SharedMemory(source_kernel(MIRROR)).staged.values()
    (choice,) = staged.choices
    assert choice.overlapping
    assert [r.load for r in choice.regions] == [True, False]


def test_a_staged_array_the_block_only_writes_down_both_halves_is_refused_at_its_name():
    """covariance's cov[i][j] and cov[j][i] under `j >= i`: two regions that may overlap, written
    through, never read. Loading them raced with the blocks that write the mirrored tile (verify
    found it: cov[5][2] written by block (0, 0), loaded by block (0, 1)); staged without loads,
    the tile does nothing, so cache(cov) is refused where it is named and no case stages it."""
    from parakern.pipeline import analyze
    text = (ROOT / "samples" / "polybench" / "covariance.c").read_text()
    head, third = text.rsplit("meta_schedule {", 1)
    source = head + "meta_schedule cache(cov) {" + third
    line = source[:source.index("cache(cov)")].count("\n") + 1
    col = source.index("cache(cov)") - source.rfind("\n", 0, source.index("cache(cov)")) + len("cache(")
    result = next(r for r in analyze(source, "covariance.c").results if any(c.name == "cov" for c in r.schedule.cache))
    (warning,) = [d for d in result.diagnostics if d.code == "PK031"]
    assert (warning.span.line, warning.span.col) == (line, col)
    assert warning.message.startswith("cannot stage 'cov'") and "it reads none of it" in warning.message
    assert all(sympy.sympify(c.counter("shared_memory")) == 0 for c in result.tree.cases)
