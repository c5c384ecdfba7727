"""The C subset that a meta_schedule body may use, as frozen typed trees.

The front-end turns pycparser's mutable AST into these nodes; the IR
lowering, the strategies and the CUDA generator all consume them. Every
expression carries its C type after the usual arithmetic conversions, so a
back-end never has to guess between integer and floating division.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Union

import sympy

from parakern.symbolic import cinteger
from parakern.source.diagnostics import Span
from parakern.symbolic.symbols import sym

# Scalar element types accepted in a schedule, by conversion rank.
INTEGER_TYPES = ("int", "unsigned", "long", "unsigned long", "long long", "unsigned long long")
FLOAT_TYPES = ("float", "double")
SCALAR_TYPES = INTEGER_TYPES + FLOAT_TYPES
TYPE_SIZES = {"int": 4, "unsigned": 4, "long": 8, "unsigned long": 8, "long long": 8,
              "unsigned long long": 8, "float": 4, "double": 8}

# Math functions callable in a schedule (same name in C and CUDA device code).
# C's <math.h> functions a kernel may call, by their double names with their arity; each has
# its float twin (sqrtf, fmodf): CUDA has both, and libdevice (ir/libdevice.py) both as __nv_.
MATH_ARITY = {
    "sqrt": 1, "cbrt": 1, "fabs": 1, "floor": 1, "ceil": 1, "round": 1, "trunc": 1, "rint": 1,
    "exp": 1, "exp2": 1, "expm1": 1, "log": 1, "log2": 1, "log10": 1, "log1p": 1,
    "sin": 1, "cos": 1, "tan": 1, "asin": 1, "acos": 1, "atan": 1, "sinh": 1, "cosh": 1, "tanh": 1,
    "asinh": 1, "acosh": 1, "atanh": 1, "erf": 1, "erfc": 1, "tgamma": 1, "lgamma": 1,
    "pow": 2, "fmod": 2, "remainder": 2, "atan2": 2, "hypot": 2, "fmin": 2, "fmax": 2, "fdim": 2,
    "copysign": 2, "fma": 3,
}
MATH_FUNCTIONS = frozenset(MATH_ARITY) | {f + "f" for f in MATH_ARITY} | {"abs", "min", "max"}


def math_double_name(name: str) -> str:
    """sqrtf -> sqrt, erf -> erf (a double function whose name ends in f), abs -> abs."""
    return name[:-1] if name not in MATH_ARITY and name.endswith("f") and name[:-1] in MATH_ARITY else name


def is_integer(ctype: str) -> bool:
    return ctype in INTEGER_TYPES


def is_unsigned(ctype: str) -> bool:
    return ctype.startswith("unsigned")


def arithmetic_result(a: str, b: str) -> str:
    """C's usual arithmetic conversions, restricted to SCALAR_TYPES."""
    if "double" in (a, b):
        return "double"
    if "float" in (a, b):
        return "float"
    rank = {"int": 0, "unsigned": 0, "long": 1, "unsigned long": 1, "long long": 2,
            "unsigned long long": 2}
    ra, rb = rank[a], rank[b]
    if ra != rb:
        wide, narrow = (a, b) if ra > rb else (b, a)
        # A signed wider type absorbs a narrower unsigned one on LP64.
        return wide
    return a if is_unsigned(a) else b


# ---------------------------------------------------------------- expressions

@dataclass(frozen=True)
class Const:
    value: Union[int, float]
    ctype: str
    span: Span
    text: str


@dataclass(frozen=True)
class Var:
    name: str
    ctype: str
    span: Span


@dataclass(frozen=True)
class Index:
    """a[i][j]: one subscript per declared dimension (pointers: exactly one)."""
    array: str
    indices: tuple["Expr", ...]
    ctype: str
    span: Span
    array_span: Span


@dataclass(frozen=True)
class Unary:
    op: str  # '-', '+', '!', '~'
    operand: "Expr"
    ctype: str
    span: Span


