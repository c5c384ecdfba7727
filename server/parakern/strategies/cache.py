"""(4b) Shared-memory caching dropped: the variant reads and writes global memory directly.

The schedule is unchanged (`cache(...)` stays what the user wrote); only the
variant's `cached` arrays go, so the shared-memory counter falls to 0 and
occupancy can only rise.
"""
from __future__ import annotations

from parakern.kernel import Kernel
from parakern.strategies.base import Strategy


class DropCache(Strategy):
    code = "(4b)"
    keep_code = "(4a)"
    name = "drop-cache"
    improves = frozenset({"shared_memory", "occupancy", "staging"})
    applies_to = "source"
    applied_words = "no shared memory"
    kept_words = "shared memory"
    keep_is_plain = False           # (4a) stages arrays in shared memory: the editor says so

    def changes(self, kernel: Kernel) -> "dict | None":
        return {"cached": ()} if kernel.cached else None

    def why_not(self, kernel: Kernel) -> str:
        if kernel.schedule.cache:
            return "shared memory: no array of cache(...) can be staged (see the warnings on cache)"
        return "shared memory: no cache(...) on this meta_schedule, every array is read from global memory"

    @classmethod
    def trail(cls, kernel: Kernel) -> tuple[str, ...]:
        # A schedule without cache(...) has no shared memory to keep: (4b) as if dropped.
        kept = kernel.schedule.cache and cls.code not in kernel.decisions
        return (cls.keep_code,) if kept else (cls.code,)

    @classmethod
    def comment_words(cls, kernel: Kernel, cap: "int | None") -> str:
        return ", ".join(kernel.cached) + " staged in shared memory" if kernel.cached else "no shared memory"
