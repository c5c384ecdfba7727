"""(8) Register tiles, in process: which schedules get one (products) and why the others do
not, the tiled schedule's grid (sympy), what its kernel needs of the parameters, and how many
results one thread computes. The tiled kernels run on the CPU emulation against the serial C
in tests/integration/test_register_tiles_verify.py."""
from __future__ import annotations

import pytest

from parakern.kernel import Kernel
from parakern.strategies.register_tiles import RegisterTiles, refusal
from unit.test_register_tiles import PRODUCTS, schedules


@pytest.mark.parametrize("name", PRODUCTS)
def test_every_product_gets_a_register_tile(name):
    first = schedules(name)[0]
    assert refusal(first) == ""
    assert RegisterTiles().apply(Kernel.initial(first)) is not None