@dataclass(frozen=True)
class Binary:
    op: str  # + - * / % << >> & | ^ && || < <= > >= == !=
    left: "Expr"
    right: "Expr"
    ctype: str
    span: Span


@dataclass(frozen=True)
class Ternary:
    cond: "Expr"
    then: "Expr"
    other: "Expr"
    ctype: str
    span: Span


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple["Expr", ...]
    ctype: str
    span: Span


@dataclass(frozen=True)
class Cast:
    ctype: str
    operand: "Expr"
    span: Span


Expr = Union[Const, Var, Index, Unary, Binary, Ternary, Call, Cast]

COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})
LOGICAL = frozenset({"&&", "||"})


# ----------------------------------------------------------------- statements

@dataclass(frozen=True)
class Decl:
    """A local scalar declared inside the schedule: `int p = i*B + j;`."""
    name: str
    ctype: str
    init: "Expr | None"
    span: Span


@dataclass(frozen=True)
class Assign:
    """target op= value; `x++` arrives as `x += 1`."""
    target: Union[Var, Index]
    op: str  # '=', '+=', '-=', '*=', '/=', '%=', '<<=', '>>=', '&=', '|=', '^='
    value: "Expr"
    span: Span


@dataclass(frozen=True)
class If:
    cond: "Expr"
    then: "Block"
    other: "Block | None"
    span: Span


@dataclass(frozen=True)
class Loop:
    """for (int var = lo; var < hi; var += step) body — canonical form only.

    `parallel` marks a meta_for; a serial loop with `<=` is normalised to `<`.
    """
    var: str
    ctype: str
    lo: "Expr"
    hi: "Expr"
    step: "Expr"
    body: "Block"
    parallel: bool
    span: Span
    keyword_span: Span


@dataclass(frozen=True)
class Block:
    stmts: tuple["Stmt", ...]
    span: Span


Stmt = Union[Decl, Assign, If, Loop, Block]


# ------------------------------------------------------------------ helpers

def children(node) -> tuple:
    """Direct sub-expressions and sub-statements, in source order."""
    if isinstance(node, (Const, Var)):
        return ()
    if isinstance(node, Index):
        return node.indices
    if isinstance(node, (Unary, Cast)):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Ternary):
        return (node.cond, node.then, node.other)
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Decl):
        return () if node.init is None else (node.init,)
    if isinstance(node, Assign):
        return (node.target, node.value)
    if isinstance(node, If):
        return (node.cond, node.then) + (() if node.other is None else (node.other,))
    if isinstance(node, Loop):
        return (node.lo, node.hi, node.step, node.body)
    if isinstance(node, Block):
        return node.stmts
    raise TypeError(f"not a syntax node: {node!r}")


def wraps_around(expr) -> bool:
    """Whether C's unsigned arithmetic in a condition may wrap where the analysis's integers
    would not (`s - 1u >= 0u` holds at s = 0 in C): +, -, * or a negation computed unsigned, or
    a comparison that converts a signed operand to unsigned (`s >= -1`)."""
    for node in walk(expr):
        if isinstance(node, Binary) and node.op in ("+", "-", "*", "<<") and is_unsigned(node.ctype):
            return True
        if isinstance(node, Unary) and node.op == "-" and is_unsigned(node.ctype):
            return True
        if isinstance(node, Binary) and node.op in COMPARISONS and \
                is_unsigned(arithmetic_result(node.left.ctype, node.right.ctype)) and \
                not (is_unsigned(node.left.ctype) and is_unsigned(node.right.ctype)) and \
                not all(isinstance(x, Const) and x.value >= 0 or is_unsigned(x.ctype) for x in (node.left, node.right)):
            return True
    return False


def walk(node):
    """Pre-order traversal of a syntax tree."""
    yield node
    for child in children(node):
        yield from walk(child)


