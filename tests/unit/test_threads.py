"""Threads per block = product of the block-level meta_for extents."""
import pytest

from conftest import SAMPLES, same
from parakern.counters.threads import ThreadsCounter
from parakern.frontend import analyze_file, analyze_source
from parakern.kernel import Kernel
from parakern.symbolic.symbols import T

COUNTER = ThreadsCounter()


def test_counter_identity():
    assert (COUNTER.name, COUNTER.symbol, COUNTER.unit, COUNTER.kind) == \
        ("threads", T, "threads", "resource")


@pytest.mark.parametrize("name, expected", [
    ("jacobi1d", "B"), ("matadd", "B0*B1"), ("transpose", "B0*B1"), ("matmul", "B0*ub1"),
    ("polydiv", "B"), ("saxpy", "B"), ("matvec", "B"), ("stencil2d", "Bx*By"),
])
def test_samples(name, expected):
    kernel = Kernel.initial(analyze_file(SAMPLES / f"{name}.c").schedules[0])
    measure = COUNTER.measure(kernel)
    assert same(measure.value, expected) and measure.exact
    assert COUNTER.evaluate(kernel) == measure.value


def test_constant_extents_give_an_int():
    src = """
#include "metafork.h"
void f(int N, float a[N])
{
    int dim = N / 64;
    meta_schedule {
        meta_for (int i = 0; i < dim; i++)
            meta_for (int j = 0; j < 64; j++)
                a[i * 64 + j] = 0;
    }
}
"""
    kernel = Kernel.initial(analyze_source(src, "snippet.c").schedules[0])
    value = COUNTER.evaluate(kernel)
    assert value == 64 and isinstance(value, int)
