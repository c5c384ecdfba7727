"""(2) Common-subexpression elimination on the index expressions of the source.

Index expressions are the integer initializers of locals (`int p = i*s*B + k*B + j;`),
integer right-hand sides, and array subscripts. They are read as polynomials
whose atoms are their divisions and remainders (placeholders that print back
as written, so a rewrite never reorganises a C division) and handed to
`sympy.cse`; every common subexpression becomes a new local `int tN`.

Level 1: within each statement; the temporaries are declared just before it.
Level 2: level 1, then across the statements of each block (the paper's
  Jacobi: `int t16 = p+1;` shared by `p1` and `np1`). A temporary is declared
  before the first statement that needs it, which is as high as it can go:
  the locals it reads are declared just above (hoisting further, to the top
  of the per-thread body, would read them before they exist).

Only expressions of one signed integer type take part, so a rewritten
expression computes in the same C type. Across statements, an expression is
left alone when it reads a local assigned after its declaration (its value
differs between statements) or a name declared inside the statement (another
scope), and a division by a non-constant is never moved to where it was not
evaluated before (out of an `if`, a loop body or the right of && || ?:).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import sympy

from parakern import syntax
from parakern.kernel import Kernel
from parakern.model import Schedule
from parakern.strategies.base import Strategy
from parakern.analysis.rebuild import fresh_names, rebuild, to_syntax, used_names, var_ctypes, with_body
from parakern.symbolic.symbols import sym

MAX_LEVEL = 2
SIGNED = ("int", "long", "long long")


class CommonSubexpressions(Strategy):
    """One application raises `cse_level` to the next level that changes the code.

    A level that finds nothing is passed over (it would give the same kernel),
    so one application may go from 0 to 2; at level 2, or when no level finds
    anything, it does not apply.
    """
    code = "(2)"
    name = "cse"
    improves = frozenset({"registers"})
    applies_to = "source"
    applied_words = "common subexpressions eliminated"

    @classmethod
    def instances(cls, settled: frozenset = frozenset()) -> list[Strategy]:
        # Two entries: the algorithm uses a strategy once per path, and CSE has two levels.
        return [cls(), cls()]

    def changes(self, kernel: Kernel) -> "dict | None":
        schedule = kernel.schedule
        for level in range(kernel.cse_level + 1, MAX_LEVEL + 1):
            body = eliminate(schedule, level)
            if body is not None:
                new = rebuild(schedule, with_body(schedule.nest, body), len(schedule.grid))
                return {"schedule": new, "cse_level": level}
        return None

    def why_not(self, kernel: Kernel) -> str:
        return "common subexpressions: no index subexpression is computed twice"

    @classmethod
    def trail(cls, kernel: Kernel) -> tuple[str, ...]:
        return tuple(d for d in kernel.decisions if d == cls.code)   # once per level applied

    @classmethod
    def comment_words(cls, kernel: Kernel, cap: "int | None") -> "str | None":
        return f"common subexpressions eliminated (level {kernel.cse_level})" if kernel.cse_level else None


def eliminate(schedule: Schedule, level: int) -> "syntax.Block | None":
    """The per-thread body after CSE at `level`, or None when it finds nothing."""
    ctx = _Context(schedule)
    body = _statement_pass(schedule.body, ctx)
    if level >= 2:
        body = _block_pass(body, ctx)
    return body if ctx.created else None


# ------------------------------------------------------------------ index expressions as polynomials

class Atoms:
    """Placeholders for the divisions and remainders of index expressions.

    Two atoms with the same value (sympy-equal) share one placeholder, so a
    repeated `N / 2` is one symbol to `sympy.cse`.
    """

    def __init__(self):
        self.syntax: dict[sympy.Symbol, syntax.Expr] = {}
        self._by_value: dict[sympy.Expr, sympy.Symbol] = {}

    def symbol(self, node: syntax.Expr) -> "sympy.Symbol | None":
        value = syntax.to_sympy(node)
        if value is None:
            return None
        if value not in self._by_value:
            placeholder = sympy.Symbol(f"?atom{len(self._by_value)}", integer=True)
            self._by_value[value] = placeholder
            self.syntax[placeholder] = node
        return self._by_value[value]

    def risky(self, value: sympy.Expr) -> bool:
        """Whether `value` holds a division whose divisor may be zero (unsafe to evaluate early)."""
        for s in value.free_symbols:
            node = self.syntax.get(s)
            if node is not None and not (isinstance(node.right, syntax.Const) and node.right.value != 0):
                return True
        return False


def to_sympy_atomized(expr: syntax.Expr, atoms: Atoms) -> "tuple[sympy.Expr, str] | None":
    """(polynomial, C type) of an integer expression of one signed type, else None.

    Accepted: constants, scalars, unary -/+, binary + - * and << by a constant;
    / and % become atoms. Anything else (array reads, calls, casts, mixed or
    unsigned types, comparisons) gives None: such an expression is left alone.
    """
    ctypes = {n.ctype for n in syntax.walk(expr)}
    if len(ctypes) != 1 or next(iter(ctypes)) not in SIGNED:
        return None

    def go(e):
        if isinstance(e, syntax.Const):
            return sympy.Integer(e.value) if isinstance(e.value, int) else None
        if isinstance(e, syntax.Var):
            return sym(e.name)
        if isinstance(e, syntax.Unary) and e.op in "-+":
            inner = go(e.operand)
            return None if inner is None else (-inner if e.op == "-" else inner)
        if isinstance(e, syntax.Binary):
            if e.op in ("/", "%"):
                if any(isinstance(n, syntax.Index) for n in syntax.walk(e)):
                    return None
                return atoms.symbol(e)
            left, right = go(e.left), go(e.right)
            if left is None or right is None:
                return None
            if e.op == "+":
                return left + right
            if e.op == "-":
                return left - right
            if e.op == "*":
                return left * right
            if e.op == "<<" and right.is_Integer and 0 <= int(right) < 31:
                return left * 2 ** int(right)
        return None

    value = go(expr)
    return None if value is None else (value, next(iter(ctypes)))


@dataclass
class _Context:
    schedule: Schedule
    atoms: Atoms = field(default_factory=Atoms)
    created: int = 0

    def __post_init__(self):
        self.names = var_ctypes(self.schedule)
        self._fresh = fresh_names(used_names(self.schedule), "t")
        self.assigned = syntax.assigned_names(self.schedule.nest)

    def symbols(self):
        while True:
            yield sym(next(self._fresh))


# ------------------------------------------------------------------ positions

def _is_position(expr, atoms: Atoms) -> bool:
    """An index expression worth looking at: an operator over integers of one signed type."""
    return not isinstance(expr, (syntax.Var, syntax.Const)) and to_sympy_atomized(expr, atoms) is not None


def _map_expr(e, fn, atoms, conditional):
    """`e` with fn(position, conditional) applied to the index expressions inside it."""
    if isinstance(e, syntax.Index):
        subs = tuple(fn(s, conditional) if _is_position(s, atoms) else _map_expr(s, fn, atoms, conditional)
                     for s in e.indices)
        return replace(e, indices=subs)
    if isinstance(e, (syntax.Unary, syntax.Cast)):
        return replace(e, operand=_map_expr(e.operand, fn, atoms, conditional))
    if isinstance(e, syntax.Binary):
        lazy = conditional or e.op in syntax.LOGICAL  # the right of && || may not run
        return replace(e, left=_map_expr(e.left, fn, atoms, conditional),
                       right=_map_expr(e.right, fn, atoms, lazy))
    if isinstance(e, syntax.Ternary):
        return replace(e, cond=_map_expr(e.cond, fn, atoms, conditional),
                       then=_map_expr(e.then, fn, atoms, True), other=_map_expr(e.other, fn, atoms, True))
    if isinstance(e, syntax.Call):
        return replace(e, args=tuple(_map_expr(a, fn, atoms, conditional) for a in e.args))
    return e


def _map_value(e, fn, atoms, conditional):
    return fn(e, conditional) if _is_position(e, atoms) else _map_expr(e, fn, atoms, conditional)


def _map_own(stmt, fn, atoms, conditional=False):
    """The statement with fn applied to its own index expressions (not those of nested statements)."""
    if isinstance(stmt, syntax.Decl) and stmt.init is not None:
        return replace(stmt, init=_map_value(stmt.init, fn, atoms, conditional))
    if isinstance(stmt, syntax.Assign):
        target = _map_expr(stmt.target, fn, atoms, conditional)
        return replace(stmt, target=target, value=_map_value(stmt.value, fn, atoms, conditional))
    if isinstance(stmt, syntax.If):
        return replace(stmt, cond=_map_expr(stmt.cond, fn, atoms, conditional))
    return stmt


def _map_deep(stmt, fn, atoms, conditional=False):
    """The statement with fn applied to its index expressions and those of nested statements."""
    stmt = _map_own(stmt, fn, atoms, conditional)
    if isinstance(stmt, syntax.Block):
        return replace(stmt, stmts=tuple(_map_deep(s, fn, atoms, conditional) for s in stmt.stmts))
    if isinstance(stmt, syntax.If):
        then = _map_deep(stmt.then, fn, atoms, True)
        other = None if stmt.other is None else _map_deep(stmt.other, fn, atoms, True)
        return replace(stmt, then=then, other=other)
    if isinstance(stmt, syntax.Loop):
        return replace(stmt, body=_map_deep(stmt.body, fn, atoms, True))
    return stmt


def _nested_blocks(stmt, fn):
    """The statement with fn applied to each block directly nested in it."""
    if isinstance(stmt, syntax.Block):
        return fn(stmt)
    if isinstance(stmt, syntax.If):
        return replace(stmt, then=fn(stmt.then), other=None if stmt.other is None else fn(stmt.other))
    if isinstance(stmt, syntax.Loop):
        return replace(stmt, body=fn(stmt.body))
    return stmt


def _collect(stmt, mapper, atoms) -> list:
    found = []

    def record(e, conditional):
        found.append((e, conditional))
        return e

    mapper(stmt, record, atoms)
    return found


# ------------------------------------------------------------------ the passes

def _statement_pass(block: syntax.Block, ctx: _Context) -> syntax.Block:
    stmts = []
    for stmt in block.stmts:
        stmt = _nested_blocks(stmt, lambda b: _statement_pass(b, ctx))
        marks = [not (conditional and ctx.atoms.risky(to_sympy_atomized(e, ctx.atoms)[0]))
                 for e, conditional in _collect(stmt, _map_own, ctx.atoms)]
        # Temporaries go just before the statement: evaluated exactly when it is.
        temps, new = _run_cse([stmt], _map_own, [marks], ctx)
        stmts.extend(temps[0])
        stmts.append(new[0])
    return replace(block, stmts=tuple(stmts))


def _block_pass(block: syntax.Block, ctx: _Context) -> syntax.Block:
    stmts = block.stmts
    declared_at = {s.name: k for k, s in enumerate(stmts) if isinstance(s, syntax.Decl)}
    eligible = []
    for k, stmt in enumerate(stmts):
        inner = {n.name for n in syntax.walk(stmt) if isinstance(n, syntax.Decl)}
        inner |= {n.var for n in syntax.walk(stmt) if isinstance(n, syntax.Loop)}
        later = {name for name, at in declared_at.items() if at >= k}
        excluded = inner | later | ctx.assigned
        marks = []
        for expr, conditional in _collect(stmt, _map_deep, ctx.atoms):
            value = to_sympy_atomized(expr, ctx.atoms)
            marks.append(not (syntax.variables(expr) & excluded)
                         and not (conditional and ctx.atoms.risky(value[0])))
        eligible.append(marks)
    temps, new = _run_cse(list(stmts), _map_deep, eligible, ctx)
    out = []
    for k, stmt in enumerate(new):
        out.extend(temps[k])
        out.append(_nested_blocks(stmt, lambda b: _block_pass(b, ctx)))
    return replace(block, stmts=tuple(out))


def _run_cse(stmts, mapper, eligible, ctx):
    """sympy.cse over the eligible int positions of `stmts`.

    Returns (temporaries to declare before each statement, rewritten statements).
    """
    entries = []  # (statement index, position index, value)
    for k, stmt in enumerate(stmts):
        for n, (expr, _) in enumerate(_collect(stmt, mapper, ctx.atoms)):
            if not eligible[k][n]:
                continue
            value, ctype = to_sympy_atomized(expr, ctx.atoms)
            if ctype == "int":
                entries.append((k, n, value))
    none = ([[] for _ in stmts], list(stmts))
    if not entries:
        return none
    replacements, reduced = sympy.cse([v for _, _, v in entries], symbols=ctx.symbols())
    if not replacements:
        return none
    temps = [s for s, _ in replacements]
    names = dict(ctx.names, **{s.name: "int" for s in temps})

    # Each temporary goes before the first statement that needs it, directly or through a later one.
    first = {}
    for (k, _, _), value in zip(entries, reduced):
        for s in value.free_symbols & set(temps):
            first[s] = min(first.get(s, k), k)
    for s, value in reversed(replacements):
        for used in value.free_symbols & set(temps):
            first[used] = min(first.get(used, len(stmts)), first.get(s, len(stmts)))
    before = [[] for _ in stmts]
    for s, value in replacements:
        if first.get(s, len(stmts)) >= len(stmts):
            continue
        k = first[s]
        span = stmts[k].span
        before[k].append(syntax.Decl(s.name, "int", to_syntax(value, "int", names, span, ctx.atoms), span))
        ctx.created += 1

    new_values = {}
    for (k, n, _), value in zip(entries, reduced):
        if value.free_symbols & set(temps):
            new_values[(k, n)] = value
    rewritten = []
    for k, stmt in enumerate(stmts):
        counter = iter(range(10 ** 9))

        def substitute(e, conditional, k=k, counter=counter):
            n = next(counter)
            if (k, n) not in new_values:
                return e
            return to_syntax(new_values[(k, n)], "int", names, e.span, ctx.atoms)

        rewritten.append(mapper(stmt, substitute, ctx.atoms))
    return before, rewritten
