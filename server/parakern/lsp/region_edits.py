"""Pure: the edits of generated regions: inserting (or replacing) the comprehensive
dispatcher of one schedule, and the quick fixes of a region that lost a marker.

The generated code sits between `// parakern:begin <id>` and `// parakern:end <id>`
lines after the enclosing function, written with the document's own line breaks.
Applying the edit again replaces that region only (a damaged one too: never a second
copy), so the result does not change and the rest of the text is untouched. A new
region goes at the start of the first line after the function that begins in code,
never inside a comment or literal that goes on after the closing brace. The code
itself comes from a function (`parakern.codegen.emit_schedule`), passed in.
Offsets and ranges count code points, lines end at LSP's line breaks (parakern.source.text).
"""
from __future__ import annotations

from parakern.frontend.generated import BEGIN_MARK, END_MARK, REGION_GUARD, Region, damaged_regions, generated_regions
from parakern.frontend.lexical import next_code_line
from parakern.lsp.ranges import Range, overlaps
from parakern.source.text import line_starts, newline_of, normalize_newlines, offset_at, position_at


def region_text(schedule_id: str, code: str, newline: str = "\n", source: str = "") -> str:
    """The region; `source`: the fingerprint of the function it is generated from (PK041)."""
    body = normalize_newlines(code).rstrip("\n")
    inner = [REGION_GUARD[0]] + body.split("\n") + [REGION_GUARD[1]] if body else []
    lines = [f"{BEGIN_MARK} {schedule_id}" + (f" from={source}" if source else "")] + inner + \
        [f"{END_MARK} {schedule_id}"]
    return newline.join(lines) + newline


def _range(text: str, start: int, stop: int, starts: "list[int] | None" = None) -> Range:
    starts = starts if starts is not None else line_starts(text)
    return position_at(text, start, starts) + position_at(text, stop, starts)


def _ends_line(text: str) -> bool:
    return text.endswith(("\n", "\r"))


def dispatcher_edit(text: str, schedule_id: str, function_end: tuple[int, int], code: str,
                    source: str = "") -> tuple[Range, str]:
    """(range in code points, new text) of the edit for `schedule_id`; `function_end` is the
    0-based (line, column) just after the enclosing function's closing brace; the begin
    marker records `source` (frontend.generated.region_fingerprint, PK041)."""
    newline = newline_of(text)
    region = region_text(schedule_id, code, newline, source)
    existing = generated_regions(text, schedule_id)
    if existing:
        found = existing[0]
        if found.stop == len(text) and not _ends_line(text):
            region = region[:-len(newline)]   # the old region ended the file without a line break
        return _range(text, found.start, found.stop), region
    starts = line_starts(text)
    brace = offset_at(text, *function_end, starts)
    at = next_code_line(text, brace)
    if at is None:
        # The rest of the file is a comment opened after the brace: the region goes between.
        return _range(text, brace, brace, starts), newline + region
    if at == len(text) and not _ends_line(text):
        # The function ends the file with no line break after it.
        return _range(text, at, at, starts), newline + newline + region[:-len(newline)]
    return _range(text, at, at, starts), newline + region


def region_fixes(text: str, region: Region) -> list[tuple[str, Range, str]]:
    """(title, range, new text) of the quick fixes of a damaged region: restore the lost
    marker, delete the region (or the lone marker)."""
    newline = newline_of(text)
    fixes = []
    if region.missing == "end":
        marker = f"{END_MARK} {region.id}"
        at, new = region.stop, marker + newline
        if at == len(text) and not _ends_line(text):
            new = newline + marker
        fixes.append((f"Restore '{marker}' (repair the generated region)", _range(text, at, at), new))
    elif region.missing == "begin":
        marker = f"{BEGIN_MARK} {region.id}"
        fixes.append((f"Restore '{marker}' (repair the generated region)",
                      _range(text, region.start, region.start), marker + newline))
    if region.missing == "code":
        fixes.append(("Delete this parakern marker line", _range(text, region.start, region.stop), ""))
    else:
        fixes.append((f"Delete the generated region of {region.id}", _range(text, region.start, region.stop), ""))
    return fixes


def damaged_region_fixes(text: str, wanted: Range) -> list[tuple[str, Range, str]]:
    """The quick fixes of the damaged regions whose remaining marker meets `wanted`."""
    fixes = []
    for region in damaged_regions(text):
        if overlaps(_range(text, *region.marker), wanted):
            fixes += region_fixes(text, region)
    return fixes


def regions_marked_at(text: str, wanted: Range) -> set:
    """The ids of the intact regions whose begin marker meets `wanted` (where PK041 is shown:
    the insert action is offered there too, as on the schedule)."""
    return {r.id for r in generated_regions(text) if not r.damaged and overlaps(_range(text, *r.begin), wanted)}


def apply_edit(text: str, rng: Range, new_text: str) -> str:
    """Applies one code-point edit to a text (used by tests and by the command path)."""
    starts = line_starts(text)
    start, stop = offset_at(text, rng[0], rng[1], starts), offset_at(text, rng[2], rng[3], starts)
    return text[:start] + new_text + text[stop:]
