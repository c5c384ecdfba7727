"""Shared memory per thread block: the footprints of the arrays the variant caches."""
from __future__ import annotations

import sympy

from parakern.counters.base import Counter, Measure, normalize
from parakern.analysis.footprint import footprints
from parakern.kernel import Kernel
from parakern.symbolic.symbols import Z


class SharedMemoryCounter(Counter):
    name = "shared_memory"
    symbol = Z
    unit = "bytes"
    kind = "resource"

    def measure(self, kernel: Kernel) -> Measure:
        if not kernel.cached:
            return Measure(0, True, "no cached array")
        schedule = kernel.schedule
        sizes = {a.name: a.element_size for a in schedule.arrays}
        total, exact, notes = sympy.S.Zero, True, []
        for fp in footprints(schedule, kernel.cached):
            if fp.array not in sizes:
                exact = False
                notes.append(f"{fp.array}: {fp.note}")
                continue
            total += fp.elements * sizes[fp.array]
            exact = exact and fp.exact
            if fp.note:
                notes.append(f"{fp.array}: {fp.note}")
        return Measure(normalize(total), exact, "block footprint of " + ", ".join(kernel.cached),
                       "; ".join(notes))
