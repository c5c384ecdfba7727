"""Site numbers of a traced emission: which access (or staging copy) each traced element
reference of the CUDA comes from.

With a `Sites`, codegen prints every element reference as PARAKERN_AT(site, array, index)
or PARAKERN_AT_SHARED(site, part, index) (verify/parakern_trace.h counts the warp requests
of each site on the CPU emulation), and the element an atomic function updates as
PARAKERN_AT_ATOMIC(site, array, index), a real lvalue whose address the atomic takes;
without one, as plain subscripts. The keys are those
of the static analysis (analysis/traffic.py: access_key, copy_key), so the two sets of
figures meet per case and key.
"""
from __future__ import annotations


class Sites:
    """Numbers the (case, key) pairs of the kernels printed with it, from 1 (the kernels of
    several schedules too: `schedule` tells them apart, `schedules` keeps it per number)."""

    def __init__(self) -> None:
        self.case = 0                      # the case whose kernel is being printed
        self.schedule = ""                 # the id of its schedule
        self.table: dict[int, tuple] = {}  # number -> (case, key)
        self.schedules: dict[int, str] = {}   # number -> schedule id
        self.loops: list[str] = []         # the loop variables around what is being printed
        self._numbers: dict[tuple, int] = {}

    def instance(self, extra: tuple = ()) -> str:
        """Which execution of a site this is, the same in every lane of a warp: the values of
        the loops around it (a warp runs an iteration together; a thread that skips a
        reference in one iteration must not shift the next ones)."""
        values = list(self.loops) + list(extra)
        return f"parakern_trace::mix({', '.join(values)})" if values else "0"

    def site(self, key: tuple) -> int:
        entry = (self.case, key)
        if (self.schedule, entry) not in self._numbers:
            number = self._numbers[self.schedule, entry] = len(self._numbers) + 1
            self.table[number] = entry
            self.schedules[number] = self.schedule
        return self._numbers[self.schedule, entry]


def traced(site: "int | None", shared: bool, name: str, index: str, instance: str = "0",
           atomic: bool = False) -> str:
    """`name[index]`, or its traced form (`atomic`: the element an atomic function updates)."""
    if site is None:
        return f"{name}[{index}]"
    kind = "_ATOMIC" if atomic else "_SHARED" if shared else ""
    return f"PARAKERN_AT{kind}({site}, {instance}, {name}, {index})"
