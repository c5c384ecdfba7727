"""The editor's view of a front-end Schedule: its keyword, loops and cache names with
absolute ranges, its cache key, and which of its tokens is under the cursor (hover).
Built in the server from the front-end (no worker, no z3)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from parakern.lsp.ranges import Range, contains, span_range
from parakern.lsp.summary import function_origin, math_text


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
    origin: int = 0                # line its summary's ranges count from (summary.function_origin)
    outline: tuple = ()            # markdown lines: what the front-end knows (hover before the tree)


def view_of(schedule, key: str = "") -> ScheduleView:
    loops = tuple(LoopView(loop.var, loop.level, loop.axis, math_text(loop.extent),
                           span_range(loop.keyword_span)) for loop in schedule.loops)
    cache = tuple((c.name, span_range(c.span)) for c in schedule.cache)
    fspan = span_range(schedule.function_span) if schedule.function_span is not None else None
    return ScheduleView(schedule.id, schedule.function, schedule.index,
                        span_range(schedule.keyword_span), span_range(schedule.span), fspan,
                        loops, cache, key, function_origin(schedule), outline_of(schedule))


def outline_of(schedule) -> tuple[str, ...]:
    """The schedule as the front-end sees it, before any case tree: its mapping onto the
    grid and the block, its serial loops, parameters, arrays and facts (markdown lines)."""
    def loop(l) -> str:
        index = "blockIdx" if l.level == "grid" else "threadIdx"
        return f"`{l.var}` → `{index}.{l.axis}`, {math_text(l.lo)} ≤ {l.var} < {math_text(l.hi)}"

    def serial(l) -> str:
        step = "" if str(l.step) == "1" else f" step {math_text(l.step)}"
        return f"`{l.var}` ({math_text(l.lo)} ≤ {l.var} < {math_text(l.hi)}{step})"

    cached = {c.name for c in schedule.cache}
    lines = []
    if schedule.grid:
        lines.append("**Grid**: " + "; ".join(loop(l) for l in schedule.grid))
    if schedule.block:
        lines.append("**Block**: " + "; ".join(loop(l) for l in schedule.block))
    loops = [serial(l) + " between grid and block" for l in schedule.between] + \
            [serial(l) + " in each thread" for l in schedule.serial]
    if loops:
        lines.append("**Serial loops**: " + "; ".join(loops))
    for kind, title in (("data", "Data parameters"), ("program", "Program parameters")):
        names = [f"`{p.name}`" for p in schedule.params if p.kind == kind]
        if names:
            lines.append(f"**{title}**: " + ", ".join(names))
    arrays = []
    for a in schedule.arrays:
        use = " and ".join(w for w, on in (("read", a.read), ("written", a.written)) if on) or "unused"
        dims = "".join(f"[{math_text(d)}]" for d in a.dims)
        arrays.append(f"`{a.ctype} {a.name}{dims}` {use}" + (", cache(...)" if a.name in cached else ""))
    if arrays:
        lines.append("**Arrays**: " + "; ".join(arrays))
    if schedule.facts:
        lines.append("**Facts**: " + "; ".join(f"{math_text(f.relation)} ({f.origin})" for f in schedule.facts))
    return tuple(lines)


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
