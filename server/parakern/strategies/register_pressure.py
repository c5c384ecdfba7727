"""(1') Register-pressure reduction on the IR, in levels (see parakern.ir.passes).

Level 1: -O3 without unrolling or vectorization, loops marked nounroll for
ptxas; level 2: a short pipeline without LICM/GVN (values are rematerialized
near their uses instead of being kept live); level 3: level 2 under a ptxas
register cap, carried into the generated CUDA as __launch_bounds__/maxnreg.
Each level is one strategy of the list, applied only after the level below,
so a path of the decision tree raises the level one step at a time.
"""
from __future__ import annotations

from parakern.ir.passes import LEVEL_NOTES, LEVELS
from parakern.kernel import Kernel
from parakern.strategies.base import Strategy


class RegisterPressure(Strategy):
    code = "(1')"
    keep_code = "(1)"
    applies_to = "ir"
    improves = frozenset({"registers", "occupancy"})

    def __init__(self, level: int):
        self.level = level
        self.name = f"register-pressure-{level}"

    def changes(self, kernel: Kernel) -> "dict | None":
        if kernel.ir_level != self.level - 1:
            return None
        return {"ir_level": self.level}

    def __repr__(self) -> str:
        return f"<RegisterPressure level {self.level}: {LEVEL_NOTES[self.level]}>"


def strategies() -> list:
    return [RegisterPressure(level) for level in LEVELS if level > 0]
