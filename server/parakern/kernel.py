"""A kernel variant: one schedule plus the decisions taken on it so far.

Strategies return new variants (source-level ones rewrite `schedule`,
IR-level ones raise `ir_level`); counters evaluate variants. Frozen, so a
variant can key a cache and be shared between branches of the case tree.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from parakern.model import Schedule
from parakern.machine.targets import DEFAULT_TARGET


@dataclass(frozen=True)
class Kernel:
    schedule: Schedule
    cached: tuple[str, ...]          # arrays staged in shared memory in this variant
    ir_level: int = 0                # register-pressure reduction level on the IR (0 = none)
    cse_level: int = 0               # common-subexpression elimination level on the source
    decisions: tuple[str, ...] = field(default_factory=tuple)  # the paper's codes, in order
    target: str = DEFAULT_TARGET            # ptxas architecture the registers are counted for
    padding: bool = True    # rows of staged tiles read across padded where that avoids bank conflicts

    @staticmethod
    def initial(schedule: Schedule, target: str = DEFAULT_TARGET) -> "Kernel":
        """The variant as written: every array of cache(...) staged, no strategy applied."""
        return Kernel(schedule, tuple(c.name for c in schedule.cache), target=target)

    def with_decision(self, code: str, **changes) -> "Kernel":
        return replace(self, decisions=self.decisions + (code,), **changes)
