"""pygls' document and workspace with LSP's line breaks.

pygls splits a document with `str.splitlines`, which also breaks lines at form feed,
U+0085, U+2028…: one such character shifts every position below it (hover finds
nothing, an incremental edit lands a line off). Here lines end only at "\\n", "\\r\\n"
and "\\r" (parakern.source.text), edits are applied to offsets, and a document the editor
has not opened is never read from disk (a FIFO or /dev/zero would stall the server).
"""
from __future__ import annotations

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

from parakern.source.text import line_content, split_lines


class LspTextDocument(TextDocument):
    _lines_of: "tuple[str, tuple[str, ...]] | None" = None

    @property
    def source(self) -> str:
        return self._source or ""    # never the file on disk: only what the editor sent

    @property
    def lines(self) -> tuple[str, ...]:
        source = self.source
        cached = self._lines_of
        if cached is None or cached[0] is not source:
            cached = self._lines_of = (source, tuple(split_lines(source, keepends=True)))
        return cached[1]

    def offset_of(self, position: types.Position) -> int:
        """Offset of a client position; a column past the line's end is its end, a line
        past the last one the end of the text (what editors mean by them)."""
        lines = self.lines
        if position.line >= len(lines):
            return len(self.source)
        content = line_content(lines[position.line])
        units, index = 0, 0
        count = self.position_codec.impl.code_units_for_char
        while index < len(content) and units < position.character:
            units += count(content[index])
            index += 1
        return sum(len(line) for line in lines[:position.line]) + index

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        start, end = self.offset_of(change.range.start), self.offset_of(change.range.end)
        if end < start:
            start, end = end, start
        source = self.source
        self._source = source[:start] + change.text + source[end:]


class LspWorkspace(Workspace):
    """Creates LspTextDocuments; changes to documents that are not open are ignored."""

    @classmethod
    def like(cls, other: Workspace, sync_kind: types.TextDocumentSyncKind) -> "LspWorkspace":
        return cls(other.root_uri, sync_kind, list(other.folders.values()), other.position_encoding)

    def _create_text_document(self, doc_uri: str, source=None, version=None, language_id=None) -> TextDocument:
        return LspTextDocument(doc_uri, source=source, version=version, language_id=language_id,
                               sync_kind=self._sync_kind, position_codec=self.position_codec)

    def update_text_document(self, text_doc, change) -> None:
        if self.opened(text_doc.uri) is None:
            return
        super().update_text_document(text_doc, change)

    def opened(self, uri: str) -> "TextDocument | None":
        """The open document of `uri`, or None (never a document read from disk)."""
        from urllib.parse import unquote
        return self.text_documents.get(unquote(uri))

