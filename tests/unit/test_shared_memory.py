"""Shared memory per block = sum over cached arrays of footprint x element size (bytes)."""
from dataclasses import replace

import pytest

from conftest import SAMPLES, same
from parakern.counters.base import Counter
from parakern.counters.shared_memory import SharedMemoryCounter
from parakern.frontend import analyze_file, analyze_source
from parakern.kernel import Kernel
from parakern.symbolic.symbols import Z


def kernel_of(name, **changes):
    kernel = Kernel.initial(analyze_file(SAMPLES / f"{name}.c").schedules[0])
    return replace(kernel, **changes)


COUNTER = SharedMemoryCounter()


def test_counter_identity():
    assert isinstance(COUNTER, Counter)
    assert (COUNTER.name, COUNTER.symbol, COUNTER.unit, COUNTER.kind) == \
        ("shared_memory", Z, "bytes", "resource")


def test_matmul_tiles_staged_per_iteration_of_k():
    measure = COUNTER.measure(kernel_of("matmul", cached=("a", "b")))
    assert same(measure.value, "4*(B0*B0 + B0*ub1*s)") and measure.exact
    assert same(COUNTER.evaluate(kernel_of("matmul", cached=("b",))), "4*B0*ub1*s")


@pytest.mark.parametrize("name", ["saxpy", "matadd", "matmul", "matvec"])
def test_nothing_cached_is_zero(name):
    measure = COUNTER.measure(kernel_of(name))
    assert measure.value == 0 and isinstance(measure.value, int) and measure.exact


def test_dropping_the_cache_gives_zero():
    assert COUNTER.evaluate(kernel_of("jacobi1d", cached=())) == 0


def test_element_size_counts():
    # double elements: 8 bytes each
    kernel = kernel_of("matvec", cached=("x",))
    assert same(COUNTER.evaluate(kernel), "8*n")


def test_unbounded_when_the_size_is_not_visible():
    src = """
#include "metafork.h"
void f(int N, int B, int *idx, float *d, float *o)
{
    int dim = N / B;
    meta_schedule cache(d) {
        meta_for (int i = 0; i < dim; i++)
            meta_for (int j = 0; j < B; j++)
                o[i * B + j] = d[idx[i * B + j]];
    }
}
"""
    kernel = Kernel.initial(analyze_source(src, "snippet.c").schedules[0])
    measure = COUNTER.measure(kernel)
    assert measure.value.is_infinite and not measure.exact and "unbounded" in measure.note

