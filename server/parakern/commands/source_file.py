"""What every command does with its FILE argument: read it, and pick the schedules to work on.

One home for the messages, so that `optimize`, `emit`, `verify`, `profile`, `tune` and `bench`
word a missing file alike, and a command that needs a case tree says why a schedule has none
(the file's diagnostics, with their positions) instead of only "schedules: none".
"""
from __future__ import annotations

import sys
from pathlib import Path
from parakern.verify.signature import SignatureError, signature


def read_source(path: str, command: str) -> "str | None":
    """The file's text (undecodable bytes replaced, a UTF-8 byte order mark dropped as gcc
    does), or None after a one-line message on stderr."""
    try:
        return Path(path).read_text(encoding="utf-8-sig", errors="replace")
    except OSError as exc:
        print(f"parakern {command}: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return None


def schedules_with_tree(analysis, path: str, command: str, wanted: "str | None") -> list:
    """The analysis's results that have a case tree (only the schedule `wanted`, when given).

    Where none is left, the file's diagnostics go to stderr (they say what to change, where),
    then one line naming the schedules there are; the caller exits with its usage status."""
    named = [r for r in analysis.results if wanted in (None, r.schedule.id)]
    found = [r for r in named if r.tree is not None and r.tree.cases]
    if found:
        return found
    for d in analysis.diagnostics:
        print(d.format(), file=sys.stderr)
    print(f"parakern {command}: {no_tree(analysis, path, wanted)}", file=sys.stderr)
    return []


def no_tree(analysis, path: str, wanted: "str | None", where: str = "above") -> str:
    """Why schedules_with_tree found nothing: the schedules there are, and where (`where`) the
    file's diagnostics say why."""
    named = [r for r in analysis.results if wanted in (None, r.schedule.id)]
    known = ", ".join(r.schedule.id for r in analysis.results) or "none"
    which = f" named {wanted}" if wanted else ""
    why = f"; the diagnostics {where} say why" if analysis.diagnostics and (not wanted or named) else ""
    return f"no schedule with a case tree{which} in {path} (schedules: {known}){why}"


def host_scalars(text: str, file: str, results) -> set:
    """Integer scalar arguments of the functions holding the schedules: values the bench passes
    when it runs the function (beside the schedules' parameters: a step count T)."""
    names = set()
    for function in {r.schedule.function for r in results}:
        try:
            names |= {a.name for a in signature(text, file, function).arguments if not a.is_array}
        except SignatureError:
            pass
    return names


def unknown_name(given, results, file: str, host: set) -> str:
    """'' when every name given is a parameter of one of the schedules or a scalar argument of
    their function (`host`, host_scalars'), else the first that is not, with what the names may be."""
    names = {p.name for r in results for p in r.schedule.params}
    host = host - names
    for name in given:
        if name not in names | host:
            return (f"{name}: no schedule of {file} has that parameter (parameters: {', '.join(sorted(names))}"
                    + (f"; the function's other arguments: {', '.join(sorted(host))}" if host else "") + ")")
    return ""
