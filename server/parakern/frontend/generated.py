"""Regions a user inserted with "Insert comprehensive dispatcher": generated CUDA
between `// parakern:begin ID` and `// parakern:end ID` lines. The front-end blanks
them (same length, line breaks kept) so a file keeps analysing after the insertion,
from the editor and from the command line alike, with every position unchanged.

A region that lost one of its markers (deleted by hand) is still recognised, by its
id and its content: the generated code of schedule `f:i` starts with the contract
preamble (`#ifndef PARAKERN_CPU`) and ends with the definition of `f_i_dispatch` (or
of `f_i_dispatch_auto`, which follows it where the schedule has a time model), inside
REGION_GUARD's two lines where they are there.
It is blanked like the others and reported once (PK019), so the generated CUDA never
reaches the C front-end and the next insertion replaces it instead of adding a copy.
A lone marker whose region cannot be recognised is blanked alone (it is a comment).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from parakern.frontend.lexical import matching_brace
from parakern.source.text import LINE_BREAK, line_starts, offset_at
from parakern.frontend.lexical import file_scope_code

BEGIN_MARK = "// parakern:begin"
END_MARK = "// parakern:end"
FIRST_LINE = "#ifndef PARAKERN_CPU"     # the first line of the generated code (codegen.emit.PREAMBLE)
# Around the code in the region: a C compiler skips it, so that the file still builds as the
# serial C it was (gcc refused <cuda_runtime.h> and __global__); nvcc and the CPU emulation read it.
REGION_GUARD = ("#if defined(__CUDACC__) || defined(PARAKERN_CPU)", "#endif")

# A marker line: begin or end, the schedule's id, and anything after it (a begin marker's
# `from=` and 12 hex digits; a value edited by hand leaves the line a marker, with no fingerprint)
_MARKER = re.compile(r"[ \t]*// parakern:(begin|end)[ \t]+(\S+)(?:[ \t]+(\S.*?))?[ \t]*")
_SOURCE = re.compile(r"from=([0-9a-f]{12})")


def fingerprint(function_text: str, file_scope: str = "") -> str:
    """What the begin marker says the region was generated from (`from=` and 12 hex digits): the
    enclosing function's text and the code at file scope (a `#define` or a global the schedule
    reads), white space left out (re-indenting, `a*b` for `a * b`: no change). An edit of either
    since makes the region stale (PK041)."""
    code = "".join(function_text.split()) + "\0" + "".join(file_scope.split())
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def region_fingerprint(text: str, function_range: tuple) -> str:
    """fingerprint of the function at a 0-based range of `text` (the text the front end reads:
    "\n" line ends; its generated regions are left out)."""
    masked = mask_generated(text)
    return fingerprint(function_text(masked, function_range), file_scope_code(masked))


def function_text(text: str, function_range: tuple) -> str:
    """The text of a 0-based (line, column, end line, end column) range of `text`."""
    starts = line_starts(text)
    return text[offset_at(text, *function_range[:2], starts):offset_at(text, *function_range[2:], starts)]


@dataclass(frozen=True)
class Region:
    id: str
    start: int          # offset of the begin line (of the first generated line when that marker is lost)
    stop: int           # offset after the end line, its line break included when there is one
    missing: str = ""   # "" intact; "begin" / "end": the marker that was lost; "code": only a marker is left
    marker: tuple = (0, 0)   # (start, end) offsets of the marker line that is left (damaged regions)
    source: str = ""    # the begin marker's fingerprint of the function it was generated from ('' none)
    begin: tuple = (0, 0)    # (start, end) offsets of the begin marker's content (intact regions)

    @property
    def damaged(self) -> bool:
        return bool(self.missing)


def mask_generated(text: str) -> str:
    """The text with every region blanked (same length, line breaks kept), so the
    inserted CUDA never reaches the C front-end and every position stays where it was."""
    return mask_regions(text, generated_regions(text))


def mask_regions(text: str, regions: "list[Region]") -> str:
    out, pos = [], 0
    for region in regions:
        out.append(text[pos:region.start])
        out.append(re.sub(r"[^\r\n]", " ", text[region.start:region.stop]))
        pos = region.stop
    out.append(text[pos:])
    return "".join(out)


def damaged_regions(text: str) -> list[Region]:
    return [r for r in generated_regions(text) if r.damaged]


def generated_regions(text: str, wanted: "str | None" = None) -> list[Region]:
    """The regions of `text` in order (those of schedule `wanted` only, when given)."""
    if "// parakern:" not in text:
        return []
    lines = _lines(text)
    found = [(k, m) for k, (a, b, _) in enumerate(lines) if (m := _MARKER.fullmatch(text, a, b))]
    markers = [(k, m.group(1), m.group(2)) for k, m in found]
    sources = {k: (_SOURCE.fullmatch(m.group(3) or "") or [None, ""])[1] for k, m in found}
    regions: list[Region] = []
    used: set[int] = set()
    for n, (k, kind, ident) in enumerate(markers):
        if kind != "begin" or k in used:
            continue
        end = next((j for j, kd, i in markers[n + 1:] if kd == "end" and i == ident and j not in used), None)
        between = [j for j, _, _ in markers[n + 1:] if end is None or j < end]
        if end is not None and not any(kd == "begin" for j, kd, _ in markers[n + 1:] if j < end):
            used.update((k, end))
            regions.append(Region(ident, lines[k][0], lines[end][2], source=sources[k], begin=lines[k][:2]))
            continue
        # The end marker is lost: the region ends with the dispatcher's definition.
        limit = lines[between[0]][0] if between else len(text)
        stop = _dispatcher_end(text, ident, lines[k][2], limit, lines)
        used.add(k)
        if stop is None:
            regions.append(Region(ident, lines[k][0], lines[k][2], "code", lines[k][:2]))
        else:
            regions.append(Region(ident, lines[k][0], stop, "end", lines[k][:2]))
    for n, (k, kind, ident) in enumerate(markers):
        if kind != "end" or k in used:
            continue
        # The begin marker is lost: the region starts at the generated code's first line.
        floor = max([r.stop for r in regions if r.stop <= lines[k][0]] +
                    [lines[j][2] for j, _, _ in markers[:n]], default=0)
        start = _first_line(text, floor, lines[k][0], lines)
        if start is None or _dispatcher_end(text, ident, start, lines[k][0], lines) is None:
            regions.append(Region(ident, lines[k][0], lines[k][2], "code", lines[k][:2]))
        else:
            regions.append(Region(ident, start, lines[k][2], "begin", lines[k][:2]))
    regions.sort(key=lambda r: r.start)
    kept: list[Region] = []
    for region in regions:       # a recognised region that swallows a marker keeps it
        if kept and region.start < kept[-1].stop:
            continue
        kept.append(region)
    return [r for r in kept if wanted is None or r.id == wanted]


def _lines(text: str) -> list[tuple[int, int, int]]:
    """(start, end of content, end with the line break) of every line."""
    out, pos = [], 0
    for m in LINE_BREAK.finditer(text):
        out.append((pos, m.start(), m.end()))
        pos = m.end()
    out.append((pos, len(text), len(text)))
    return out


def dispatcher_of(ident: str) -> str:
    """The dispatcher's name of schedule `ident` ("f:0" -> "f_0_dispatch"), as
    parakern.codegen.tree_dispatcher.dispatcher_name makes it from the schedule."""
    function, _, index = ident.rpartition(":")
    return f"{function}_{index}_dispatch"


def _dispatcher_end(text: str, ident: str, start: int, limit: int, lines) -> "int | None":
    """The end (line break included) of the line closing the definition of the schedule's
    dispatcher, searched in text[start:limit]; None when it is not there."""
    definition = re.compile(r"(?:\A|(?<=[\r\n]))int[ \t]+" + re.escape(dispatcher_of(ident)) + r"\([^;{]*\)\s*\{")
    m = definition.search(text, start, limit)
    if m is None:
        return None
    close = matching_brace(text, m.end() - 1)
    if close is None or close >= limit:
        return None
    # dispatch_auto (the time model's choice) follows the dispatcher when the schedule has one
    auto = re.compile(r"(?:(?<=[\r\n]))[A-Za-z_]\w*[ \t]+" + re.escape(dispatcher_of(ident)) + r"_auto\([^;{]*\)\s*\{")
    a = auto.search(text, close, limit)
    if a is not None:
        auto_close = matching_brace(text, a.end() - 1)
        if auto_close is not None and auto_close < limit:
            close = auto_close
    k = next(k for k, (a, _, end) in enumerate(lines) if a <= close < end or (a == close == end))
    guarded = k + 1 < len(lines) and lines[k + 1][2] <= limit and \
        text[lines[k + 1][0]:lines[k + 1][1]].strip() == REGION_GUARD[1]
    return lines[k + 1][2] if guarded else lines[k][2]   # and the guard's #endif after it


def _first_line(text: str, floor: int, before: int, lines) -> "int | None":
    """The start of the last generated first line (FIRST_LINE, or the guard just above it) in
    text[floor:before]."""
    found = None
    for k, (a, b, _) in enumerate(lines):
        if a >= before:
            break
        if a >= floor and text[a:b].strip() == FIRST_LINE:
            above = lines[k - 1] if k else None
            guarded = above is not None and above[0] >= floor and text[above[0]:above[1]].strip() == REGION_GUARD[0]
            found = above[0] if guarded else a
    return found
