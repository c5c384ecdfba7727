"""What `parakern verify` found: per file, schedule, case and point; text and JSON forms."""
from __future__ import annotations

from dataclasses import dataclass, field

from parakern.codegen import status
from parakern.verify import races

TOLERANCE_NOTE = ("integers compared exactly; float: |got - expected| <= 1e-5 * max(1, max |expected| "
                  "over the array); double: the same with 1e-12; or, where larger, twice the array's spread "
                  "between the serial C built with and without FMA contraction")


def tolerance_note(tolerance: "dict | None" = None) -> str:
    """The comparison rule: TOLERANCE_NOTE, or the bounds given with --tolerance."""
    if not tolerance:
        return TOLERANCE_NOTE
    return (f"integers compared exactly; float: |got - expected| <= {tolerance['float']:g} * max(1, max |expected| "
            f"over the array); double: the same with {tolerance['double']:g} (--tolerance)")


@dataclass(frozen=True)
class PointResult:
    case: int                       # case the point was chosen for (1-based)
    values: dict                    # scalar arguments of the call
    device: dict                    # emulated device: regsPerBlock, sharedMemPerBlockOptin, ... and R_B, Z, T
    expected: "int | None"          # case the dispatcher must return; None: depends on host state
    chosen: tuple = ()              # case returned by each dispatcher call
    mismatches: tuple = ()          # first mismatch per array: array, index, expected, got, count
    guards: tuple = ()              # arrays written outside their bounds
    error: str = ""                 # crash, timeout, dispatcher failure
    uneven: bool = False
    origin: str = ""
    seconds: float = 0.0
    threads: int = 0                # threads per block of the case's launch
    realistic: bool = False         # a warp or more per block, several blocks
    race: "dict | None" = None      # the first race the shadow memory found (races.py)
    expected_calls: tuple = ()      # what each logged call must return, from the values the host code
                                    # gave it (points.host_check; 0 where its meta_for is empty)
    bounds: dict = field(default_factory=dict)   # floating array -> {"allowed", "spread"} where the
                                    # spread of the serial C with and without FMA contraction set the bound

    @property
    def right_case(self) -> bool:
        """Every call returned the expected case (expected 0: every call said no case fits)."""
        if not self.chosen:
            return False
        if self.expected_calls:
            later = self.chosen[len(self.expected_calls):]
            return all(c == e for c, e in zip(self.chosen, self.expected_calls)) and \
                all(c >= 1 and (self.expected is None or c == self.expected) for c in later)
        if self.expected == 0:
            return all(c == status.NO_CASE_FITS for c in self.chosen)
        if any(c < 1 for c in self.chosen):
            return False
        return self.expected is None or all(c == self.expected for c in self.chosen)

    @property
    def ok(self) -> bool:
        """Both versions agree and the dispatcher launched the expected case."""
        return not self.mismatches and not self.guards and not self.error and not self.race \
            and self.right_case and self.expected != 0

    def as_dict(self) -> dict:
        return {"case": self.case, "values": self.values, "device": self.device, "expected": self.expected,
                "chosen": list(self.chosen), "right_case": self.right_case, "mismatches": list(self.mismatches),
                "out_of_bounds": list(self.guards), "error": self.error or None, "uneven": self.uneven,
                "threads": self.threads, "realistic": self.realistic, "origin": self.origin, "race": self.race,
                "bounds": self.bounds, "ok": self.ok}


@dataclass(frozen=True)
class CaseResult:
    index: int                      # 1-based
    constraints: str
    decisions: tuple
    points: tuple = ()
    note: str = ""                  # why fewer points than asked

    @property
    def chosen(self) -> int:
        """Points at which the dispatcher launched this case."""
        return sum(1 for p in self.points if self.index in p.chosen)

    @property
    def mismatches(self) -> int:
        return sum(1 for p in self.points if p.mismatches or p.guards)

    @property
    def races(self) -> int:
        """Points at which two threads raced."""
        return sum(1 for p in self.points if p.race)

    @property
    def ok(self) -> bool:
        return bool(self.points) and all(p.ok for p in self.points) and self.chosen > 0

    def as_dict(self) -> dict:
        return {"case": self.index, "constraints": self.constraints, "decisions": list(self.decisions),
                "points": [p.as_dict() for p in self.points], "chosen": self.chosen,
                "mismatches": self.mismatches, "races": self.races, "note": self.note or None, "ok": self.ok}


@dataclass(frozen=True)
class ScheduleResult:
    id: str
    line: int
    cases: tuple = ()
    error: str = ""                 # not verified: why
    seconds: float = 0.0
    defaults: tuple = ()            # PointResult: the default dispatcher on emulated GPUs (origin names it)
    # "line:col: message" of each PK021: the analysis could not prove its meta_for iterations
    # independent, so runs that found no race at some points show nothing for the others
    unproved: tuple = ()

    @property
    def ok(self) -> bool:
        return not self.error and not self.unproved and bool(self.cases) and all(c.ok for c in self.cases) and \
            all(p.ok for p in self.defaults)

    def as_dict(self) -> dict:
        return {"id": self.id, "line": self.line, "ok": self.ok, "error": self.error or None,
                "independence_unproved": list(self.unproved),
                "cases": [c.as_dict() for c in self.cases],
                "default_dispatcher": [{"gpu": p.origin.removeprefix("default on "), **p.as_dict()}
                                       for p in self.defaults],
                "seconds": round(self.seconds, 3)}


