"""Ranges as the language server keeps them: 0-based `(line, character, end_line,
end_character)` tuples in Unicode code points (what the front-end counts); the
server converts them to the client's position encoding (positions.py).

Ranges inside a summary are *relative to the first line of the enclosing function*,
so that a summary stays valid when lines above the function are edited (the engine
shifts them back).
"""
from __future__ import annotations

Range = tuple[int, int, int, int]


def span_range(span, origin: int = 0) -> Range:
    """A diagnostics.Span (1-based, code points, end exclusive) as a 0-based Range,
    lines relative to `origin` (0-based)."""
    return (span.line - 1 - origin, span.col - 1, span.end_line - 1 - origin, span.end_col - 1)


def shifted(r: Range, delta: int) -> Range:
    """`r` moved down by `delta` lines."""
    return (r[0] + delta, r[1], r[2] + delta, r[3])


def contains(r: Range, line: int, character: int) -> bool:
    return (r[0], r[1]) <= (line, character) <= (r[2], r[3])


def overlaps(a: Range, b: Range) -> bool:
    return (a[0], a[1]) <= (b[2], b[3]) and (b[0], b[1]) <= (a[2], a[3])
