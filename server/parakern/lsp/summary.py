"""What an analysis worker computes of one schedule: a picklable, JSON-able
`ScheduleSummary` built from a pipeline result (z3 for the per-GPU conditions), and
the keys it is cached under.

No pygls here, and no editor texts (texts.py builds those from a summary). Ranges in
a summary are relative to the first line of the enclosing function (ranges.py).
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Iterable

from parakern.analysis.updates import described
from parakern.frontend.lexical import file_scope_code
from parakern.lsp.ranges import Range, shifted, span_range

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
    profiles: tuple = ()           # known GPUs (machine/devices.py) on which the dispatcher picks it; () = theoretical
    traffic: str = ""              # memory traffic at the schedule's traffic_point, one line


@dataclass(frozen=True)
class ProfileInfo:
    key: str                       # "h100"
    name: str                      # "NVIDIA H100 SXM5 80GB"
    values: tuple                  # (("R_B", 65536), ("T", 1024), ("Z", 232448))
    conditions: tuple              # ((case index, text or None), ...): None = cannot run there, "" = always


@dataclass(frozen=True)
class TuneInfo:
    """The time model's recommended configuration on one GPU profile (tuning/search.py)."""
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
    import sympy
    from parakern.symbolic.printing import to_math
    try:
        value = sympy.sympify(expr)
    except Exception:
        return str(expr)
    if value.is_Integer:
        return str(int(value))
    return to_math(value)


def chain_text(relations) -> str:
    """Relations joined with ∧, `a ≤ X` and `X < b` merged into `a ≤ X < b`."""
    import sympy
    from parakern.symbolic import constraints as cs
    from parakern.symbolic.printing import to_math
    items = [cs.canonical(r) for r in relations]
    used = [False] * len(items)
    parts = []
    ops = {sympy.Le: "≤", sympy.Lt: "<"}
    for i, r in enumerate(items):
        if used[i]:
            continue
        used[i] = True
        if type(r) in ops and isinstance(r.rhs, sympy.Symbol):
            for j, other in enumerate(items):
                if not used[j] and type(other) in ops and other.lhs == r.rhs:
                    used[j] = True
                    parts.append(f"{math_text(r.lhs)} {ops[type(r)]} {math_text(r.rhs)} "
                                 f"{ops[type(other)]} {math_text(other.rhs)}")
                    break
            else:
                parts.append(to_math(r))
        else:
            parts.append(to_math(r))
    return " ∧ ".join(parts) or "always"


def diag_info(d, origin: int = 0, file: "str | None" = None) -> DiagInfo:
    """A pipeline Diagnostic, lines relative to `origin`; related spans of other files dropped."""
    related = tuple((span_range(r.span, origin), r.message) for r in d.related
                    if file is None or r.span.file == file)
    return DiagInfo(d.severity.value, d.code, d.message, span_range(d.span, origin), related)


def case_info(case, index: int, profiles: tuple = ()) -> CaseInfo:
    from parakern.symbolic.printing import to_c, to_math
    values = dict(case.counters)
    occupancy = values.get("occupancy")
    witness = tuple(sorted((k, v if isinstance(v, (int, float)) else str(v))
                           for k, v in (case.witness or {}).items()))
    return CaseInfo(
        index=index,
        constraints=tuple(to_math(r) for r in case.constraints.relations),
        constraints_c=tuple(to_c(r) for r in case.constraints.relations),
        condition=chain_text(case.constraints.relations),
        decisions=tuple(case.decisions),
        registers=math_text(values.get("registers", "?")),
        shared=math_text(values.get("shared_memory", 0)),
        threads=math_text(values.get("threads", "?")),
        occupancy=None if occupancy is None else math_text(occupancy),
        cached=tuple(getattr(case.kernel, "cached", ()) or ()),
        witness=witness,
        verified=bool(case.verified),
        needs=chain_text(case.needs.relations),
        profiles=tuple(profiles),
    )


def profile_info(tree, key: str, timeout_ms: int = 2000) -> ProfileInfo:
    """Under which condition on the program parameters each case runs on this GPU
    (parakern.dispatch.on_profile), as the editor shows it."""
    from parakern.dispatch import on_profile
    cases = on_profile(tree, key, timeout_ms)
    conditions = tuple((k, None if relations is None else chain_text(relations) if relations else "")
                       for k, relations in cases.conditions)
    return ProfileInfo(cases.key, cases.name, cases.values, conditions)


