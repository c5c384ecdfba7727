"""Line breaks and the characters an editor may send.

Lines end at "\\n", "\\r\\n" or a lone "\\r": that is C's rule and LSP's, and the only
one used here. `str.splitlines` also splits at form feed, U+0085, U+2028 and others,
which would shift every position below such a character: never use it on source text.
Every stage reads source text with "\\n" line ends (`normalize_newlines`).
"""
from __future__ import annotations

import re
from bisect import bisect_right

LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR as LF (the front-end's columns and spans count on it)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """The lines of `text` as LSP counts them; with `keepends`, each keeps its line break
    and a text ending with a line break has no empty last line (like str.splitlines(True))."""
    if "\r" not in text:
        parts = text.split("\n")
    else:
        parts = LINE_BREAK.split(text)
    if not keepends:
        return parts
    ends = [m.group() for m in LINE_BREAK.finditer(text)] if "\r" in text else ["\n"] * (len(parts) - 1)
    lines = [part + end for part, end in zip(parts, ends)]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def line_starts(text: str) -> list[int]:
    """Offset of the first character of every line."""
    return [0] + [m.end() for m in LINE_BREAK.finditer(text)]


def line_content(line: str) -> str:
    """A line of `split_lines(..., keepends=True)` without its line break."""
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith(("\n", "\r")):
        return line[:-1]
    return line


def offset_at(text: str, line: int, character: int, starts: "list[int] | None" = None) -> int:
    """Offset of a 0-based (line, code-point column); a column past the line's end is its
    end, a line past the last line the end of the text."""
    starts = starts if starts is not None else line_starts(text)
    if line < 0:
        return 0
    if line >= len(starts):
        return len(text)
    begin = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    content_end = begin + len(line_content(text[begin:end]))
    return min(begin + max(character, 0), content_end)


def position_at(text: str, offset: int, starts: "list[int] | None" = None) -> tuple[int, int]:
    """0-based (line, code-point column) of an offset."""
    starts = starts if starts is not None else line_starts(text)
    line = bisect_right(starts, offset) - 1
    return line, offset - starts[line]


def newline_of(text: str) -> str:
    """The line break a text uses (its first one; "\\n" when it has none)."""
    m = LINE_BREAK.search(text)
    return m.group() if m else "\n"


def without_lone_surrogates(text: str) -> str:
    """Lone surrogates (an editor may send "\\udfff") as U+FFFD: the same number of code
    points and of UTF-16 and UTF-8 units, so every position stays, and the text can be
    encoded, hashed and written to files."""
    return _LONE_SURROGATE.sub("\ufffd", text)
