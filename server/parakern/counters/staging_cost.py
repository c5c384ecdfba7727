"""Staging's cost in occupancy, a performance counter P_stage of a staged variant.

The shared-memory counter keeps a tile wherever it fits (S <= Z), so without this
counter the variant without shared memory exists only where the tile does not fit,
and a GPU where both fit never gets to compare them: a staged block of 200 KB runs
one block per SM where the unstaged one runs eight. On each configured GPU profile
both variants have the same threads per block, so their occupancies compare as
their resident blocks per SM (the occupancy calculator's `resident_blocks_expr`).

The counter's value is min over profiles of 2·blocks(staged) − blocks(unstaged):
    accept  0 <= value   staging keeps at least half the unstaged occupancy on every profile
    refuse  value < 0    on some profile it halves it: drop-cache (4b) offers the unstaged
                         variant there
The relations hold only program and data parameters (the profiles are fixed), so the
dispatcher evaluates them like any other. A variant without shared memory measures
0 (nothing to compare), which the accept branch takes.
"""
from __future__ import annotations

import dataclasses

import sympy

from parakern.counters.base import Counter, Measure
from parakern.counters.occupancy import _min, resident_blocks_expr
from parakern.counters.registers import RegisterCounter
from parakern.counters.shared_memory import SharedMemoryCounter
from parakern.counters.threads import ThreadsCounter
from parakern.machine.devices import get_profile
from parakern.kernel import Kernel


class StagingCounter(Counter):
    name = "staging"
    symbol = sympy.Integer(0)      # the target: a fixed threshold, not a machine parameter
    unit = "blocks"
    kind = "performance"

    def __init__(self, profiles: tuple[str, ...], registers: "RegisterCounter | None" = None):
        self.profiles = tuple(profiles)
        self.devices = tuple(get_profile(p) for p in self.profiles)
        self.registers = registers or RegisterCounter()
        self.shared = SharedMemoryCounter()
        self.threads = ThreadsCounter()

    def measure(self, kernel: Kernel) -> Measure:
        if not kernel.cached:
            return Measure(0, True, "no shared memory: nothing to compare")
        unstaged = dataclasses.replace(kernel, cached=())
        regs_s, regs_u = self.registers.measure(kernel), self.registers.measure(unstaged)
        smem = self.shared.measure(kernel)
        threads = self.threads.measure(kernel).value
        margins = [2 * resident_blocks_expr(regs_s.value, smem.value, threads, d)
                   - resident_blocks_expr(regs_u.value, 0, threads, d) for d in self.devices]
        return Measure(_min(*margins) if len(margins) > 1 else margins[0],
                       regs_s.exact and regs_u.exact and smem.exact,
                       f"2 x resident blocks staged - unstaged on {', '.join(self.profiles)}",
                       f"registers by {regs_s.method}")
