"""Pure: pipeline results -> picklable, JSON-able summaries, and the texts the editor shows.

No pygls here: the worker processes build `ScheduleSummary` objects (with z3 for the
per-GPU conditions) and the server only formats them. Ranges are 0-based
`(line, character, end_line, end_character)` tuples in Unicode code points; the
server converts them to the client's position encoding. Ranges inside a summary
are *relative to the first line of the enclosing function*, so that a summary
stays valid when lines above the function are edited (the engine shifts them).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Iterable, Optional

from parakern.strategies.decisions import editor_words, plain_codes

Range = tuple[int, int, int, int]

SOURCE = "parakern"
# Codes of the diagnostics the editor integration adds (the pipeline's are PK001..PK099).
CASE_CODE = "PK100"       # information: one per case
TIMEOUT_CODE = "PK097"    # analysis of a schedule ran past timeLimitSeconds
CRASH_CODE = "PK098"      # the analysis worker died (or failed) on a schedule

DECISIONS = editor_words()    # decision code -> the editor's words
# Decisions that mean "nothing was done": left out of the one-line case message.
_PLAIN = plain_codes()

from parakern.frontend.generated import BEGIN_MARK, END_MARK, generated_regions, mask_generated  # noqa: F401


# ------------------------------------------------------------------ data


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
            self, range=_shift(self.range, delta),
            related=tuple((_shift(r, delta), m) for r, m in self.related))


def _shift(r: Range, delta: int) -> Range:
    return (r[0] + delta, r[1], r[2] + delta, r[3])


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


@dataclass(frozen=True)
class ProfileInfo:
    key: str                       # "h100"
    name: str                      # "NVIDIA H100 SXM5 80GB"
    values: tuple                  # (("R", 255), ("Z", 232448), ("T", 1024))
    conditions: tuple              # ((case index, text or None), ...): None = cannot run there, "" = always


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

    @property
    def has_tree(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class LoopView:
    var: str
    level: str
    axis: str
    extent: str
    keyword: Range


@dataclass(frozen=True)
class ScheduleView:
    """What the editor needs of a front-end Schedule, with absolute ranges."""
    id: str
    function: str
    index: int
    keyword: Range
    span: Range
    function_span: "Range | None"
    loops: tuple                   # LoopView
    cache: tuple                   # ((name, Range), ...)
    key: str = ""


# ------------------------------------------------------------------ source helpers


def span_range(span, origin: int = 0) -> Range:
    """A diagnostics.Span (1-based, code points, end exclusive) as a 0-based Range,
    lines relative to `origin` (0-based)."""
    return (span.line - 1 - origin, span.col - 1, span.end_line - 1 - origin, span.end_col - 1)


def diag_info(d, origin: int = 0, file: "str | None" = None) -> DiagInfo:
    related = tuple((span_range(r.span, origin), r.message) for r in d.related
                    if file is None or r.span.file == file)
    return DiagInfo(d.severity.value, d.code, d.message, span_range(d.span, origin), related)


def view_of(schedule, key: str = "") -> ScheduleView:
    loops = tuple(LoopView(loop.var, loop.level, loop.axis, _math(loop.extent),
                           span_range(loop.keyword_span)) for loop in schedule.loops)
    cache = tuple((c.name, span_range(c.span)) for c in schedule.cache)
    fspan = span_range(schedule.function_span) if schedule.function_span is not None else None
    return ScheduleView(schedule.id, schedule.function, schedule.index,
                        span_range(schedule.keyword_span), span_range(schedule.span), fspan,
                        loops, cache, key)


_CONTEXT_LINE = re.compile(r"^(#\s*(define|include|undef|if|ifdef|ifndef|else|elif|endif|pragma)\b"
                           r"|typedef\b|(static\s+|const\s+|extern\s+|unsigned\s+|signed\s+)*"
                           r"(int|long|short|char|float|double|size_t|unsigned|struct\s+\w+)\b[^(]*;)")


def cache_key(text_lines: list[str], schedule, settings_part: str) -> str:
    """A key that changes when anything the schedule's analysis reads changes, and not
    when lines above (or below) the enclosing function are edited: the function's text,
    the schedule's index in it, the file-scope declarations and preprocessor lines (a
    heuristic: lines at column 0 that declare or define), and the analysis settings."""
    fs = schedule.function_span
    if fs is None:
        start, end = schedule.span.line - 1, schedule.span.end_line
    else:
        start, end = fs.line - 1, fs.end_line
    function_text = "\n".join(text_lines[start:end])
    context = [line.rstrip() for k, line in enumerate(text_lines)
               if not (start <= k < end) and _CONTEXT_LINE.match(line)]
    payload = json.dumps([function_text, fs.col if fs else 0, schedule.index, schedule.id,
                          context, settings_part], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def function_origin(schedule) -> int:
    """0-based line that relative ranges of a summary count from."""
    fs = schedule.function_span
    return (fs.line if fs is not None else schedule.span.line) - 1


def view_origin(view: ScheduleView) -> int:
    return view.function_span[0] if view.function_span is not None else view.span[0]


# ------------------------------------------------------------------ building summaries (worker)


def _math(expr) -> str:
    import sympy
    from parakern.printing import to_math
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
    from parakern import constraints as cs
    from parakern.printing import to_math
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
                    parts.append(f"{_math(r.lhs)} {ops[type(r)]} {_math(r.rhs)} "
                                 f"{ops[type(other)]} {_math(other.rhs)}")
                    break
            else:
                parts.append(to_math(r))
        else:
            parts.append(to_math(r))
    return " ∧ ".join(parts) or "always"


def case_info(case, index: int) -> CaseInfo:
    from parakern.printing import to_c, to_math
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
        registers=_math(values.get("registers", "?")),
        shared=_math(values.get("shared_memory", 0)),
        threads=_math(values.get("threads", "?")),
        occupancy=None if occupancy is None else _math(occupancy),
        cached=tuple(getattr(case.kernel, "cached", ()) or ()),
        witness=witness,
        verified=bool(case.verified),
    )


def profile_info(tree, key: str, timeout_ms: int = 2000) -> ProfileInfo:
    """Under which condition on the program parameters each case runs on this GPU
    (parakern.dispatch.on_profile), as the editor shows it."""
    from parakern.dispatch import on_profile
    cases = on_profile(tree, key, timeout_ms)
    conditions = tuple((k, None if relations is None else chain_text(relations) if relations else "")
                       for k, relations in cases.conditions)
    return ProfileInfo(cases.key, cases.name, cases.values, conditions)


def summarize(result, key: str, origin: int, profiles: Iterable[str], seconds: float = 0.0,
              file: "str | None" = None) -> ScheduleSummary:
    """A pipeline.ScheduleResult as a summary (runs in the worker: z3 for the profiles)."""
    schedule = result.schedule
    diagnostics = tuple(diag_info(d, origin, file) for d in result.diagnostics)
    tree = result.tree
    if tree is None:
        return ScheduleSummary(key, schedule.id, schedule.function, "no-tree",
                               diagnostics=diagnostics, seconds=seconds)
    from parakern.casetree_report import tree_dot, tree_text
    from parakern.printing import to_math
    cases = tuple(case_info(c, k) for k, c in enumerate(tree.cases, 1))
    uncovered = tuple((" ∧ ".join(to_math(r) for r in u.constraints.relations) or "always", u.counter)
                      for u in tree.uncovered)
    infos = tuple(profile_info(tree, p) for p in profiles)
    return ScheduleSummary(key, schedule.id, schedule.function, "ok", diagnostics=diagnostics,
                           cases=cases, uncovered=uncovered, coverage=tree.coverage.status,
                           profiles=infos, tree_text="\n".join(tree_text(tree)),
                           tree_dot=tree_dot(tree, schedule.id), seconds=seconds)


def failure(key: str, view_or_schedule, status: str, message: str, origin: int = 0) -> ScheduleSummary:
    """A timeout / crash / error as a summary carrying ONE diagnostic on the keyword."""
    keyword = (view_or_schedule.keyword if isinstance(view_or_schedule, ScheduleView)
               else span_range(view_or_schedule.keyword_span))
    rel = (keyword[0] - origin, keyword[1], keyword[2] - origin, keyword[3])
    code = TIMEOUT_CODE if status == "timeout" else CRASH_CODE
    severity = "warning" if status == "timeout" else "error"
    diag = DiagInfo(severity, code, message, rel)
    return ScheduleSummary(key, view_or_schedule.id, view_or_schedule.function, status, message,
                           diagnostics=(diag,))


# ------------------------------------------------------------------ texts for the editor


def case_message(summary: ScheduleSummary, case: CaseInfo) -> str:
    notes = [f"{DECISIONS.get(d, d)} {d}" for d in case.decisions if d not in _PLAIN]
    text = f"case {case.index}/{len(summary.cases)}: {case.condition}"
    return text + (" — " + ", ".join(notes) if notes else " — kernel as written")


def case_diagnostics(summary: ScheduleSummary, keyword_rel: Range) -> list[DiagInfo]:
    return [DiagInfo("information", CASE_CODE, case_message(summary, c), keyword_rel)
            for c in summary.cases]


def _smem(shared: str) -> str:
    return "no smem" if shared == "0" else f"smem {shared} B"


def lens_title(summary: "ScheduleSummary | None", case_trees: bool = True) -> str:
    if not case_trees:
        return "parakern: case trees off"
    if summary is None:
        return "analysing…"
    if summary.status == "ok":
        n = len(summary.cases)
        if n == 0:
            return "no case: nothing fits (see hover)"
        first = summary.cases[0]
        return f"{n} case{'s' * (n != 1)} · {first.registers} regs · {_smem(first.shared)}"
    if summary.status == "timeout":
        return "analysis timed out"
    if summary.status in ("crash", "error"):
        return "analysis failed"
    return "no cases: fix the errors"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def cases_table(summary: ScheduleSummary) -> str:
    rows = ["| case | constraints | decisions | registers | shared memory | z3 witness |",
            "|---|---|---|---|---|---|"]
    for c in summary.cases:
        witness = ", ".join(f"{k}={v}" for k, v in c.witness) or "—"
        if not c.verified:
            witness += " (consistency unproved)"
        shared = "none" if c.shared == "0" else f"{c.shared} B"
        rows.append(f"| {c.index} | {_cell(c.condition)} | "
                    f"{_cell(' '.join(c.decisions))} | {_cell(c.registers)} | {_cell(shared)} | "
                    f"{_cell(witness)} |")
    return "\n".join(rows)


def profile_lines(summary: ScheduleSummary) -> list[str]:
    lines = []
    for p in summary.profiles:
        parts = []
        for index, condition in p.conditions:
            if condition is None:
                parts.append(f"case {index} cannot run there")
            elif condition == "":
                parts.append(f"case {index} always")
            else:
                parts.append(f"case {index} when {condition}")
        values = ", ".join(f"{k}={v}" for k, v in p.values)
        lines.append(f"- **{p.key.upper()}**: " + ("; ".join(parts) or "no case") +
                     f"  \n  <sub>{p.name}: {values}</sub>")
    return lines


def hover_markdown(view: ScheduleView, summary: "ScheduleSummary | None", token: str,
                   name: str = "", case_trees: bool = True) -> str:
    head = [f"**parakern** · `{view.id}`"]
    if token == "meta_for":
        loop = next((l for l in view.loops if l.var == name), None)
        if loop is not None:
            index = "blockIdx" if loop.level == "grid" else "threadIdx"
            head.append(f"`meta_for {loop.var}` → `{index}.{loop.axis}` ({loop.level} level), "
                        f"extent {loop.extent}")
    elif token == "cache" or token == "cached":
        names = [n for n, _ in view.cache]
        head.append("`cache(" + ", ".join(names) + ")`: staged in shared memory where a case keeps it (4a)")
    if not case_trees:
        return "\n\n".join(head + ["Case trees are turned off (setting `parakern.caseTrees`)."])
    if summary is None:
        return "\n\n".join(head + ["_analysis running…_"])
    if summary.status in ("timeout", "crash", "error"):
        return "\n\n".join(head + [f"⚠ {summary.message}"])
    if summary.status != "ok":
        return "\n\n".join(head + ["No case tree: this meta_schedule has errors (see the diagnostics)."])
    n = len(summary.cases)
    coverage = {"proved": "coverage proved by z3", "refuted": "coverage refuted",
                "unknown": "coverage not proved"}.get(summary.coverage, "")
    head[0] += f" · {n} case{'s' * (n != 1)}" + (f" · {coverage}" if coverage else "")
    parts = head[:]
    if token == "cached" and name:
        staged = [str(c.index) for c in summary.cases if name in c.cached]
        plain = [str(c.index) for c in summary.cases if name not in c.cached]
        parts.append(f"`{name}`: in shared memory in case{'s' * (len(staged) != 1)} "
                     f"{', '.join(staged) or '—'}; from global memory in "
                     f"case{'s' * (len(plain) != 1)} {', '.join(plain) or '—'}")
    parts.append(cases_table(summary))
    if summary.profiles:
        parts.append("**Which case runs where** (R, Z, T of the GPU substituted, simplified by z3)\n\n"
                     + "\n".join(profile_lines(summary)))
    if summary.uncovered:
        parts.append("**No kernel fits** where " + "; ".join(
            f"{text} ({counter})" for text, counter in summary.uncovered))
    return "\n\n".join(parts)


def tree_markdown(view_id: str, summary: ScheduleSummary) -> str:
    if summary.status != "ok":
        return f"# {view_id}\n\nNo case tree ({summary.status}). {summary.message}".rstrip()
    parts = [f"# Case tree of `{view_id}`", cases_table(summary)]
    if summary.profiles:
        parts.append("## Known GPUs\n\n" + "\n".join(profile_lines(summary)))
    parts.append("## Tree\n\n```text\n" + summary.tree_text + "\n```")
    return "\n\n".join(parts) + "\n"


def word_at(line: str, character: int) -> tuple[str, int, int]:
    """The identifier around a code-point column: (word, start, end); ("", c, c) if none."""
    if not line:
        return "", character, character
    character = max(0, min(character, len(line)))
    start = character
    while start > 0 and (line[start - 1].isalnum() or line[start - 1] == "_"):
        start -= 1
    end = character
    while end < len(line) and (line[end].isalnum() or line[end] == "_"):
        end += 1
    return line[start:end], start, end


def contains(r: Range, line: int, character: int) -> bool:
    return (r[0], r[1]) <= (line, character) <= (r[2], r[3])


def overlaps(a: Range, b: Range) -> bool:
    return (a[0], a[1]) <= (b[2], b[3]) and (b[0], b[1]) <= (a[2], a[3])


def token_at(views: Iterable[ScheduleView], line_text: str, line: int, character: int
             ) -> "Optional[tuple[ScheduleView, str, str]]":
    """(schedule, token kind, name) for a hover: `meta_schedule`, `meta_for` (name: its
    loop variable), `cache`, or a name inside cache(...) ("cached")."""
    word, start, end = word_at(line_text, character)
    if not word:
        return None
    for view in views:
        if not contains(view.span, line, character):
            continue
        if word == "meta_schedule" and view.keyword[0] == line:
            return view, "meta_schedule", ""
        if word == "meta_for":
            for loop in view.loops:
                if loop.keyword[0] == line and loop.keyword[1] <= character <= loop.keyword[3]:
                    return view, "meta_for", loop.var
            return view, "meta_for", ""
        if word == "cache" and line == view.keyword[0]:
            return view, "cache", ""
        for name, r in view.cache:
            if name == word and contains(r, line, start):
                return view, "cached", name
    return None
