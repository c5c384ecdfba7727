"""pycparser with exact error positions and recovery across top-level definitions."""
from __future__ import annotations

import re

from pycparser import c_ast, c_parser

from parakern.source.diagnostics import Diagnostic, Span, error
from parakern.frontend.preprocess import LABEL_PREFIX, Prepared

_MAX_ROUNDS = 10_000      # a guard only: every round blanks at least one more definition


class _PositionedError(Exception):
    def __init__(self, message: str, line: "int | None", col: "int | None"):
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


class _Parser(c_parser.CParser):
    """Reports errors with the position of the token where parsing stopped, and keeps
    the function definitions it completed before an error (with the offsets of their
    first and last characters), so that a retry need not parse them again."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.completed: list[tuple[c_ast.FuncDef, tuple[int, int], tuple[int, int]]] = []

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

    def _parse_translation_unit(self):
        ext = []
        while self._peek() is not None:
            first = self._peek()
            found = self._parse_external_declaration()
            ext.extend(found)
            last = self._tokens._buffer[self._tokens._index - 1]
            for node in found:
                if isinstance(node, c_ast.FuncDef) and first.filename == last.filename:
                    self.completed.append((node, (first.lineno, first.column),
                                           (last.lineno, last.column + len(last.value))))
        return ext

    def where(self) -> tuple["int | None", "int | None"]:
        """(line, column) of the token the parser was at (after a RecursionError)."""
        try:
            tokens = self._tokens
            tok = tokens._buffer[min(tokens._index, len(tokens._buffer) - 1)]
            return tok.lineno, tok.column
        except Exception:
            return None, None


def parse(prepared: Prepared) -> tuple["c_ast.FileAST | None", list[Diagnostic]]:
    """Parses the rewritten text. On a syntax error: reports it, blanks the top-level
    definition that contains it and the functions parsed before it (kept), and parses
    again, so broken (or too deeply nested) functions, however many, do not hide the
    schedules of the others; each round parses only what is left."""
    text = prepared.text
    diagnostics: list[Diagnostic] = []
    kept: list[c_ast.FuncDef] = []
    for _ in range(_MAX_ROUNDS):
        parser = _Parser()
        try:
            ast = parser.parse(prepared.prelude + text, filename=prepared.file)
            ast.ext = _in_order(kept + list(ast.ext))
            return ast, diagnostics
        except _PositionedError as exc:
            diag = _syntax_diagnostic(exc, prepared, text)
        except RecursionError:
            line, col = parser.where()
            diag = _too_deep(prepared, text, line, col)
        except Exception as exc:  # pycparser raises assorted errors on odd input
            diag = error("PK001", f"cannot parse this file: {exc}", _point(prepared, text, *parser.where()))
        diagnostics.append(diag)
        for node, (line, col), (end_line, end_col) in parser.completed:
            kept.append(node)
            text = _blanked(text, _offset_of(text, line, col), _offset_of(text, end_line, end_col))
        blanked = _blank_definition(text, diag.span.line)
        if blanked == text and not parser.completed:
            break
        text = blanked
    if not kept:
        return None, diagnostics
    return c_ast.FileAST(_in_order(kept)), diagnostics


def _in_order(nodes: list) -> list:
    """Top-level nodes in source order (kept functions came from earlier rounds)."""
    def where(node):
        coord = getattr(node, "coord", None)
        return (coord.line, coord.column or 0) if coord is not None and coord.line else (0, 0)
    return sorted(nodes, key=where)


def _too_deep(prepared: Prepared, text: str, line, col) -> Diagnostic:
    return error("PK001", "expressions or statements nested too deeply to parse here "
                 "(parentheses, blocks or operators hundreds of levels deep); split them",
                 _point(prepared, text, line, col))


def _point(prepared: Prepared, text: str, line, col) -> Span:
    lines = text.split("\n")
    if not line or line < 1 or line > len(lines):
        return Span.point(prepared.file, 1, 1)
    return Span.point(prepared.file, line, max(col or 1, 1))


def _offset_of(text: str, line: int, col: int) -> int:
    return _offset_of_line(text, line) + max(col - 1, 0)


def _blanked(text: str, begin: int, end: int) -> str:
    return text[:begin] + re.sub(r"[^\n]", " ", text[begin:end]) + text[end:]


def _syntax_diagnostic(exc: _PositionedError, prepared: Prepared, text: str) -> Diagnostic:
    lines = text.split("\n")
    line = exc.line if exc.line and exc.line >= 1 else len(lines)
    line = min(line, len(lines))
    source_line = lines[line - 1]
    col = exc.col if exc.col and exc.col >= 1 else len(source_line) + 1
    message = exc.message
    word = re.match(r"[\w]+|\S", source_line[col - 1:]) if col <= len(source_line) else None
    length = len(word.group()) if word else 1
    missing = message.startswith("before: ") and _missing_semicolon(prepared, line, col, message == "before: }")
    if missing:   # also where the next line is a meta_schedule (`assert(n % B == 0)` above it)
        return error("PK001", f"expected ';' after '{missing.text}'",
                     Span.point(prepared.file, missing.line, missing.end_col, 1))
    if source_line[col - 1:].startswith(LABEL_PREFIX) or (":" == source_line[col - 1:col] and
                                                         LABEL_PREFIX in source_line[:col]):
        message = "meta_schedule must be followed by a statement (usually a { block }) inside a function"
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


def _ends_statement(token: str) -> bool:
    """Whether a statement can end with this token: a name, a number, a literal, `)`, `]`,
    `++` or `--` (not a keyword: `else` or `int` at the end of a line are not missing a `;`)."""
    if token in ("++", "--") or token[-1:] in (")", "]"):
        return True
    return bool(re.match(r"""[\w.'"]""", token)) and token not in _C_KEYWORDS


_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if inline "
    "int long register restrict return short signed sizeof static struct switch typedef union "
    "unsigned void volatile while".split())


def _missing_semicolon(prepared: Prepared, line: int, col: int, closing: bool):
    """The token a `;` is missing after: a `}` arrives where a statement ends (`closing`), or
    the unexpected token begins a line and the line above ends as a statement can
    (`int p = i * B + v` and then `int q = ...`)."""
    before = [tok for tok in prepared.tokens if (tok.line, tok.col) < (line, col)]
    previous = before[-1] if before else None
    if previous is None or previous.text in (";", "{", "}", ":"):
        return None
    if not closing and (previous.line >= line or not _ends_statement(previous.text)
                        or _closes_condition(before)):
        return None
    return previous


def _closes_condition(tokens: list) -> bool:
    """Whether the last token closes the head of an if, for, while or switch (`if (c)` then a
    declaration on the next line is not a missing `;`)."""
    if tokens[-1].text != ")":
        return False
    depth = 0
    for k in range(len(tokens) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(tokens[k].text, 0)
        if depth == 0:
            return k > 0 and tokens[k - 1].text in ("if", "for", "while", "switch")
    return False


def _blank_definition(text: str, line: int) -> str:
    """Blanks the top-level chunk (between depth-0 `}` or `;`) around `line`."""
    starts = _top_level_chunks(text)
    offset = _offset_of_line(text, line)
    for begin, end in starts:
        if begin <= offset < end or (offset >= end and (begin, end) == starts[-1]):
            if not text[begin:end].strip():
                return text
            return _blanked(text, begin, end)
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
