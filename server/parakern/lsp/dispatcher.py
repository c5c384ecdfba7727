"""Pure: the edit that inserts (or replaces) the comprehensive dispatcher of one schedule.

The generated code sits between `// parakern:begin <id>` and `// parakern:end <id>`
lines right after the enclosing function. Applying the edit again replaces that
region only, so the result does not change and the rest of the text is untouched.
The code itself comes from a function (`parakern.codegen.emit_schedule`), passed in.
"""
from __future__ import annotations

from parakern.frontend.generated import BEGIN_MARK, END_MARK, generated_regions
from parakern.lsp.ranges import Range


def region_text(schedule_id: str, code: str, newline: str = "\n") -> str:
    body = code.replace("\r\n", "\n").rstrip("\n")
    lines = [f"{BEGIN_MARK} {schedule_id}"] + (body.split("\n") if body else []) + [f"{END_MARK} {schedule_id}"]
    return newline.join(lines) + newline


def _position(text: str, offset: int) -> tuple[int, int]:
    """(0-based line, code-point column) of an offset; lines split at "\\n"."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return line, offset - start


def dispatcher_edit(text: str, schedule_id: str, function_end_line: int, code: str
                    ) -> tuple[Range, str]:
    """(range in code points, new text) of the edit for `schedule_id`.

    `function_end_line` is the 0-based line holding the closing brace of the enclosing
    function (Schedule.function_span end)."""
    newline = "\r\n" if "\r\n" in text else "\n"
    region = region_text(schedule_id, code, newline)
    existing = generated_regions(text, schedule_id)
    if existing:
        start, stop = existing[0]
        if not text[:stop].endswith("\n"):
            region = region[:-len(newline)]   # the old region ended the file without a newline
        (l0, c0), (l1, c1) = _position(text, start), _position(text, stop)
        return (l0, c0, l1, c1), region
    lines = text.split("\n")
    last = min(max(function_end_line, 0), len(lines) - 1)
    if last + 1 < len(lines):
        # After the function's last line: a blank line, then the region.
        return (last + 1, 0, last + 1, 0), newline + region
    # The function ends the file with no newline after it.
    end = len(lines[last])
    return (last, end, last, end), newline + newline + region[:-len(newline)]


def apply_edit(text: str, rng: Range, new_text: str) -> str:
    """Applies one code-point edit to a text (used by tests and by the command path)."""
    lines = text.split("\n")

    def offset(line: int, character: int) -> int:
        if line >= len(lines):
            return len(text)
        return sum(len(l) + 1 for l in lines[:line]) + min(character, len(lines[line]))

    start, stop = offset(rng[0], rng[1]), offset(rng[2], rng[3])
    return text[:start] + new_text + text[stop:]
