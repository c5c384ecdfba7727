"""Occupancy as a performance counter P_occ of a kernel variant on one device."""
from __future__ import annotations

from parakern.counters.base import Counter, Measure
from parakern.counters.occupancy import occupancy_expr
from parakern.counters.registers import RegisterCounter
from parakern.counters.shared_memory import SharedMemoryCounter
from parakern.counters.threads import ThreadsCounter
from parakern.machine.devices import Device
from parakern.kernel import Kernel
from parakern.symbolic.symbols import P_OCC


class OccupancyCounter(Counter):
    """Active warps per SM over the maximum, from the variant's registers, shared
    bytes and threads on `device`: a number, or an expression in the program
    parameters when shared memory or threads depend on them."""

    name = "occupancy"
    symbol = P_OCC
    unit = "ratio"
    kind = "performance"

    def __init__(self, device: Device, registers: "RegisterCounter | None" = None):
        self.device = device
        self.registers = registers or RegisterCounter()
        self.shared = SharedMemoryCounter()
        self.threads = ThreadsCounter()

    def measure(self, kernel: Kernel) -> Measure:
        regs = self.registers.measure(kernel)
        smem = self.shared.measure(kernel)
        threads = self.threads.measure(kernel)
        value = occupancy_expr(regs.value, smem.value, threads.value, self.device)
        # Not normalized: expanding this Min/floor expression costs more than the rest together.
        return Measure(value, regs.exact and smem.exact and threads.exact,
                       f"occupancy calculator on {self.device.name}",
                       f"registers by {regs.method}")
