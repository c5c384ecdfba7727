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
    improves = frozenset({"shared_memory", "occupancy"})
    applies_to = "source"

    def changes(self, kernel: Kernel) -> "dict | None":
        return {"cached": ()} if kernel.cached else None


def strategies() -> list:
    return [DropCache()]
