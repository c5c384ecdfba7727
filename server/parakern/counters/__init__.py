"""Resource and performance counters: the evaluation functions f_i, g_i of the paper."""
from __future__ import annotations

from parakern.counters.base import Counter, Measure
from parakern.machine.targets import DEFAULT_TARGET
from parakern.counters.registers import RegisterCounter
from parakern.counters.shared_memory import SharedMemoryCounter
from parakern.counters.threads import ThreadsCounter
from parakern.counters.staging_cost import StagingCounter
from parakern.counters.performance import OccupancyCounter


def default_counters(target: str = DEFAULT_TARGET, occupancy_device=None,
                     staging_profiles: tuple[str, ...] = ()) -> tuple[Counter, ...]:
    """Registers (R_B), shared memory (Z), threads (T); staging's cost in occupancy on the
    given profiles (when a variant stages anything); occupancy (P_occ) when a device is given."""
    registers = RegisterCounter()
    counters = [registers, SharedMemoryCounter(), ThreadsCounter()]
    if staging_profiles:
        counters.append(StagingCounter(tuple(staging_profiles), registers))
    if occupancy_device is not None:
        counters.append(OccupancyCounter(occupancy_device, registers))
    return tuple(counters)


__all__ = ["Counter", "Measure", "default_counters"]
