"""pycparser with exact error positions and recovery across top-level definitions."""
from __future__ import annotations

import re

from pycparser import c_ast, c_parser

from parakern.diagnostics import Diagnostic, Span, error
from parakern.frontend.preprocess import LABEL_PREFIX, Prepared

_MAX_RECOVERIES = 8


class _PositionedError(Exception):
    def __init__(self, message: str, line: "int | None", col: "int | None"):
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


class _Parser(c_parser.CParser):
    """Reports errors with the position of the token where parsing stopped."""

    def _parse_error(self, msg, coord):
        line = getattr(coord, "line", None)
        col = getattr(coord, "column", None)
        if line is None:
            try:
                tok = self._peek()
            except Exception:  # the lexer itself may be what failed
                tok = None
            if tok is not None:
                line, col = tok.lineno, tok.column
        raise _PositionedError(str(msg), line, col)

    def _lex_error_func(self, msg, line, column):
        raise _PositionedError(str(msg), line, column)


def parse(prepared: Prepared) -> tuple["c_ast.FileAST | None", list[Diagnostic]]:
    """Parses the rewritten text; on a syntax error, reports it, blanks the
    top-level definition that contains it and tries again, so one broken
    function does not hide the schedules of the others."""
    text = prepared.text
    diagnostics: list[Diagnostic] = []
    for _ in range(_MAX_RECOVERIES):
        try:
            return _Parser().parse(prepared.prelude + text, filename=prepared.file), diagnostics
        except _PositionedError as exc:
            diag = _syntax_diagnostic(exc, prepared, text)
        except RecursionError:
            diag = error("PK001", "expression nested too deeply to analyse",
                         Span.point(prepared.file, 1, 1))
        except Exception as exc:  # pycparser raises assorted errors on odd input
            diag = error("PK001", f"cannot parse this file: {exc}", Span.point(prepared.file, 1, 1))
        diagnostics.append(diag)
        blanked = _blank_definition(text, diag.span.line)
        if blanked == text:
            return None, diagnostics
        text = blanked
    return None, diagnostics


def _syntax_diagnostic(exc: _PositionedError, prepared: Prepared, text: str) -> Diagnostic:
    lines = text.split("\n")
    line = exc.line if exc.line and exc.line >= 1 else len(lines)
    line = min(line, len(lines))
    source_line = lines[line - 1]
    col = exc.col if exc.col and exc.col >= 1 else len(source_line) + 1
    message = exc.message
    word = re.match(r"[\w]+|\S", source_line[col - 1:]) if col <= len(source_line) else None
    length = len(word.group()) if word else 1
    if source_line[col - 1:].startswith(LABEL_PREFIX) or (":" == source_line[col - 1:col] and
                                                         LABEL_PREFIX in source_line[:col]):
        message = "meta_schedule must be followed by a statement (usually a { block }) inside a function"
    elif message == "before: }" and _missing_semicolon(prepared, line, col):
        prev = _missing_semicolon(prepared, line, col)
        return error("PK001", f"expected ';' after '{prev.text}'",
                     Span.point(prepared.file, prev.line, prev.end_col, 1))
    elif message.startswith("before: "):
        message = f"syntax error before '{message[len('before: '):]}'"
    elif message == "Invalid expression":
        shown = source_line[col - 1:col - 1 + length] if col <= len(source_line) else ""
        message = f"syntax error: expected an expression before '{shown}'" if shown else \
            "syntax error: expected an expression"
    elif message == "At end of input":
        message = "unexpected end of file (a '}' or ';' may be missing)"
    else:
        message = f"syntax error: {message}"
    return error("PK001", message, Span.point(prepared.file, line, col, length))


def _missing_semicolon(prepared: Prepared, line: int, col: int):
    """The token a `;` is missing after, when a `}` arrives where a statement ends."""
    previous = None
    for tok in prepared.tokens:
        if (tok.line, tok.col) >= (line, col):
            break
        previous = tok
    if previous is None or previous.text in (";", "{", "}", ":"):
        return None
    return previous


def _blank_definition(text: str, line: int) -> str:
    """Blanks the top-level chunk (between depth-0 `}` or `;`) around `line`."""
    starts = _top_level_chunks(text)
    offset = _offset_of_line(text, line)
    for begin, end in starts:
        if begin <= offset < end or (offset >= end and (begin, end) == starts[-1]):
            if not text[begin:end].strip():
                return text
            return text[:begin] + re.sub(r"[^\n]", " ", text[begin:end]) + text[end:]
    return text


def _offset_of_line(text: str, line: int) -> int:
    offset = 0
    for _ in range(line - 1):
        nxt = text.find("\n", offset)
        if nxt < 0:
            return len(text)
        offset = nxt + 1
    return offset


def _top_level_chunks(text: str) -> list[tuple[int, int]]:
    """Spans of top-level declarations and definitions, split at depth 0 by `;` and `}`."""
    chunks, depth, begin = [], 0, 0
    for i, c in enumerate(text):
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                chunks.append((begin, i + 1))
                begin = i + 1
        elif c == ";" and depth == 0:
            chunks.append((begin, i + 1))
            begin = i + 1
    chunks.append((begin, len(text)))
    return chunks
