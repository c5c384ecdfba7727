"""Shared memory per thread block: the footprints of the arrays the variant caches, with the
padding of their tiles' rows (analysis/padding.py) where the staging plan pads them."""
from __future__ import annotations

import sympy

from parakern.counters.base import Counter, Measure, normalize
from parakern.analysis.footprint import footprints
from parakern.analysis.staging import padded, plan, shared_bytes, stageable
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
        method = "block footprint of " + ", ".join(kernel.cached)
        if stageable(kernel):   # the buffer as staged where it differs from the footprints
            staged = plan(kernel)
            rows = [st.array.name for st in staged if padded((st,))] if kernel.padding else []
            runs = [st.array.name for st in staged if st.spanned]
            if rows or runs:
                total = shared_bytes(kernel)
            if rows:   # its tiles' rows padded
                method += ", rows of " + ", ".join(rows) + " padded"
            elif runs:   # overlapping runs staged as one: their span
                method += ", strided runs of " + ", ".join(runs) + " staged as one"
        return Measure(normalize(total), exact, method, "; ".join(notes))
