"""What an analysis worker hands the server of one schedule: a picklable, JSON-able
`ScheduleSummary` (summarize.py builds it from a pipeline result, in the worker), and the
keys it is cached under. Light: the server imports it.

No pygls here, and no editor texts (texts.py builds those from a summary). Ranges in
a summary are relative to the first line of the enclosing function (ranges.py).
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from dataclasses import dataclass

import sympy

from parakern.frontend.lexical import file_scope_code
from parakern.lsp.ranges import Range, shifted, span_range
from parakern.symbolic.printing import to_math

SOURCE = "parakern"
# Codes of the diagnostics the editor integration adds (the pipeline's are PK001..PK099).
CASE_CODE = "PK100"       # information: one per case
TIMEOUT_CODE = "PK097"    # analysis of a schedule ran past timeLimitSeconds
CRASH_CODE = "PK098"      # the analysis worker died (or failed) on a schedule


# ------------------------------------------------------------------ records


@dataclass(frozen=True)
class DiagInfo:
    severity: str                  # "error" | "warning" | "information" | "hint"
    code: str
    message: str
    range: Range
    related: tuple = ()            # ((Range, message), ...), same document

    def shifted(self, delta: int) -> "DiagInfo":
        if not delta:
            return self
        return dataclasses.replace(
            self, range=shifted(self.range, delta),
            related=tuple((shifted(r, delta), m) for r, m in self.related))


@dataclass(frozen=True)
class CaseInfo:
    index: int                     # 1-based
    constraints: tuple[str, ...]   # Unicode mathematics, one relation each
    constraints_c: tuple[str, ...]
    condition: str                 # the relations as one line, chains merged (8·B + 8 ≤ Z < 8·B·s + 8)
    decisions: tuple[str, ...]
    registers: str
    shared: str                    # bytes per block, a formula ("0" when none)
    threads: str
    occupancy: "str | None"
    cached: tuple[str, ...]        # arrays staged in shared memory by this case
    witness: tuple                 # ((name, value), ...)
    verified: bool
    needs: str = ""                # what its own kernel needs of the machine, one line
    profiles: tuple = ()           # known GPUs (machine/devices.py) whose limits let its kernel run; () = theoretical
    traffic: str = ""              # memory traffic at the schedule's traffic_point, one line


@dataclass(frozen=True)
class ProfileInfo:
    key: str                       # "h100"
    name: str                      # "NVIDIA H100 SXM5 80GB"
    values: tuple                  # (("R_B", 65536), ("T", 1024), ("Z", 232448))
    conditions: tuple              # ((case index, text or None), ...): None = cannot run there, "" = always


@dataclass(frozen=True)
class RunInfo:
    """What the default dispatcher launches on one GPU profile at the bench's sizes (reports/runs.py)."""
    key: str                       # "h100"
    at: str                        # the point: "N=1024 s=1 B=256"
    case: "int | None" = None      # None: `why`
    predicted: str = ""            # "2.14 µs"
    registers: str = ""
    shared: str = ""               # "264 B", "" for none
    threads: str = ""
    others: tuple = ()             # the other cases that fit there
    tree: "int | None" = None      # what the tree's order launches there
    why: str = ""


@dataclass(frozen=True)
class TuneInfo:
    """The time model's recommended configuration on one GPU profile (search.py)."""
    key: str                       # "h100"
    data: str                      # the values it was tuned at: "N=1024"
    configuration: str             # "case 1: s=8 B=256", or why there is none
    predicted: str = ""            # "8.14 µs"
    occupancy: str = ""            # "1.00"


@dataclass(frozen=True)
class ScheduleSummary:
    key: str
    id: str
    function: str
    status: str                    # "ok" | "no-tree" | "timeout" | "crash" | "error" | "missing"
    message: str = ""              # for timeout / crash / error
    diagnostics: tuple = ()        # DiagInfo, ranges relative to the function's first line
    cases: tuple = ()              # CaseInfo
    uncovered: tuple = ()          # ((math text, counter), ...)
    coverage: str = ""             # "proved" | "refuted" | "unknown" | ""
    profiles: tuple = ()           # ProfileInfo
    tree_text: str = ""
    tree_dot: str = ""
    seconds: float = 0.0
    not_applied: tuple = ()        # ((decision code, why), ...): strategies that cannot apply here
    traffic_point: str = ""        # where the cases' memory traffic is evaluated: "n=1024 B0=8 ..."
    tuning: tuple = ()             # TuneInfo per GPU profile
    runs: tuple = ()               # RunInfo per GPU profile: what the default dispatcher launches
    complete: bool = True          # False: the cases alone, the rest follows (worker.cases, then worker.analyse)
    atomics: tuple = ()            # ((line, statement, CUDA function), ...): the updates made atomically (7)

    @property
    def has_tree(self) -> bool:
        return self.status == "ok"

    @property
    def why_no_tree(self) -> str:
        """What stopped the tree, in the words the user acts on: the failure's message, else the
        first error on the schedule."""
        errors = [d.message for d in self.diagnostics if d.severity == "error"]
        return self.message or (errors[0] if errors else "fix the errors shown on it first")

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


