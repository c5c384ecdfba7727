"""The frozen model of a meta_schedule block: what every later stage reads.

Vocabulary follows the paper (Definition 1): parameters are scalars read
and never written in the block; a *data* parameter sizes an array, every
other one is a *program* parameter. Scalars defined in the enclosing
function from parameters (`int dim = (N-2)/(s*B);`) are *derived*: they are
replaced by their definition and recorded as facts.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from parakern import syntax
from parakern.source.diagnostics import Diagnostic, Span


@dataclass(frozen=True)
class ParallelLoop:
    """One meta_for level: `var` runs over [lo, hi)."""
    var: str
    lo: sympy.Expr
    hi: sympy.Expr
    level: str  # "grid" (blockIdx) or "block" (threadIdx)
    axis: str   # "x", "y" or "z"; the innermost level of each kind is "x"
    span: Span
    keyword_span: Span

    @property
    def extent(self) -> sympy.Expr:
        return self.hi - self.lo


@dataclass(frozen=True)
class SerialLoop:
    """A serial `for` inside the block; `between` ones sit between grid and block levels."""
    var: str
    lo: sympy.Expr
    hi: sympy.Expr
    step: sympy.Expr
    between: bool
    span: Span
    keyword_span: Span

    @property
    def trip_count(self) -> sympy.Expr:
        return sympy.ceiling((self.hi - self.lo) / self.step)


@dataclass(frozen=True)
class Param:
    name: str
    ctype: str
    kind: str  # "data" or "program"
    span: Span  # where it is declared


@dataclass(frozen=True)
class Derived:
    """A scalar defined from parameters before the block: `int dim = (N-2)/(s*B);`."""
    name: str
    ctype: str
    value: sympy.Expr
    span: Span


@dataclass(frozen=True)
class Fact:
    """Something known to hold whenever the block runs."""
    relation: sympy.Basic
    # "assert", "host if" (an if around the schedule, or one that returns before it), "loop bound",
    # "definition", "divisor"
    origin: str
    span: Span


@dataclass(frozen=True)
class Array:
    name: str
    ctype: str
    dims: tuple[sympy.Expr, ...]  # empty for a pointer whose allocation is not visible
    rank: int                     # number of subscripts an access takes
    is_pointer: bool
    read: bool
    written: bool
    span: Span  # declaration

    @property
    def element_size(self) -> int:
        return syntax.TYPE_SIZES[self.ctype]


@dataclass(frozen=True)
class Guard:
    """An `if` around an access; `uniform` when it reads parameters only (same for every thread)."""
    condition: "sympy.Basic | None"
    taken: bool
    uniform: bool
    span: Span


@dataclass(frozen=True)
class Access:
    """One array reference in the block.

    `indices` are the subscripts with local scalars replaced by their
    definitions, as sympy expressions over loop variables and parameters;
    `exact` is False where a subscript could not be expressed that way (then
    `indices` holds an opaque symbol for it).
    """
    array: str
    indices: tuple[sympy.Expr, ...]
    is_read: bool
    is_write: bool
    exact: bool
    guards: tuple[Guard, ...]
    loops: tuple[str, ...]  # enclosing serial loop variables, outer first
    span: Span
    data: bool = False      # a subscript reads array values (directly or through a local): `h[in[i] % 16]`


@dataclass(frozen=True)
class AtomicUpdate:
    """An update of one array element (`h[in[i] % NBINS] += 1`, analysis/updates.py) that several
    iterations of a meta_for may make at once: the kernels make it with a CUDA atomic."""
    span: Span      # the statement (the `if` of `if (v > m[k]) m[k] = v`)
    array: str
    op: str         # "add", "sub", "max" or "min"
    function: str   # the CUDA function: atomicAdd, atomicSub, atomicMax, atomicMin


@dataclass(frozen=True)
class LocalScalar:
    name: str
    ctype: str
    span: Span


@dataclass(frozen=True)
class CachedArray:
    name: str
    span: Span


@dataclass(frozen=True)
class Schedule:
    id: str                 # "<function>:<index in function>"
    function: str
    index: int
    span: Span              # the whole meta_schedule statement
    keyword_span: Span      # the `meta_schedule` token
    grid: tuple[ParallelLoop, ...]    # outer first
    block: tuple[ParallelLoop, ...]   # outer first; the last one is .x
    between: tuple[SerialLoop, ...]   # serial loops between grid and block levels
    serial: tuple[SerialLoop, ...]    # serial loops inside the per-thread body
    body: syntax.Block                # per-thread statements (inside the innermost meta_for)
    nest: syntax.Loop                 # the whole meta_for nest, as written
    accesses: tuple[Access, ...]
    locals: tuple[LocalScalar, ...]
    params: tuple[Param, ...]
    derived: tuple[Derived, ...]
    arrays: tuple[Array, ...]
    cache: tuple[CachedArray, ...]
    facts: tuple[Fact, ...]
    host_loops: tuple[str, ...]       # variables of the host code's for loops around the block
    text: str                         # source text of the block, for caching results
    function_span: "Span | None" = None   # the enclosing function definition, signature to `}`
    atomics: tuple[AtomicUpdate, ...] = ()  # updates made atomically (the dependence test decides)
    # it runs inside a host if, switch or loop, whose conditions are not among its facts
    host_guarded: bool = False

    @property
    def data_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.kind == "data")

    @property
    def program_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.kind == "program")

    @property
    def loops(self) -> tuple[ParallelLoop, ...]:
        return self.grid + self.block

    def array(self, name: str) -> Array:
        return next(a for a in self.arrays if a.name == name)


@dataclass(frozen=True)
class FrontendResult:
    file: str
    schedules: tuple[Schedule, ...]
    diagnostics: tuple[Diagnostic, ...]
