"""(1') Register-pressure reduction on the IR, in levels (see parakern.ir.passes).

Level 1: -O3 without unrolling or vectorization, loops marked nounroll for
ptxas; level 2: a short pipeline without LICM/GVN (values are rematerialized
near their uses instead of being kept live); level 3: level 2 under a ptxas
register cap, carried into the generated CUDA as __launch_bounds__/maxnreg.
Each level is one strategy of the list, applied only after the level below,
so a path of the decision tree raises the level one step at a time.
"""
from __future__ import annotations

from parakern.kernel import Kernel
from parakern.strategies.base import Strategy
from parakern.ir.passes import LEVELS
from parakern.ir.passes import LEVEL_NOTES

# What each level does to the CUDA text, for the kernel's comment.
_CUDA_NOTES = {1: "loops not unrolled", 2: "loops not unrolled, nothing hoisted or reused",
               3: "loops not unrolled, nothing hoisted or reused, registers capped"}


class RegisterPressure(Strategy):
    code = "(1')"
    keep_code = "(1)"
    applies_to = "ir"
    improves = frozenset({"registers", "occupancy"})
    applied_words = "register pressure reduced"
    kept_words = "registers as compiled"

    def __init__(self, level: int):
        self.level = level
        self.name = f"register-pressure-{level}"

    @classmethod
    def instances(cls, settled: frozenset = frozenset()) -> list[Strategy]:
        return [cls(level) for level in LEVELS if level > 0]

    def changes(self, kernel: Kernel) -> "dict | None":
        if kernel.ir_level != self.level - 1:
            return None
        return {"ir_level": self.level}

    @classmethod
    def comment_words(cls, kernel: Kernel, cap: "int | None") -> str:
        if kernel.ir_level == 3 and not cap:
            return f"IR level 3 ({_CUDA_NOTES[2]}; no register cap: none could bind at level 2's count)"
        if kernel.ir_level:
            return (f"IR level {kernel.ir_level} ({_CUDA_NOTES[kernel.ir_level]}"
                    + (f" at {cap}" if cap else "") + ")")
        return "no register-pressure reduction"

    def __repr__(self) -> str:
        return f"<RegisterPressure level {self.level}: {LEVEL_NOTES[self.level]}>"