# ------------------------------------------------------------------ keys


@functools.lru_cache(maxsize=8)
def _context(text: str) -> str:
    """The file's code outside functions (this schedule's function is left out with the others)."""
    return file_scope_code(text)


def cache_key(text_lines: list[str], schedule, settings_part: str, siblings: tuple = ()) -> str:
    """A key that changes when anything the schedule's analysis reads changes, and not
    when lines above (or below) the enclosing function are edited: the function's text,
    the schedule's index in it, the code outside function bodies (declarations, enums,
    `#define`s and their continuation lines: lexical.file_scope_code), the file's name (the
    generated code and every range cite it) and the analysis settings.
    The other schedules of the function (`siblings`) are left out of its text: an edit
    inside one of them re-analyses that one only (a schedule reads nothing another one
    declares: what a meta_schedule declares is local to it); where this schedule starts
    within the function stays in the key, since its summary's ranges count from there."""
    fs = schedule.function_span
    if fs is None:
        start, end = schedule.span.line - 1, schedule.span.end_line
    else:
        start, end = fs.line - 1, fs.end_line
    function_text = _without_siblings(text_lines, start, end, schedule, siblings)
    context = _context("\n".join(text_lines))   # the same for every schedule of the text: computed once
    payload = json.dumps([function_text, fs.col if fs else 0, schedule.index, schedule.id,
                          schedule.span.line - 1 - start, schedule.span.col,
                          context, schedule.span.file, settings_part], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _without_siblings(text_lines: list[str], start: int, end: int, schedule, siblings) -> str:
    """Lines start..end of the text, each other schedule of the same function replaced by
    its index (spans: 1-based lines and columns, end exclusive)."""
    lines = text_lines[start:end]
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    text = "\n".join(lines)

    def offset(line: int, col: int) -> int:
        k = min(max(line - 1 - start, 0), len(lines))
        return min(offsets[k] + max(col - 1, 0), len(text))

    spans = sorted(((s.span, s.index) for s in siblings
                    if s.function == schedule.function and s.index != schedule.index and start < s.span.line <= end),
                   key=lambda item: (item[0].line, item[0].col))
    for span, index in reversed(spans):
        a, b = offset(span.line, span.col), offset(span.end_line, span.end_col)
        if a < b:
            text = text[:a] + f"meta_schedule#{index}" + text[b:]
    return text


def function_origin(schedule) -> int:
    """0-based line that relative ranges of a summary count from."""
    fs = schedule.function_span
    return (fs.line if fs is not None else schedule.span.line) - 1


def emit_key(key: str, origin: int) -> str:
    """The key of generated code: the cache key and where the function starts, since the
    generated comments cite source lines."""
    return f"{key}@{origin}"


# ------------------------------------------------------------------ building summaries


def math_text(expr) -> str:
    """A counter value or expression as Unicode mathematics (integers as they are)."""
    try:
        value = sympy.sympify(expr)
    except Exception:
        return str(expr)
    if value.is_Integer:
        return str(int(value))
    return to_math(value)


def diag_info(d, origin: int = 0, file: "str | None" = None) -> DiagInfo:
    """A pipeline Diagnostic, lines relative to `origin`; related spans of other files dropped."""
    related = tuple((span_range(r.span, origin), r.message) for r in d.related
                    if file is None or r.span.file == file)
    return DiagInfo(d.severity.value, d.code, d.message, span_range(d.span, origin), related)


def failure(key: str, schedule_id: str, function: str, keyword: Range, status: str,
            message: str) -> ScheduleSummary:
    """A timeout / crash / error as a summary carrying ONE diagnostic on the keyword
    (`keyword` relative to the function's first line, as every range of a summary)."""
    code = TIMEOUT_CODE if status == "timeout" else CRASH_CODE
    severity = "warning" if status == "timeout" else "error"
    return ScheduleSummary(key, schedule_id, function, status, message,
                           diagnostics=(DiagInfo(severity, code, message, keyword),))


def merged(tuning: tuple, found: tuple, order: tuple = ()) -> tuple:
    """The recommendations of `tuning` with those of `found` added or replacing theirs (by
    profile), in `order` of profiles (then the others as they came)."""
    by_key = {info.key: info for info in tuning}
    by_key.update((info.key, info) for info in found)
    rank = {key: k for k, key in enumerate(order)}
    return tuple(sorted(by_key.values(), key=lambda info: rank.get(info.key, len(rank))))