def tune_info(result, key: str, data: "dict | None" = None) -> TuneInfo:
    """The best configuration by the time model on a GPU profile, at `data` (default: every
    parameter that is not tuned, and every argument only the function's asserts read, at the
    bench's default size): one that computes every point where any does, else marked."""
    from parakern import syntax
    from parakern.analysis.facts import fact_arguments
    from parakern.machine.devices import get_profile
    from parakern.lsp.benchjob import DEFAULT_DATA
    from parakern.tuning import search, space, time_model
    from parakern.reports.tuning import configuration_text, time_text
    schedule = result.schedule
    tuned = space.tuned_parameters(schedule)
    values = dict(data or {})
    for p in schedule.params:
        if p.name not in tuned and p.name not in values and p.ctype in syntax.INTEGER_TYPES:
            values[p.name] = 0 if p.name in schedule.host_loops else DEFAULT_DATA
    # the function's arguments only its asserts read (another schedule's size) at the same size
    host = {n: DEFAULT_DATA for n in sorted(fact_arguments(schedule)) if n not in values}
    shown = " ".join(f"{n}={v}" for n, v in {**values, **host}.items() if n not in schedule.host_loops)
    try:
        tuning = search.tune(result, values, time_model.modelled(get_profile(key)), host)
    except (search.TuneError, time_model.ModelError, KeyError) as exc:
        return TuneInfo(key, shown, str(exc).strip("'\""))
    pick = tuning.pick
    if pick is None:
        return TuneInfo(key, shown, "no feasible configuration")
    text = configuration_text(pick)
    if pick.by == search.MODEL:   # the tree's dispatcher would launch another case there
        text += f" (`{schedule.function}_{schedule.index}_dispatch_auto` picks it; the tree prefers another case)"
    if pick.partial:   # only where no feasible candidate computes every point
        text += (f" — computes {pick.computes} of the serial program's iterations: no candidate "
                 "computes them all at these sizes")
    else:   # why a slow configuration: the faster ones compute less
        fastest = min(tuning.configurations, key=lambda c: (c.prediction.ranked, c.order))
        if fastest.partial:
            text += (f" — faster ones leave points out ({configuration_text(fastest)} computes {fastest.computes}: "
                     f"{tuning.shortfall(schedule, fastest)})")
    return TuneInfo(key, shown, text, time_text(pick.time), f"{pick.prediction.occupancy:.2f}")


def summarize(result, key: str, origin: int, profiles: Iterable[str], seconds: float = 0.0,
              file: "str | None" = None, tune: bool = True) -> ScheduleSummary:
    """A pipeline.ScheduleResult as a summary (runs in the worker: z3 for the profiles).
    tune: False leaves the recommended configurations out (`tunings` adds them later: the
    language server shows the cases first)."""
    schedule = result.schedule
    diagnostics = tuple(diag_info(d, origin, file) for d in result.diagnostics)
    tree = result.tree
    if tree is None:
        return ScheduleSummary(key, schedule.id, schedule.function, "no-tree",
                               diagnostics=diagnostics, seconds=seconds)
    atomics = described(schedule)
    if not tree.complete:   # the cases, at once; where they run, traffic and the rest follow
        return ScheduleSummary(key, schedule.id, schedule.function, "ok", diagnostics=diagnostics,
                               cases=tuple(case_info(c, k) for k, c in enumerate(tree.cases, 1)),
                               seconds=seconds, not_applied=tuple(result.not_applied), complete=False,
                               atomics=atomics)
    from parakern.reports.casetree import tree_dot, tree_text
    from parakern.symbolic.printing import to_math
    from parakern.dispatch import reachable
    on = dict(reachable(tree))
    cases = tuple(case_info(c, k, on[k]) for k, c in enumerate(tree.cases, 1))
    point, lines = _traffic(result)
    if lines:
        cases = tuple(dataclasses.replace(c, traffic=line) for c, line in zip(cases, lines))
    uncovered = tuple((" ∧ ".join(to_math(r) for r in u.constraints.relations) or "always", u.counter)
                      for u in tree.uncovered)
    infos = tuple(profile_info(tree, p) for p in profiles)
    return ScheduleSummary(key, schedule.id, schedule.function, "ok", diagnostics=diagnostics,
                           cases=cases, uncovered=uncovered, coverage=tree.coverage.status,
                           profiles=infos, tree_text="\n".join(tree_text(tree, on)),
                           tree_dot=tree_dot(tree, schedule.id), seconds=seconds,
                           not_applied=tuple(result.not_applied), traffic_point=point,
                           tuning=tunings(result, profiles) if tune else (), atomics=atomics)


def tunings(result, profiles: Iterable[str]) -> tuple:
    """The recommended configuration per GPU profile (TuneInfo), never raising."""
    return tuple(_tune_safely(result, p) for p in profiles)


def _tune_safely(result, key: str) -> TuneInfo:
    try:
        return tune_info(result, key)
    except Exception as exc:  # the model must not cost the editor its summary
        return TuneInfo(key, "", f"the time model failed ({type(exc).__name__}: {exc})")


def _traffic(result) -> tuple[str, list[str]]:
    """The point and one line per case of memory traffic (reports/traffic.py); none on failure."""
    from parakern.analysis.point import describe
    from parakern.reports.traffic import case_line, schedule_traffic
    try:
        point, per_case = schedule_traffic(result)
    except Exception:   # a figure the editor can do without: never a failed summary
        return "", []
    if point is None:
        return "", []
    return describe(point), [case_line(t) for t in per_case]


def failure(key: str, schedule_id: str, function: str, keyword: Range, status: str,
            message: str) -> ScheduleSummary:
    """A timeout / crash / error as a summary carrying ONE diagnostic on the keyword
    (`keyword` relative to the function's first line, as every range of a summary)."""
    code = TIMEOUT_CODE if status == "timeout" else CRASH_CODE
    severity = "warning" if status == "timeout" else "error"
    return ScheduleSummary(key, schedule_id, function, status, message,
                           diagnostics=(DiagInfo(severity, code, message, keyword),))
