"""Races found by execution (parakern_race.h), told in the user's terms.

The emulation reports the first race of a point as two accesses, each with its block and
thread, its kind (read, write, atomic), its traced site and the line of the .cu it is on.
Here a site becomes the position in the C file of the access it prints (analysis/traffic.py's
keys, which codegen/trace.py numbers), or the staging copy it belongs to; and the whole race
becomes one line of the report.
"""
from __future__ import annotations

import hashlib

from parakern.codegen.trace import Sites

KERNELS = "kernels.cu"     # the name verify/build.py gives the emitted CUDA
VERBS = {"read": "reads", "write": "writes", "atomic": "updates atomically"}


def order_seed(name: str) -> int:
    """The seed of a point's second thread order: stable, never 0 (0 is the default order)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little") | 1


def site_places(sites: Sites, analysis, file: str) -> dict:
    """Site number -> where in `file` its reference comes from."""
    lines = {r.schedule.id: r.schedule.span.line for r in analysis.results}
    places = {}
    for number, (case, key) in sites.table.items():
        schedule = sites.schedules.get(number, "")
        if key[0] == "access":
            line, col = key[2][0], key[2][1]
            places[number] = f"{file}:{line}:{col}"
        else:   # ("copy", array, choice, region, space)
            where = f"{file}:{lines[schedule]}" if schedule in lines else file
            places[number] = f"the staging of '{key[1]}' in shared memory (case {case}, {where})"
    return places


def described(race: dict, places: dict) -> dict:
    """The runner's race with each access's place in the source (`where`; '' for a site that
    no traced emission printed: a hand-written kernel)."""
    out = dict(race)
    for which in ("first", "second"):
        access = dict(race[which])
        access["where"] = places.get(access.get("site"), "")
        out[which] = access
    return out


def _access(access: dict) -> str:
    where = ", ".join(w for w in (access.get("where", ""), f"{KERNELS}:{access['line']}") if w)
    return (f"thread {_coords(access['thread'])} of block {_coords(access['block'])} "
            f"{VERBS.get(access['kind'], access['kind'])} it ({where})")


def _coords(values) -> str:
    return "(" + ", ".join(str(v) for v in values) + ")"


def text(race: dict) -> str:
    """One line: the element, both accesses, why nothing orders them."""
    index = "".join(f"[{i}]" for i in race["index"])
    element = f"{race['array']}{index}" + (" (shared memory)" if race.get("shared") else "")
    unordered = ("in one barrier interval of the block (no __syncthreads between them)"
                 if race["interval"] == "barrier" else
                 "in different blocks of one launch (no barrier orders blocks)")
    more = race.get("elements", 1)
    return (f"race on {element}: {_access(race['first'])}, and {_access(race['second'])}, "
            f"{unordered}" + (f"; {more} elements race at this point" if more > 1 else ""))
