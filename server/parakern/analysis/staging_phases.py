"""When a staged kernel copies and synchronises, around each execution of the body.

Per execution of the body (once, or per iteration of the serial loops
between grid and block levels, e.g. matmul's k):

    load      every thread copies its share of each region of the choice the
              parameters select; regions that are only stored to are not loaded
    barrier
    body      cached accesses use shared memory (staging_routes.py)
    barrier   only if something follows: a write-back or the next refill
    write-back, barrier (if refilled)

Hoisted regions are loaded before the `between` loops (prologue) and written
back after them (epilogue). The IR and the CUDA both run exactly these steps.
"""
from __future__ import annotations

from dataclasses import dataclass

from parakern.analysis.staging import Region, Staged
from parakern.model import Schedule


@dataclass(frozen=True)
class Copy:
    """Threads of the block copy the regions it selects, nthreads elements apart."""
    load: bool      # global -> shared; otherwise the write-back, shared -> global
    hoisted: bool   # the regions staged once around the `between` loops, else those of each body

    def selects(self, region: Region) -> bool:
        return (region.load if self.load else region.write_back) and region.hoisted == self.hoisted


@dataclass(frozen=True)
class Barrier:
    why: str = ""   # said where the copy just before it is not the reason


@dataclass(frozen=True)
class Phases:
    prologue: tuple = ()      # before the `between` loops
    before_body: tuple = ()
    after_body: tuple = ()
    epilogue: tuple = ()      # after the `between` loops


def phases(schedule: Schedule, plan: tuple[Staged, ...]) -> Phases:
    def needed(copy: Copy) -> bool:
        return any(copy.selects(r) for st in plan for c in st.choices for r in c.regions)

    hoisted_load, load = Copy(load=True, hoisted=True), Copy(load=True, hoisted=False)
    write_back, hoisted_write_back = Copy(load=False, hoisted=False), Copy(load=False, hoisted=True)
    refill = bool(schedule.between) and needed(load)   # the next iteration overwrites the copies
    after: list = []
    if needed(write_back) or refill:
        after.append(Barrier("the block is done with the copies" if refill else ""))
    if needed(write_back):
        after.append(write_back)
        if refill:
            after.append(Barrier("before the next iteration refills them"))
    return Phases(
        prologue=(hoisted_load, Barrier()) if needed(hoisted_load) else (),
        before_body=(load, Barrier()) if needed(load) else (),
        after_body=tuple(after),
        epilogue=(Barrier(), hoisted_write_back) if needed(hoisted_write_back) else ())


def thread_axes(schedule: Schedule) -> list[str]:
    """Block axes whose threads share the copies, x first; axes without a block level
    have tid 0 and ntid 1 at launch and are left out."""
    return [a for a in "xyz" if any(lp.axis == a for lp in schedule.block)] or ["x"]
