"""Code points (what the pipeline counts) <-> the client's position encoding.

The encoding is negotiated at initialize (UTF-16 by default, UTF-8 when the client
offers it, as Neovim >= 0.11 does); every TextDocument carries a `position_codec`
for it. Conversions go through that codec and the document's current lines, split at
LSP's line breaks only (the documents are textdocument.LspTextDocument).
"""
from __future__ import annotations

from lsprotocol import types

from parakern.lsp.ranges import Range
from parakern.source.text import line_content


def to_client_range(document, r: Range) -> types.Range:
    """A code-point Range (0-based) in the client's units, for `document`'s text."""
    lines = document.lines
    codec = document.position_codec
    return types.Range(start=_to_client(codec, lines, r[0], r[1]), end=_to_client(codec, lines, r[2], r[3]))


def _to_client(codec, lines, line: int, character: int) -> types.Position:
    if line < 0:
        return types.Position(line=0, character=0)
    if line >= len(lines):
        # Past the end (a range ending after the last newline): the end of the text.
        if not lines:
            return types.Position(line=0, character=0)
        last = len(lines) - 1
        text = lines[last]
        if line_content(text) != text:      # the text ends with a line break
            return types.Position(line=last + 1, character=0)
        return types.Position(line=last, character=codec.client_num_units(text))
    text = line_content(lines[line])
    character = max(character, 0)
    # Columns past the end of the line (a span just after the last character, as for
    # "expected ';'") stay past it, one unit each: LSP clients clamp them.
    extra = max(character - len(text), 0)
    return types.Position(line=line, character=codec.client_num_units(text[:character]) + extra)


def from_client_position(document, position: types.Position) -> tuple[int, int]:
    """(line, code-point column) of a client position (clamped to the text)."""
    lines = document.lines
    if not lines:
        return 0, 0
    line = min(max(position.line, 0), len(lines) - 1)
    text = line_content(lines[line])
    units = max(position.character, 0)
    codec = document.position_codec
    count = 0
    for index, char in enumerate(text):
        if count >= units:
            return line, index
        count += codec.impl.code_units_for_char(char)
    return line, len(text)


def from_client_range(document, r: types.Range) -> Range:
    a = from_client_position(document, r.start)
    b = from_client_position(document, r.end)
    return (a[0], a[1], b[0], b[1])


def line_text(document, line: int) -> str:
    lines = document.lines
    if 0 <= line < len(lines):
        return line_content(lines[line])
    return ""
