"""Threads per block: the product of the block-level meta_for extents."""
from __future__ import annotations

import sympy

from parakern.counters.base import Counter, Measure, normalize
from parakern.kernel import Kernel
from parakern.symbolic.symbols import T


class ThreadsCounter(Counter):
    name = "threads"
    symbol = T
    unit = "threads"
    kind = "resource"

    def measure(self, kernel: Kernel) -> Measure:
        extents = [lp.extent for lp in kernel.schedule.block]
        return Measure(normalize(sympy.Mul(*extents)), True, "product of block-level extents")
