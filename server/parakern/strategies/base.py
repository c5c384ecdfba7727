"""An optimization strategy O_i (paper section 3.4): a pure map Kernel -> Kernel.

A strategy rewrites either the source (`applies_to = "source"`: a new
schedule) or the IR (`applies_to = "ir"`: a higher `Kernel.ir_level`, read by
the lowering). It preserves semantics, may only lower the counters named in
`improves` (σ in the paper, by counter name: "registers", "shared_memory",
"threads", "occupancy"), and records its decision code in the variant's
trail. Subclasses say what changes in `changes`; `apply` is the same for all.

The class is also the one description of the strategy for people: its decision
codes (applied, kept), the editor's words for each and the words of the CUDA
kernel's comment. strategies/decisions.py derives the trail, the codes a user may
enable and all those words from the classes in `parakern.strategies.KINDS`.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from parakern.kernel import Kernel
from parakern.analysis.staging import stageable


class Strategy(ABC):
    code: ClassVar[str]                 # decision code when applied: "(1')", "(2)", "(3b)", "(4b)", "(5)"
    keep_code: ClassVar["str | None"] = None  # code when the algorithm keeps the kernel instead: "(1)", "(3a)", "(4a)"
    name: ClassVar[str]
    improves: ClassVar[frozenset[str]]
    applies_to: ClassVar[str]           # "source" or "ir"
    applied_words: ClassVar[str]        # the editor's words for `code`: "granularity reduced"
    kept_words: ClassVar["str | None"] = None  # the editor's words for `keep_code`: "granularity kept"
    # keep_code means the kernel as written: the editor's one-line case message leaves it out.
    keep_is_plain: ClassVar[bool] = True
    # Its variant is the same whichever counter refused the kernel: the case tree grows its
    # subtree once, under the union of the paths that apply it (comprehensive._joined), where
    # each path would otherwise repeat it (a register tile, refused by its registers or by its
    # shared memory, at each tile size).
    joins: ClassVar[bool] = False

    @classmethod
    def instances(cls, settled: frozenset = frozenset()) -> list["Strategy"]:
        """Fresh objects for the algorithm's list: one, or one per level (the algorithm uses
        each object once per path). settled: the decision codes of the strategies applied
        once before the tree (strategies.before_tree), for a strategy that needs to know them."""
        return [cls()]

    def apply(self, kernel: Kernel) -> "Kernel | None":
        """The transformed variant with `code` appended to its decisions, or None where it does not
        apply, or where a source rewrite leaves a cached array that cannot be staged (the runs a
        block reads may overlap once a serial loop is a grid level: a variant no GPU kernel can
        be built for would cost the whole schedule its tree)."""
        changes = self.changes(kernel)
        return None if changes is None else self._variant(kernel, changes)

    def _variant(self, kernel: Kernel, changes: dict) -> "Kernel | None":
        """The variant these changes make, or None where its cached arrays cannot be staged."""
        new = kernel.with_decision(self.code, **changes)
        if new.cached and "schedule" in changes:
            if not stageable(new):
                return None
        return new

    @abstractmethod
    def changes(self, kernel: Kernel) -> "dict | None":
        """The Kernel fields of the new variant (`schedule`, `cached`, `ir_level`, ...), or None."""

    def explain(self, kernel: Kernel) -> str:
        """Why the strategy does not apply to `kernel`, for the user ('' where it applies):
        what in the schedule stops it, so the user knows what to change."""
        changes = self.changes(kernel)   # once: the rewrite is the costly part
        if changes is None:
            return self.why_not(kernel)
        if self._variant(kernel, changes) is not None:
            return ""
        return (f"{self.name}: the rewritten schedule's cached arrays could not be staged (their "
                "blocks' runs would overlap)")

    def why_not(self, kernel: Kernel) -> str:
        """The reason `changes` found nothing to do; strategies say more where they can."""
        return f"{self.name}: nothing in this schedule it applies to"

    @classmethod
    def trail(cls, kernel: Kernel) -> tuple[str, ...]:
        """This strategy's part of the variant's trail: `code` where it was applied, else `keep_code`."""
        if cls.code in kernel.decisions:
            return (cls.code,)
        return (cls.keep_code,) if cls.keep_code else ()

    @classmethod
    def comment_words(cls, kernel: Kernel, cap: "int | None") -> "str | None":
        """What the CUDA kernel's comment says of this strategy on `kernel` (None: nothing);
        `cap` is the ptxas register cap the kernel is compiled under. By default the editor's words."""
        return cls.applied_words if cls.code in kernel.decisions else cls.kept_words

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {self.code}>"
