"""Which accesses of a staged kernel go to shared memory, and to which slot.

An access of a cached array reads and writes the copy of the region its
cluster made, at its global index minus the region's lower bound. Uniform
choices (`t % 2`) may place it in different regions: one placement per
distinct slot, selected by the choices that use it.

Overlap. Clusters are disjoint when the footprint proved it (an exact
choice). Otherwise an element may lie in two regions of one array (polydiv:
a[N-1] and the block's window of a), so an access goes to the first region
holding it: every element has one live copy.
"""
from __future__ import annotations

from dataclasses import dataclass

from parakern.analysis.staging import Staged, StagedChoice, StagingError
from parakern.model import Schedule


@dataclass(frozen=True)
class Route:
    """How one access reaches shared memory: its placements (one per distinct slot, with the
    choices that use it) and whether its stores also go to global memory (write-through)."""
    staged: Staged
    placements: tuple[tuple[tuple[int, int], tuple[int, ...]], ...]   # ((choice, region), choices)
    through: bool


class Routes:
    """The routes of one kernel's accesses, found by the array and source span of the access."""

    def __init__(self, schedule: Schedule, plan: tuple[Staged, ...]):
        self.accesses = schedule.accesses
        self.staged = {st.array.name: st for st in plan}
        self._ids: dict = {}   # (array, span) -> positions in schedule.accesses
        for i, a in enumerate(schedule.accesses):
            self._ids.setdefault((a.array, a.span), []).append(i)

    def route(self, array: str, span) -> "Route | None":
        """None: the access stays in global memory (its array is not staged, or it only
        stores to a region that is never read nor copied back)."""
        staged = self.staged.get(array)
        if staged is None:
            return None
        ids = set(self._ids.get((array, span), ()))
        options = [(c, k) for c, choice in enumerate(staged.choices)
                   for k, region in enumerate(choice.regions) if ids & set(region.accesses)]
        if not options:
            raise StagingError(f"cannot stage '{array}': this access is in no region of its footprint", span)
        regions = [staged.choices[c].regions[k] for c, k in options]
        if not any(r.load or r.write_back for r in regions):
            return None
        placements: dict = {}
        for c, k in options:
            placements.setdefault(_placement(staged.choices[c], k), ((c, k), []))[1].append(c)
        writes = any(self.accesses[i].is_write for i in ids)
        through = writes and not all(r.write_back for r in regions)
        return Route(staged, tuple((first, tuple(cs)) for first, cs in placements.values()), through)


def holders(choice: StagedChoice, k: int) -> tuple[int, ...]:
    """The regions an element of region k is looked up in, in the order a slot is built:
    region k itself (untested), then each region before it, which takes the element when
    it holds it; so the first region holding the element wins."""
    return tuple(range(k, -1, -1)) if choice.overlapping else (k,)


def _placement(choice: StagedChoice, k: int):
    """What decides an access's slot: its region, and the regions before it when they may overlap."""
    considered = choice.regions[:k + 1] if choice.overlapping else choice.regions[k:k + 1]
    return tuple((r.dims, r.base, r.pitch, r.lanes) for r in considered)