def replaced(node, replacement):
    """The tree with each node for which `replacement(node)` is not None replaced by it (and not
    descended into); the nodes above a replacement rebuilt, the others kept as they are."""
    new = replacement(node)
    if new is not None:
        return new
    if isinstance(node, tuple):
        items = tuple(replaced(x, replacement) for x in node)
        return items if any(a is not b for a, b in zip(items, node)) else node
    if not isinstance(node, _COMPOUND):
        return node
    changes = {}
    for field in dataclasses.fields(node):
        value = getattr(node, field.name)
        if isinstance(value, (tuple, Const, Var, *_COMPOUND)):
            new = replaced(value, replacement)
            if new is not value:
                changes[field.name] = new
    return dataclasses.replace(node, **changes) if changes else node


_COMPOUND = (Index, Unary, Binary, Ternary, Call, Cast, Decl, Assign, If, Loop, Block)   # nodes holding nodes


_POSITIONS = frozenset({"span", "array_span", "keyword_span", "text"})


def same(a, b) -> bool:
    """Structural equality of syntax trees, ignoring source positions."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if not dataclasses.is_dataclass(a):
        return a == b
    return all(same(getattr(a, f.name), getattr(b, f.name))
               for f in dataclasses.fields(a) if f.name not in _POSITIONS)


def variables(expr) -> frozenset[str]:
    """Names of the scalars an expression reads (array names excluded)."""
    return frozenset(n.name for n in walk(expr) if isinstance(n, Var))


def assigned_names(node) -> frozenset[str]:
    """Names of the scalars assigned in a tree (`x = ...`, `x += ...`; declarations excluded)."""
    return frozenset(n.target.name for n in walk(node) if isinstance(n, Assign) and isinstance(n.target, Var))


def renamed(node, names: dict):
    """The tree with each scalar named in `names` read, and declared, under its new name."""
    if not names:
        return node

    def swap(n):
        if isinstance(n, Var) and n.name in names:
            return dataclasses.replace(n, name=names[n.name])
        if isinstance(n, Decl) and n.name in names:
            return dataclasses.replace(n, name=names[n.name], init=None if n.init is None else renamed(n.init, names))
        return None

    return replaced(node, swap)


def to_sympy(expr: "Expr", env: "dict[str, sympy.Expr] | None" = None,
             lower: "cinteger.Bounds | None" = None) -> "sympy.Expr | None":
    """The value of an integer expression as a sympy expression, or None.

    C integer division and modulo truncate toward zero: they become floor / Mod
    where their operands are known non-negative (and the divisor positive), cdiv /
    cmod otherwise (symbolic/cinteger.py). `lower` gives the least value of the symbols
    whose sign is not that of (H1) (a loop variable that may start below 0; None:
    unknown). `env` substitutes local scalars by their definitions.
    Floating-point, calls and array reads have no symbolic value here and give None.
    """
    env = env or {}
    if isinstance(expr, Const):
        return sympy.Integer(expr.value) if isinstance(expr.value, int) else None
    if isinstance(expr, Var):
        if expr.name in env:
            return env[expr.name]
        return sym(expr.name) if is_integer(expr.ctype) else None
    if isinstance(expr, Cast):
        return to_sympy(expr.operand, env, lower) if is_integer(expr.ctype) else None
    if isinstance(expr, Unary):
        inner = to_sympy(expr.operand, env, lower)
        if inner is None:
            return None
        if expr.op == "-":
            return -inner
        if expr.op == "+":
            return inner
        if expr.op == "!":
            return sympy.Piecewise((1, sympy.Eq(inner, 0)), (0, True))
        return None
    if isinstance(expr, Binary):
        left, right = to_sympy(expr.left, env, lower), to_sympy(expr.right, env, lower)
        if left is None or right is None:
            return None
        if expr.op in COMPARISONS or expr.op in LOGICAL:
            return None  # a truth value, see to_sympy_condition
        if expr.op == "+":
            return left + right
        if expr.op == "-":
            return left - right
        if expr.op == "*":
            return left * right
        if expr.op in ("/", "%") and right.is_zero:
            return None  # division by zero has no value (the C program is undefined there)
        if expr.op == "/" and is_integer(expr.ctype):
            return cinteger.quotient(left, right, lower)
        if expr.op == "%" and is_integer(expr.ctype):
            return cinteger.remainder(left, right, lower)
        if expr.op == "<<" and right.is_Integer and 0 <= int(right) < 64:
            return left * 2 ** int(right)
        if expr.op == ">>" and right.is_Integer and 0 <= int(right) < 64 and is_integer(expr.ctype):
            # gcc and nvcc shift a signed value arithmetically: the floor of the quotient
            return sympy.floor(left / 2 ** int(right))
        if expr.op in ("&", "^", "|") and is_integer(expr.ctype):
            if left.is_Integer and not right.is_Integer:   # `1 ^ i` as `i ^ 1`
                left, right = right, left
            if right.is_Integer and -2 ** 16 < int(right) < 2 ** 16:
                return _bitwise(expr.op, left, int(right))
        return None
    if isinstance(expr, Ternary):
        cond = to_sympy_condition(expr.cond, env, lower)
        then, other = to_sympy(expr.then, env, lower), to_sympy(expr.other, env, lower)
        if cond is None or then is None or other is None:
            return None
        return sympy.Piecewise((then, cond), (other, True))
    return None


def _bitwise(op: str, x, c: int):
    """x & c, x ^ c, x | c for a constant c, in two's complement as gcc and nvcc compute
    them: bit b of x is floor(x / 2^b) mod 2 (the floor and the remainder of a negative x are
    its two's complement bits), so x & c sums c's bits that x has, x ^ c = x + c - 2(x & c) and
    x | c = x + c - (x & c). A mask of the low bits (x & 7) is the remainder itself."""
    if c < 0:   # through ~c = -c - 1 >= 0 and ~x = -x - 1 (`n + (i ^ -1)` reverses: n - 1 - i)
        return {"&": x - _bitwise("&", x, -c - 1), "^": -_bitwise("^", x, -c - 1) - 1,
                "|": -_bitwise("&", -x - 1, -c - 1) - 1}[op]
    if (c + 1) & c == 0:
        common = sympy.Mod(x, c + 1)
    else:
        common = sympy.Add(*[2 ** b * sympy.Mod(sympy.floor(x / 2 ** b), 2)
                             for b in range(c.bit_length()) if c >> b & 1])
    return {"&": common, "^": x + c - 2 * common, "|": x + c - common}[op]


_RELATIONS = {"<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt, ">=": sympy.Ge,
              "==": sympy.Eq, "!=": sympy.Ne}


def to_sympy_condition(expr: "Expr", env: "dict[str, sympy.Expr] | None" = None,
                       lower: "cinteger.Bounds | None" = None):
    """A C condition as a sympy boolean, or None when it has no symbolic form."""
    if isinstance(expr, Binary) and expr.op in _RELATIONS:
        left, right = to_sympy(expr.left, env, lower), to_sympy(expr.right, env, lower)
        if left is None or right is None:
            return None
        return _RELATIONS[expr.op](left, right)
    if isinstance(expr, Binary) and expr.op in LOGICAL:
        left = to_sympy_condition(expr.left, env, lower)
        right = to_sympy_condition(expr.right, env, lower)
        if left is None or right is None:
            return None
        return sympy.And(left, right) if expr.op == "&&" else sympy.Or(left, right)
    if isinstance(expr, Unary) and expr.op == "!":
        inner = to_sympy_condition(expr.operand, env, lower)
        return None if inner is None else sympy.Not(inner)
    value = to_sympy(expr, env, lower)
    return None if value is None else sympy.Ne(value, 0)
