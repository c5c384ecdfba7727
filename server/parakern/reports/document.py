"""The JSON document of `optimize --json` (docs/cli.md: the JSON document) and the readable text report."""
from __future__ import annotations

from parakern.analysis.updates import described
from parakern.model import Schedule
from parakern.pipeline import Analysis, ScheduleResult
from parakern.symbolic.printing import to_c
from parakern.symbolic.symbols import opaque
from parakern.machine.devices import DEFAULT_PROFILES
from parakern.reports.casetree import tree_json
from parakern.reports.runs import runs, runs_text
from parakern.reports.traffic import schedule_traffic, traffic_json
from parakern.reports.casetree import tree_dot
from parakern.reports.casetree import tree_text
from parakern.reports.traffic import text_lines


def _s(expr) -> str:
    """sympy syntax: the JSON contract."""
    return "?" if expr is None else str(expr)


def _c(expr) -> str:
    """C, as the user wrote it, for the text report (`n / B`, `B == 2048`, `n*n`; never sympy's
    `floor(n/B)`, `Eq(B, 2048)`, `n**2`)."""
    return "?" if expr is None else to_c(expr)


def _serial_bound(loop) -> str:
    """`k < n / B`, `-R <= di < R + 1` (a start other than 0 shown: `di < 3` hid five trips),
    a step other than 1; or where a bound is read from an array, where it is."""
    if opaque(loop.hi) or opaque(loop.lo):
        return f"{loop.var} (line {loop.span.line}) to a bound read from an array"
    start = f"{_c(loop.lo)} <= " if loop.lo != 0 else ""
    step = f" step {_c(loop.step)}" if loop.step != 1 else ""
    return f"{start}{loop.var} < {_c(loop.hi)}{step}"


def schedule_json(result: ScheduleResult, profiles: tuple = DEFAULT_PROFILES, data: "dict | None" = None) -> dict:
    schedule = result.schedule
    body = _schedule_fields(schedule)
    if result.tree is not None:
        body.update(tree_json(result.tree))
        body["runs"] = [r.as_dict() for r in runs(result, profiles, data)]
        _add_traffic(result, body)
    body["not_applied"] = [{"code": code, "why": why} for code, why in result.not_applied]
    return body


def _add_traffic(result: ScheduleResult, body: dict) -> None:
    """Each case's memory traffic at the schedule's profile point (reports/traffic.py)."""
    point, per_case = schedule_traffic(result)
    body["traffic_point"] = point
    for case, t in zip(body["cases"], per_case if point is not None else []):
        case["traffic"] = traffic_json(t)


def _schedule_fields(schedule: Schedule) -> dict:
    return {
        "id": schedule.id,
        "function": schedule.function,
        "range": schedule.span.to_lsp(),
        "keyword_range": schedule.keyword_span.to_lsp(),
        "parameters": {"data": [p.name for p in schedule.data_params],
                       "program": [p.name for p in schedule.program_params]},
        "derived": {d.name: _s(d.value) for d in schedule.derived},
        "arrays": [{"name": a.name, "type": a.ctype, "dims": [_s(d) for d in a.dims],
                    "read": a.read, "written": a.written,
                    "cached": a.name in {c.name for c in schedule.cache}}
                   for a in schedule.arrays],
        "grid": [_s(loop.extent) for loop in schedule.grid],
        "block": [_s(loop.extent) for loop in schedule.block],
        "loops": [{"var": loop.var, "level": loop.level, "axis": loop.axis,
                   "extent": _s(loop.extent), "range": loop.keyword_span.to_lsp()}
                  for loop in schedule.loops],
        "serial": [{"var": loop.var, "trip_count": _s(loop.trip_count), "between": loop.between,
                    "range": loop.keyword_span.to_lsp()}
                   for loop in schedule.between + schedule.serial],
        "cache": [c.name for c in schedule.cache],
        "atomics": [{"line": line, "statement": statement, "array": a.array, "op": a.op, "function": function,
                     "range": a.span.to_lsp()}
                    for a, (line, statement, function) in zip(schedule.atomics, described(schedule))],
        "facts": [_s(f.relation) for f in schedule.facts],
        "accesses": [{"array": a.array, "indices": [_s(i) for i in a.indices],
                      "read": a.is_read, "write": a.is_write, "exact": a.exact,
                      "range": a.span.to_lsp()} for a in schedule.accesses],
        "cases": [],
        "coverage": None,
    }


def document(analysis: Analysis, profiles: tuple = DEFAULT_PROFILES, data: "dict | None" = None) -> dict:
    """profiles: the GPUs `runs` says what runs on; data: the data sizes (lists of values) it says it
    at (the bench's default where not given)."""
    return {
        "file": analysis.file,
        "target": analysis.options.target,
        "schedules": [schedule_json(r, profiles, data) for r in analysis.results],
        "diagnostics": [d.to_json() for d in analysis.diagnostics],
    }


def dot(analysis: Analysis) -> str:
    return "\n".join(tree_dot(r.tree, r.schedule.id) for r in analysis.results if r.tree is not None)


def text(analysis: Analysis, profiles: tuple = DEFAULT_PROFILES, data: "dict | None" = None) -> str:
    lines = []
    result = analysis
    count = len(analysis.results)
    lines.append(f"{result.file}: {count} meta_schedule block{'s' * (count != 1)} analysed"
                 + (f", {len(result.diagnostics)} diagnostic{'s' * (len(result.diagnostics) != 1)}"
                    if result.diagnostics else ""))
    for d in result.diagnostics:
        lines.append("  " + d.format())
    for r in analysis.results:
        s = r.schedule
        lines.append("")
        lines.append(f"{s.id}  (line {s.keyword_span.line})")
        derived = {d.name: d.value for d in s.derived}
        for loop in s.loops:
            index = "blockIdx" if loop.level == "grid" else "threadIdx"
            extent = loop.extent
            where = f"   {extent} = {_c(derived[str(extent)])}" if str(extent) in derived else ""
            lines.append(f"  {loop.level:<6} {loop.var} in [{_c(loop.lo)}, {_c(loop.hi)}) -> "
                         f"{index}.{loop.axis}{where}")
        for loop in s.between:
            lines.append(f"  serial {_serial_bound(loop)} between grid and block levels")
        for loop in s.serial:
            lines.append(f"  serial {_serial_bound(loop)} inside each thread")
        lines.append(f"  data parameters     {', '.join(p.name for p in s.data_params) or '-'}")
        lines.append(f"  program parameters  {', '.join(p.name for p in s.program_params) or '-'}")
        cached = {c.name for c in s.cache}
        for a in s.arrays:
            dims = "".join(f"[{_c(d)}]" for d in a.dims) if a.dims else " (pointer)"
            use = ", ".join(u for u, on in (("read", a.read), ("written", a.written),
                                            ("cached", a.name in cached)) if on)
            lines.append(f"  array {a.name}: {a.ctype}{dims}  {use}")
        for line, statement, function in described(s):
            lines.append(f"  atomic {statement} (line {line}): {function}, iterations may update one element at once")
        if s.facts:
            lines.append(f"  facts  {'; '.join(_c(f.relation) for f in s.facts)}")
        if r.tree is not None:
            lines.extend(tree_text(r.tree))
            if r.tree.cases:
                lines.extend(runs_text(r, runs(r, profiles, data)))
            lines.extend(text_lines(*schedule_traffic(r)))
            lines.extend(f"  not applied {code}: {why}" for code, why in r.not_applied)
        else:
            lines.append("  no case tree: see the diagnostics above")
    return "\n".join(lines)