@dataclass(frozen=True)
class FileResult:
    file: str
    schedules: tuple = ()
    error: str = ""
    seconds: float = 0.0
    build_dir: str = ""
    errors: tuple = field(default_factory=tuple)   # the analysis' errors ("line:col: message")
    tolerance: "dict | None" = None                # the bounds given with --tolerance

    @property
    def ok(self) -> bool:
        return not self.error and not self.errors and bool(self.schedules) and all(s.ok for s in self.schedules)

    def as_dict(self) -> dict:
        return {"file": self.file, "ok": self.ok, "error": self.error or None, "analysis_errors": list(self.errors),
                "tolerance": tolerance_note(self.tolerance),
                "schedules": [s.as_dict() for s in self.schedules], "seconds": round(self.seconds, 3)}


UNPROVED_DRAWS = 4     # points per case, times --points, where independence was not proved (PK021)

_SECOND = " in the second thread order (blocks and threads shuffled; the first order matched)"


def _values(values: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in values.items())


def _point_line(p: PointResult) -> str:
    d = p.device
    chosen = sorted(set(p.chosen))
    calls = f"{len(p.chosen)} call{'s' if len(p.chosen) != 1 else ''}"
    picked = ("case " + ",".join(str(c) for c in chosen)) if chosen else "no call"
    want = "" if p.expected is None else (" (expected)" if p.right_case else f" (expected {p.expected})")
    shape = f" ({p.threads} threads per block{', uneven' if p.uneven else ''}{'' if p.realistic else ', small'})" \
        if p.threads else (" (uneven)" if p.uneven else "")
    text = (f"      {_values(p.values)}{shape} | device R_B={d['R_B']} Z={d['Z']} T={d['T']}"
            f"{' default shared ' + str(d['sharedMemPerBlock']) if d['sharedMemPerBlock'] != d['Z'] else ''}"
            f" -> {picked}{want}, {calls}")
    text += "  ok" if p.ok else "  FAILED"
    lines = [text]
    if p.race:
        lines.append(f"        {races.text(p.race)}")
    for m in p.mismatches:
        index = "".join(f"[{i}]" for i in m["index"])
        allowed = f"; allowed difference {m['allowed']:.3g}" if m.get("allowed") is not None else ""
        lines.append(f"        mismatch {m['array']}{index}{_SECOND if m.get('order') == 2 else ''}: "
                     f"expected {m['expected']}, got {m['got']} ({m['count']} of {m['size']} elements differ"
                     f"{allowed})")
    if p.bounds:
        lines.append("        compared within twice the serial C's own spread with and without FMA contraction: "
                     + ", ".join(f"{a} {b['allowed']:.3g}" for a, b in p.bounds.items()))
    for g in p.guards:
        lines.append(f"        {g['version']} version wrote outside '{g['array']}'"
                     f"{_SECOND if g.get('order') == 2 else ''}")
    if p.error:
        lines.append(f"        {p.error}")
    return "\n".join(lines)


def text(result: FileResult, verbose: bool = True) -> str:
    lines = [f"{result.file}: " + ("verified" if result.ok else "NOT verified")]
    if result.error:
        lines.append(f"  {result.error}")
    for e in result.errors:
        lines.append(f"  error in the analysis (that code is not verified): {e}")
    for s in result.schedules:
        total = sum(len(c.points) for c in s.cases)
        lines.append(f"\n{s.id}  (line {s.line})  {len(s.cases)} cases, {total} points"
                     f"{', all match' if s.ok else ''}  [{s.seconds:.1f} s]")
        if s.error:
            lines.append(f"  not verified: {s.error}")
        if s.unproved:
            lines.append("  not verified: the analysis could not prove its meta_for iterations independent (PK021), "
                         "so runs that find no race do not show there is none at other sizes; "
                         f"{UNPROVED_DRAWS} times the points were drawn to look for one:")
            lines.extend(f"    {u}" for u in s.unproved)
        for c in s.cases:
            lines.append(f"  case {c.index}/{len(s.cases)}: {c.constraints}   {' '.join(c.decisions)}")
            lines.append(f"    {len(c.points)} points, chosen at {c.chosen}, mismatches {c.mismatches}"
                         f"{f', races {c.races}' if c.races else ''}{'' if c.ok else '  FAILED'}")
            if c.note:
                lines.append(f"    {c.note}")
            if verbose or not c.ok:
                lines.extend(_point_line(p) for p in c.points)
        if s.defaults:
            right = sum(1 for p in s.defaults if p.ok)
            lines.append(f"  the default dispatcher (the time model's fastest case) on emulated GPUs: the case "
                         f"dispatch.choose computes at {right} of {len(s.defaults)} points"
                         f"{'' if right == len(s.defaults) else '  FAILED'}")
            for p in s.defaults:
                if verbose or not p.ok:
                    lines.append(f"    {p.origin.removeprefix('default on ').upper()}:" + _point_line(p)[5:])
    lines.append("")
    lines.append(f"({tolerance_note(result.tolerance)})")
    if result.build_dir:
        lines.append(f"(build files kept in {result.build_dir})")
    return "\n".join(lines)
