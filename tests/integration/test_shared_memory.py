"""Shared memory per block = sum over cached arrays of footprint x element size (bytes)."""
import pytest

from conftest import same
from parakern.counters.base import Measure
from unit.test_shared_memory import COUNTER, kernel_of


@pytest.mark.parametrize("name, expected, exact", [
    ("jacobi1d", "4*(2*s*B + 2)", True),
    ("transpose", "4*s*B0*B1 + 4*s*B1*(2*floor(B0/2) + 1)", True),  # c's rows padded to odd (padding.py)
    ("polydiv", "4*(2*s*B + 1)", False),       # a[N-1] may meet a[x] in a block left unguarded
    ("stencil2d", "4*(By + 2)*(Bx + 2)", False),  # the tile's corners are counted
])
def test_samples_with_cache(name, expected, exact):
    measure = COUNTER.measure(kernel_of(name))
    assert isinstance(measure, Measure)
    assert same(measure.value, expected)
    assert COUNTER.evaluate(kernel_of(name)) == measure.value
    assert measure.exact is exact
    if not exact:
        assert measure.note
