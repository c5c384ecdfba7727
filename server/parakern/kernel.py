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
    # Register tile (strategies/register_tiles.py): per tiled grid level, how many of its blocks
    # one block computes (each thread the same element of each); () where there is none.
    tile: tuple[int, ...] = ()
    # The schedule before the register tile, which a smaller tile is made from. The tiled
    # schedule says all of it, so it takes no part in comparing variants.
    untiled: "Schedule | None" = field(default=None, compare=False)
    # Relations on the parameters this variant needs to compute the schedule's result, beside
    # the machine's limits (a register tile has no guards at the grid's edge: its factors must
    # divide the grid's extents). The dispatcher launches it only where they hold.
    requires: tuple = ()

    @staticmethod
    def initial(schedule: Schedule, target: str = DEFAULT_TARGET) -> "Kernel":
        """The variant as written: every array of cache(...) staged, no strategy applied."""
        return Kernel(schedule, tuple(c.name for c in schedule.cache), target=target)

    def with_decision(self, code: str, **changes) -> "Kernel":
        return replace(self, decisions=self.decisions + (code,), **changes)
