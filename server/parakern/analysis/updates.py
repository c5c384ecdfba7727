"""Read-modify-write updates of one array element, and the CUDA atomic that makes each.

An update combines an element with a value by an operation whose result does not depend on
the order several updates run in:

    h[k] += v;   h[k] -= v;   h[k] = h[k] + v;   h[k]++;                        add, sub
    m[k] = max(m[k], v);   if (v > m[k]) m[k] = v;   m[k] = m[k] < v ? v : m[k];  max (min alike)
    if (i < n && v > m[k]) m[k] = v;                    the same under the test before the &&

Where iterations of a meta_for may update one element at once (a histogram, a scatter-add
through an index array, a maximum into one cell), the dependence test lets them
(dependence.py) and the kernels make each such update with CUDA's atomic function
(`atomicAdd(&h[k], v)`), which runs the read, the operation and the write as one step: no
update is lost. Every other access to the array must still touch other elements.

CUDA has atomicAdd for int, unsigned, unsigned long long, float, and double from sm_60;
atomicSub for int and unsigned; atomicMin / atomicMax for int, unsigned, long long and
unsigned long long. A 64-bit `long` adds as unsigned long long (two's complement: the same
bits), and a subtraction adds the negated value where there is no atomicSub.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from parakern import syntax
from parakern.source.diagnostics import Span

ADDITIVE = frozenset({"add", "sub"})
_COMPARE = {">": "max", ">=": "max", "<": "min", "<=": "min"}   # `if (v OP m[k]) m[k] = v`
_FLIP = {">": "<", ">=": "<=", "<": ">", "<=": ">="}
_MINMAX_CALLS = {"max": "max", "min": "min", "fmax": "max", "fmin": "min", "fmaxf": "max", "fminf": "min"}
_64BIT = {"long": "unsigned long long", "unsigned long": "unsigned long long", "long long": "unsigned long long"}
_MINMAX_64 = {"long": "long long", "unsigned long": "unsigned long long"}


@dataclass(frozen=True)
class Update:
    op: str                         # "add", "sub", "max" or "min"
    target: syntax.Index            # the element
    value: syntax.Expr              # what is added, subtracted or compared
    span: Span                      # the statement (the `if` of a compare-and-store)
    references: frozenset[Span]     # the references to the element in the statement
    guard: "syntax.Expr | None" = None   # `if (guard && v > m[k])`: the update runs where it holds

    @property
    def kind(self) -> str:
        """Updates of one kind commute with each other: add and sub, max, min."""
        return "add" if self.op in ADDITIVE else self.op

    def text(self) -> str:
        return {"add": "+=", "sub": "-=", "max": "max", "min": "min"}[self.op]


@dataclass(frozen=True)
class Atomic:
    """How CUDA makes an update: `function((pointer_type *)&element, (value_type)(value))`."""
    function: str               # atomicAdd, atomicSub, atomicMax, atomicMin
    pointer_type: "str | None"  # the element's type reinterpreted (long as unsigned long long), or None
    value_type: str             # the operand's C type
    negate: bool                # a subtraction made as the addition of -value


def update_of(stmt) -> "Update | None":
    """The update a statement is, or None."""
    if isinstance(stmt, syntax.If):
        return _compare_and_store(stmt)
    if not isinstance(stmt, syntax.Assign) or not isinstance(stmt.target, syntax.Index):
        return None
    target, value = stmt.target, stmt.value
    if stmt.op in ("+=", "-="):
        return Update("add" if stmt.op == "+=" else "sub", target, value, stmt.span, frozenset({target.span}))
    if stmt.op != "=":
        return None
    if isinstance(value, syntax.Binary) and value.op in ("+", "-"):
        if syntax.same(value.left, target):
            return Update("add" if value.op == "+" else "sub", target, value.right, stmt.span,
                          frozenset({target.span, value.left.span}))
        if value.op == "+" and syntax.same(value.right, target):
            return Update("add", target, value.left, stmt.span, frozenset({target.span, value.right.span}))
        return None
    if isinstance(value, syntax.Call) and value.func in _MINMAX_CALLS and len(value.args) == 2:
        for mine, other in ((0, 1), (1, 0)):
            if syntax.same(value.args[mine], target) and not _reads(value.args[other], target):
                return Update(_MINMAX_CALLS[value.func], target, value.args[other], stmt.span,
                              frozenset({target.span, value.args[mine].span}))
        return None
    if isinstance(value, syntax.Ternary) and isinstance(value.cond, syntax.Binary) and value.cond.op in _COMPARE:
        # m[k] = m[k] < v ? v : m[k]: the larger of the two
        c = value.cond
        for mine, other, op in ((c.left, c.right, c.op), (c.right, c.left, _FLIP[c.op])):
            if not (syntax.same(mine, target) and not _reads(other, target)):
                continue
            # `mine op other ? x : y`: x is the larger where op is > (or >=)
            larger_first = op in (">", ">=")
            if syntax.same(value.then, mine) and syntax.same(value.other, other):
                kind = "max" if larger_first else "min"
            elif syntax.same(value.then, other) and syntax.same(value.other, mine):
                kind = "min" if larger_first else "max"
            else:
                continue
            spans = {target.span, mine.span} | {n.span for n in (value.then, value.other) if syntax.same(n, target)}
            return Update(kind, target, other, stmt.span, frozenset(spans))
    return None


def _compare_and_store(stmt: syntax.If) -> "Update | None":
    """`if (v > m[k]) m[k] = v;` (or `m[k] < v`; `>=`, `<`, `<=`), nothing else in the if; the
    comparison may be the last operand of `&&` (`if (i < n && v > m[k])`): C tests it only
    where the others hold, the guard of the update."""
    cond, guard = stmt.cond, None
    if isinstance(cond, syntax.Binary) and cond.op == "&&":
        cond, guard = cond.right, cond.left
    if stmt.other is not None or not isinstance(cond, syntax.Binary) or cond.op not in _COMPARE:
        return None
    only = _only(stmt.then)
    if not (isinstance(only, syntax.Assign) and only.op == "=" and isinstance(only.target, syntax.Index)):
        return None
    target, value, c = only.target, only.value, cond
    for element, other, op in ((c.right, c.left, c.op), (c.left, c.right, _FLIP[c.op])):
        # `other op element`: v > m[k] stores the larger value
        if syntax.same(element, target) and syntax.same(other, value) and not _reads(value, target):
            return Update(_COMPARE[op], target, value, stmt.span, frozenset({target.span, element.span}), guard)
    return None


def _only(block: syntax.Block):
    if len(block.stmts) != 1:
        return None
    stmt = block.stmts[0]
    return _only(stmt) if isinstance(stmt, syntax.Block) else stmt


def _reads(expr, target: syntax.Index) -> bool:
    return any(isinstance(n, syntax.Index) and n.array == target.array for n in syntax.walk(expr))


def updates(node) -> tuple[Update, ...]:
    """Every update statement of a tree, in source order (an update inside another's value
    cannot be: updates are statements)."""
    found = []
    for n in syntax.walk(node):
        if isinstance(n, (syntax.Assign, syntax.If)):
            u = update_of(n)
            if u is not None:
                found.append(u)
    return tuple(found)


def made_atomically(schedule, stmt) -> "Update | None":
    """The update `stmt` is, where the schedule makes it with an atomic (`schedule.atomics`, a
    copy of it that a strategy made included: thread coarsening tags its copies' spans)."""
    if not schedule.atomics or not isinstance(stmt, (syntax.Assign, syntax.If)):
        return None
    span = stmt.span if not stmt.span.copy else replace(stmt.span, copy=0)
    if all(a.span != span for a in schedule.atomics):
        return None
    return update_of(stmt)


def described(schedule) -> tuple[tuple[int, str, str], ...]:
    """(line, the statement as written, the CUDA function) of each atomic update of a schedule:
    what the report, the JSON and the hover show."""
    lines = schedule.text.split("\n")
    out = []
    for a in schedule.atomics:
        first, last = a.span.line - schedule.span.line, a.span.end_line - schedule.span.line
        if 0 <= first <= last < len(lines):
            part = lines[first:last + 1]
            part[-1] = part[-1][:a.span.end_col - (schedule.span.col if last == 0 else 1)]
            part[0] = part[0][a.span.col - (schedule.span.col if first == 0 else 1):]
            text = " ".join(" ".join(p.split()) for p in part).strip()
        else:
            text = f"an update of {a.array}"
        out.append((a.span.line, text, a.function))
    return tuple(out)


def architecture(target: str) -> int:
    """sm_80 -> 80."""
    return int(target.split("_", 1)[1].rstrip("af"))


def atomic_for(update: Update, target: str) -> "tuple[Atomic | None, str]":
    """(how CUDA makes the update on `target`, '') or (None, why it cannot)."""
    ctype, value_type = update.target.ctype, update.value.ctype
    if syntax.is_integer(ctype) and not syntax.is_integer(value_type):
        return None, (f"the {ctype} element takes a {value_type} value, which C rounds after the "
                      f"{'comparison' if update.kind != 'add' else 'addition'}: convert the value to {ctype} first")
    if update.kind == "add":
        if ctype == "double" and architecture(target) < 60:
            return None, (f"atomicAdd on double needs sm_60 or later, and the target is {target}: "
                          "choose --target sm_60 or later, or accumulate in float")
        if ctype in ("int", "unsigned") and update.op == "sub":
            return Atomic("atomicSub", None, ctype, False), ""
        pointer = _64BIT.get(ctype)
        return Atomic("atomicAdd", pointer, pointer or ctype, update.op == "sub"), ""
    if not syntax.is_integer(ctype):
        return None, (f"CUDA has atomicMin and atomicMax for integers only, and the element is {ctype}: "
                      "keep a maximum per thread and combine them afterwards, or compare integer keys")
    if syntax.arithmetic_result(ctype, value_type) != ctype:
        return None, (f"the {ctype} element is compared with a {value_type} value, which C compares as "
                      f"{syntax.arithmetic_result(ctype, value_type)}: convert the value to {ctype} first")
    pointer = _MINMAX_64.get(ctype)
    function = "atomicMax" if update.kind == "max" else "atomicMin"
    return Atomic(function, pointer, pointer or ctype, False), ""


def atomic_statement(update: Update, atomic: Atomic, element: str, value: str) -> str:
    """The CUDA statement: `atomicAdd(&h[k], v);` (element and value already printed, as C
    expressions), the value converted to the operand's type as C's assignment converts it."""
    address = f"&{element}" if atomic.pointer_type is None else f"({atomic.pointer_type} *)&{element}"
    if update.value.ctype != atomic.value_type:
        value = f"({atomic.value_type})({value})"
    operand = f"-({value})" if atomic.negate else value
    return f"{atomic.function}({address}, {operand});"
