"""Source spans and diagnostics shared by every stage.

Positions are 1-based lines and 1-based columns counted in Unicode code
points; the end column is exclusive. `Span.to_lsp()` gives the 0-based LSP
form (code points; the language server converts to UTF-16 where needed).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


@dataclass(frozen=True, order=True)
class Span:
    file: str
    line: int
    col: int
    end_line: int
    end_col: int
    # Which copy of this source text (thread coarsening's rows, strategies/coarsen.py): the
    # copies of one array reference are distinct accesses, found by (array, span) like any other.
    copy: int = 0

    @staticmethod
    def point(file: str, line: int, col: int, length: int = 1) -> "Span":
        return Span(file, line, col, line, col + max(length, 0))

    def to(self, other: "Span") -> "Span":
        """The span from the start of self to the end of other."""
        return Span(self.file, self.line, self.col, other.end_line, other.end_col)

    def to_lsp(self) -> dict:
        return {
            "start": {"line": self.line - 1, "character": self.col - 1},
            "end": {"line": self.end_line - 1, "character": self.end_col - 1},
        }

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFORMATION = "information"
    HINT = "hint"


# Every diagnostic a user can cause has a stable code; editors and tests key on it.
CODES = {
    "PK001": "syntax error",
    "PK002": "unsupported preprocessor directive",
    "PK003": "meta_for not in canonical form",
    "PK004": "write to a parameter inside meta_schedule",
    "PK005": "cache() names something that is not an array used in the block",
    "PK006": "too many meta_for levels",
    "PK007": "call to an unsupported function",
    "PK008": "goto / return / break inside meta_schedule",
    "PK009": "meta_schedule structure not supported",
    "PK010": "undeclared identifier",
    "PK011": "unsupported type",
    "PK012": "array indexed with the wrong number of subscripts",
    "PK013": "unsupported statement or expression inside meta_schedule",
    "PK014": "nested meta_schedule",
    "PK015": "serial loop not in canonical form",
    "PK016": "single meta_for level: one thread per block",
    "PK017": "write to a meta_for loop variable",
    "PK018": "a name the generated code cannot have (a machine parameter, a C++ keyword, a CUDA built-in)",
    "PK019": "warning: a generated region lost a marker",
    "PK020": "iterations of a meta_for may access the same element, one writing",
    "PK021": "independence of meta_for iterations could not be proved",
    "PK022": "old-style (K&R) parameter declarations",
    "PK023": "warning: a condition of an assert that the analysis cannot use",
    "PK024": "a declaration inside meta_schedule hides a loop variable or a name the block reads from outside it",
    "PK025": "warning: the facts of a meta_schedule (assertions, meta_for bounds) cannot hold together",
    "PK026": "no kernel of a meta_schedule can launch on any GPU at the values its facts allow",
    "PK027": "warning: an access may fall outside its array's declared extents",
    "PK030": "the kernel cannot be lowered to GPU code",
    "PK031": "warning: an array of cache(...) cannot be staged in shared memory",
    "PK040": "warning: an uncoalesced global access",
    "PK041": "warning: a generated region made from an earlier version of its code, or a second copy",
    "PK042": "warning: every block has fewer threads than a warp",
    "PK043": "warning: a block size or granularity changes what the schedule computes: tune and dispatch_auto leave it",
    "PK044": "warning: a block level's extent grows with the data: blocks beyond 1024 threads",
    "PK097": "analysis of a meta_schedule ran past the time limit (language server)",
    "PK098": "analysis of a meta_schedule crashed (language server)",
    "PK099": "internal error",
    "PK100": "information: one case of the case tree (language server)",
}


@dataclass(frozen=True)
class Related:
    span: Span
    message: str


@dataclass(frozen=True)
class Diagnostic:
    severity: Severity
    code: str
    message: str
    span: Span
    related: tuple[Related, ...] = field(default_factory=tuple)

    def format(self) -> str:
        """gcc-style one-liner, what the CLI prints."""
        return f"{self.span}: {self.severity.value}: {self.message} [{self.code}]"

    def to_json(self) -> dict:
        return {
            "severity": self.severity.value,
            "code": self.code,
            "message": self.message,
            "range": self.span.to_lsp(),
            "file": self.span.file,
            "related": [{"message": r.message, "range": r.span.to_lsp(), "file": r.span.file}
                        for r in self.related],
        }


def error(code: str, message: str, span: Span, *related: Related) -> Diagnostic:
    return Diagnostic(Severity.ERROR, code, message, span, tuple(related))


def warning(code: str, message: str, span: Span, *related: Related) -> Diagnostic:
    return Diagnostic(Severity.WARNING, code, message, span, tuple(related))


class UserError(Exception):
    """Raised inside the front-end to abandon one schedule with a diagnostic."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic
