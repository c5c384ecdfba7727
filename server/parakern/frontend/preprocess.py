"""Length-preserving rewrite of a MetaFork file into plain C for pycparser.

pycparser has no preprocessor and knows nothing of MetaFork. Every rewrite
here keeps each character at its line and column, so coordinates reported
by the parser are coordinates in the user's text:

  meta_for                 -> `for     `
  meta_schedule cache(a,b) -> `__pkms000000:` followed by spaces (a label)
  #include / #pragma       -> spaces
  #define NAME value       -> spaces; NAME is resolved later as a constant
  #define NAME type        -> spaces; a typedef goes into the prelude

The same scan yields the token list used to compute end positions.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from parakern.source.diagnostics import Diagnostic, Span, error
from parakern.source.ctext import in_string
from parakern.frontend.ctypes import STANDARD_TYPEDEFS

LABEL_PREFIX = "__pkms"
_LABEL_WIDTH = len("meta_schedule")  # 13 == len("__pkms000000:")

# Names that standard headers would declare as types.
_PRELUDE_TYPES = (
    "size_t", "ssize_t", "ptrdiff_t", "intptr_t", "uintptr_t",
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
    "FILE", "bool",
)
_TYPE_WORDS = frozenset({"int", "unsigned", "signed", "long", "short", "char", "float",
                         "double", "void", "const", "volatile"})
_PUNCT = re.compile(r"->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\.\.\.|[^\s\w]")
_NUMBER = re.compile(r"(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)[uUlLfF]*")
_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class Token:
    kind: str  # "id", "num", "str", "char", "punct"
    text: str
    line: int
    col: int
    offset: int

    @property
    def end_col(self) -> int:
        return self.col + len(self.text)


@dataclass(frozen=True)
class CacheName:
    name: str
    span: Span


@dataclass(frozen=True)
class ScheduleMark:
    label: str
    keyword_span: Span
    cache: tuple[CacheName, ...]
    clause_span: "Span | None"


@dataclass(frozen=True)
class Define:
    name: str
    value: str
    span: Span


@dataclass(frozen=True)
class Prepared:
    file: str
    text: str                       # rewritten text, same shape as the original
    prelude: str                    # typedefs, followed by a #line directive
    tokens: tuple[Token, ...]       # code tokens of the rewritten text
    meta_for: frozenset[tuple[int, int]]   # (line, col) of each meta_for keyword
    schedules: tuple[ScheduleMark, ...]
    defines: tuple[Define, ...]
    diagnostics: tuple[Diagnostic, ...] = field(default_factory=tuple)
    macros: tuple[str, ...] = ()    # names of the function-like macros #defined (refused: PK002)

    def schedule(self, label: str) -> ScheduleMark:
        return next(m for m in self.schedules if m.label == label)


class _Scanner:
    """One pass over the text: tokens, directives, and MetaFork keywords."""

    def __init__(self, text: str, file: str):
        self.src = text
        self.file = file
        self.out = list(text)
        self.tokens: list[Token] = []
        self.meta_for: set[tuple[int, int]] = set()
        self.schedules: list[ScheduleMark] = []
        self.defines: list[Define] = []
        self.typedefs: list[str] = []
        self.macros: list[str] = []
        self.diagnostics: list[Diagnostic] = []
        # Offsets of line starts, to turn an offset into (line, col).
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> tuple[int, int]:
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self.line_starts[lo] + 1

    def span(self, start: int, end: int) -> Span:
        line, col = self.position(start)
        end_line, end_col = self.position(end)
        return Span(self.file, line, col, end_line, end_col)

    def blank(self, start: int, end: int) -> None:
        for i in range(start, end):
            if self.out[i] != "\n":
                self.out[i] = " "

    def run(self) -> None:
        src, n, i = self.src, len(self.src), 0
        at_line_start = True
        while i < n:
            c = src[i]
            if c == "\n":
                at_line_start = True
                i += 1
                continue
            if c in " \t\r\f\v":
                i += 1
                continue
            if c == "\\" and src.startswith("\n", i + 1):
                i += 2
                continue
            if c == "#" and at_line_start:
                i = self.directive(i)
                continue
            at_line_start = False
            if src.startswith("//", i):
                end = src.find("\n", i)
                end = n if end < 0 else end
                self.blank(i, end)  # pycparser takes no comments
                i = end
                continue
            if src.startswith("/*", i):
                end = src.find("*/", i + 2)
                if end < 0:
                    self.diagnostics.append(error(
                        "PK001", "unterminated comment: this /* has no closing */",
                        self.span(i, i + 2)))
                end = n if end < 0 else end + 2
                self.blank(i, end)
                i = end
                continue
            if c in "\"'":
                i = self.quoted(i, c)
                continue
            m = _IDENT.match(src, i)
            if m:
                self.identifier(m.group(), i)
                i = m.end()
                continue
            m = _NUMBER.match(src, i)
            if m:
                self.add_token("num", m.group(), i)
                i = m.end()
                continue
            m = _PUNCT.match(src, i)
            if m is None:  # a non-ASCII letter or space: pycparser will report it
                if not c.isspace():
                    self.add_token("punct", c, i)
                i += 1
                continue
            self.add_token("punct", m.group(), i)
            i = m.end()

    def add_token(self, kind: str, text: str, offset: int) -> None:
        line, col = self.position(offset)
        self.tokens.append(Token(kind, text, line, col, offset))

    def quoted(self, i: int, quote: str) -> int:
        j = i + 1
        while j < len(self.src) and self.src[j] not in (quote, "\n"):
            j += 2 if self.src[j] == "\\" else 1
        end = min(j + 1, len(self.src))
        self.add_token("str" if quote == '"' else "char", self.src[i:end], i)
        return end

    def identifier(self, word: str, i: int) -> None:
        if word == "meta_for":
            self.out[i:i + 8] = list("for     ")
            line, col = self.position(i)
            self.meta_for.add((line, col))
            self.add_token("id", "for", i)
        elif word == "meta_schedule":
            self.schedule(i)
        else:
            self.add_token("id", word, i)

    def schedule(self, i: int) -> None:
        label = f"{LABEL_PREFIX}{len(self.schedules):06d}"
        self.out[i:i + _LABEL_WIDTH] = list(label + ":")
        self.add_token("id", label, i)
        self.add_token("punct", ":", i + _LABEL_WIDTH - 1)
        names, clause = self.cache_clause(i + _LABEL_WIDTH)
        self.schedules.append(ScheduleMark(label, self.span(i, i + _LABEL_WIDTH), names, clause))

    def skip_space(self, j: int) -> int:
        src = self.src
        while j < len(src):
            if src[j].isspace():
                j += 1
            elif src.startswith("//", j):
                end = src.find("\n", j)
                j = len(src) if end < 0 else end
            elif src.startswith("/*", j):
                end = src.find("*/", j + 2)
                j = len(src) if end < 0 else end + 2
            else:
                break
        return j

    def cache_clause(self, j: int) -> tuple[tuple[CacheName, ...], "Span | None"]:
        """Reads `cache(a, b)` after meta_schedule and blanks it."""
        src = self.src
        j = self.skip_space(j)
        if not src.startswith("cache", j) or _IDENT.match(src, j).group() != "cache":
            return (), None
        start = j
        k = self.skip_space(j + 5)
        if k >= len(src) or src[k] != "(":
            return (), None
        close = src.find(")", k)
        brace = min((p for p in (src.find("{", k), src.find(";", k)) if p >= 0), default=-1)
        if brace >= 0 and (close < 0 or brace < close):   # `cache(a {`: the body's own `)` is no end of it
            return self.unclosed_cache(start, k, brace)
        if close < 0:
            self.diagnostics.append(error(
                "PK005", "cache( is not closed: write cache(a, b) with the cached array names",
                self.span(start, min(len(src), k + 1))))
            self.blank(start, len(src))
            return (), None
        names: list[CacheName] = []
        body = src[k + 1:close]
        for part in re.finditer(r"[^,]+", body):
            text = part.group()
            stripped = text.strip()
            offset = k + 1 + part.start() + (len(text) - len(text.lstrip()))
            if not _IDENT.fullmatch(stripped):
                self.diagnostics.append(error(
                    "PK005", f"cache() takes array names separated by commas, not '{' '.join(stripped.split())}'",
                    self.span(offset, offset + max(1, len(stripped)))))
                continue
            names.append(CacheName(stripped, self.span(offset, offset + len(stripped))))
        if not body.strip():
            self.diagnostics.append(error(
                "PK005", "cache() is empty: name the arrays to stage in shared memory, or drop it",
                self.span(start, close + 1)))
        self.blank(start, close + 1)
        return tuple(names), self.span(start, close + 1)

    def unclosed_cache(self, start: int, k: int, stop: int) -> tuple[tuple[CacheName, ...], "Span | None"]:
        """`cache(a {`: one error, at `cache(a`, that says where its `)` is missing; the names
        read up to the block's `{` are kept (the schedule is analysed as cache(a) would be) and
        the block is left to the parser as written (no syntax error follows)."""
        end = k + 1 + len(self.src[k + 1:stop].rstrip())
        parts = list(re.finditer(r"[^,]+", self.src[k + 1:end]))
        names = [] if not all(_IDENT.fullmatch(p.group().strip()) for p in parts) else \
            [CacheName(m.group(), self.span(k + 1 + m.start(), k + 1 + m.end()))
             for m in _IDENT.finditer(self.src, k + 1, end)]
        shown = " ".join(self.src[start:end].split())
        self.diagnostics.append(error(
            "PK005", f"missing ')' after {shown}: write {shown})", self.span(start, end)))
        self.blank(start, end)
        return tuple(names), self.span(start, end)

    def directive(self, i: int) -> int:
        """Handles one preprocessor line (with continuations); returns the next offset."""
        src = self.src
        end = i
        while True:
            nl = src.find("\n", end)
            if nl < 0:
                end = len(src)
                break
            if nl > 0 and src[nl - 1] == "\\":
                end = nl + 1
                continue
            end = nl
            break
        text = src[i:end]
        self.blank(i, end)
        body = re.sub(r"\\\n", " ", text[1:]).strip()
        word = _IDENT.match(body)
        name = word.group() if word else ""
        span = self.span(i, i + len(text.split("\n")[0]))
        if name in ("include", "pragma") or not body:
            return end
        if name in ("else", "elif", "endif"):
            return end  # reported once, at the #if that opens the group
        if name == "define":
            self.define(body[len("define"):], span)
            return end
        self.diagnostics.append(error(
            "PK002",
            f"#{name or body.split()[0]} is not supported by parakern: it reads #include, "
            "#pragma and simple #define NAME value; resolve conditional code by hand",
            span))
        return end

    def define(self, rest: str, span: Span) -> None:
        m = re.match(r"\s*([A-Za-z_]\w*)(\(?)(.*)", rest, re.S)
        if not m:
            self.diagnostics.append(error("PK002", "#define needs a name", span))
            return
        name, paren, value = m.group(1), m.group(2), m.group(3).strip()
        if paren:
            self.macros.append(name)
            self.diagnostics.append(error(
                "PK002",
                f"function-like macro {name}(...) is not supported: write the expression "
                "out, or use a constant #define",
                span))
            return
        value = re.sub(r"/\*.*?\*/|//.*", " ", value).strip()
        if value and set(value.split()) <= _TYPE_WORDS:
            self.typedefs.append(f"typedef {value} {name};")
        else:
            self.defines.append(Define(name, value, span))


def prepare(text: str, file: str) -> Prepared:
    if text.startswith("\ufeff"):   # a UTF-8 byte order mark, which gcc skips: a space keeps the columns
        text = " " + text[1:]
    scanner = _Scanner(_code_lines_spliced(text), file)
    scanner.run()
    # the standard headers' types as they are (an int64_t array read as int was silently wrong)
    typedefs = [f"typedef {STANDARD_TYPEDEFS.get(t, 'int')} {t};" for t in _PRELUDE_TYPES] + scanner.typedefs
    prelude = "\n".join(typedefs) + f'\n#line 1 "{line_file(file)}"\n'
    return Prepared(
        file=file,
        text="".join(scanner.out),
        prelude=prelude,
        tokens=tuple(scanner.tokens),
        meta_for=frozenset(scanner.meta_for),
        schedules=tuple(scanner.schedules),
        defines=tuple(scanner.defines),
        macros=tuple(scanner.macros),
        diagnostics=tuple(scanner.diagnostics),
    )


def _code_lines_spliced(text: str) -> str:
    """A backslash that ends a line of code (not of a directive, whose continuations the scanner
    reads) becomes a space: C joins the two lines (`int g = (n + B - 1) \\` then `/ B;`), which
    pycparser refused as an illegal character. Lines and columns stay where they are; a token
    split across the two lines is not joined."""
    lines = text.split("\n")
    directive = False   # the logical line under way is a directive
    for k, line in enumerate(lines):
        if not directive:
            directive = line.lstrip().startswith("#")
        continued = line.endswith("\\")
        if continued and not directive and "//" not in line:   # a // comment's splice continues the comment
            lines[k] = line[:-1] + " "
        if not continued:
            directive = False
    return "\n".join(lines)


def line_file(file: str) -> str:
    """The file's name as the prelude's #line gives it, and pycparser's coordinates carry it
    (escaped: pycparser keeps the literal's text as it is)."""
    return in_string(file)
