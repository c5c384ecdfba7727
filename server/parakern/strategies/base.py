"""An optimization strategy O_i (paper section 3.4): a pure map Kernel -> Kernel.

A strategy rewrites either the source (`applies_to = "source"`: a new
schedule) or the IR (`applies_to = "ir"`: a higher `Kernel.ir_level`, read by
the lowering). It preserves semantics, may only lower the counters named in
`improves` (σ in the paper, by counter name: "registers", "shared_memory",
"threads", "occupancy"), and records its decision code in the variant's
trail. Subclasses say what changes in `changes`; `apply` is the same for all.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from parakern.kernel import Kernel


class Strategy(ABC):
    code: ClassVar[str]                 # decision code when applied: "(1')", "(2)", "(3b)", "(4b)"
    keep_code: ClassVar["str | None"] = None  # code when the algorithm keeps the kernel instead: "(1)", "(3a)", "(4a)"
    name: ClassVar[str]
    improves: ClassVar[frozenset[str]]
    applies_to: ClassVar[str]           # "source" or "ir"

    def apply(self, kernel: Kernel) -> "Kernel | None":
        """The transformed variant with `code` appended to its decisions, or None where it does not apply."""
        changes = self.changes(kernel)
        if changes is None:
            return None
        return kernel.with_decision(self.code, **changes)

    @abstractmethod
    def changes(self, kernel: Kernel) -> "dict | None":
        """The Kernel fields of the new variant (`schedule`, `cached`, `ir_level`, ...), or None."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {self.code}>"
