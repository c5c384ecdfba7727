"""C text from the typed syntax trees and from the model's sympy expressions.

Expressions get the parentheses C's precedence needs, plus the few that
gcc's -Wparentheses asks for (`a && b || c`, arithmetic inside `&`, `|`,
`^` and shifts, chained comparisons); the tree's grouping is always kept
(`a - (b - c)`, `a + (b + c)` for floats). Statements are printed with
braces everywhere and canonical loops `for (int i = lo; i < hi; i++)`.

sympy expressions are integer values of the model (region bounds, launch
sizes, constraints). floor(a/b) prints as C's `a/b` and Mod(a, b) as
`a % b`: C truncates, which is floor and mod for the non-negative values
hypothesis (H1) of the paper allows, and the generated file says so; a C
division of operands that may be negative is cdiv / cmod (symbolic/cinteger.py),
printed as the same `/` and `%`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import sympy

from parakern.symbolic import printing
from parakern import syntax
from parakern.symbolic.cinteger import cdiv, cmod

INDENT = "    "
_IDENT = re.compile(r"[A-Za-z_]\w*")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)

# C precedence, higher binds tighter.
POSTFIX, UNARY, TERNARY = 16, 15, 3
BINARY = {"*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11,
          "<": 10, "<=": 10, ">": 10, ">=": 10, "==": 9, "!=": 9,
          "&": 8, "^": 7, "|": 6, "&&": 5, "||": 4}
_BITWISE = frozenset({"&", "^", "|", "<<", ">>"})
_SYNTAX_EXPR = (syntax.Const, syntax.Var, syntax.Index, syntax.Unary, syntax.Binary, syntax.Ternary,
                syntax.Call, syntax.Cast)


class CodegenError(Exception):
    """Something the CUDA generator cannot print; `span` says where in the source."""

    def __init__(self, message: str, span=None):
        super().__init__(message)
        self.message = message
        self.span = span


@dataclass(frozen=True)
class Raw:
    """An already printed C expression and the precedence of its top operator."""
    text: str
    prec: int


# ------------------------------------------------------------------ sympy

class _IntPrinter(printing.CPrinter):
    """printing.to_c's printer, refusing what is not a C integer expression."""

    def __init__(self, cast: "str | None" = None):
        super().__init__()
        self.cast = cast  # C type every symbol is converted to first (64-bit index arithmetic)

    def _print_Symbol(self, expr):
        return f"(({self.cast}){expr.name})" if self.cast else expr.name

    def _print_Mul(self, expr):
        # StrPrinter writes N/2 for N*Rational(1, 2): in C that would silently truncate.
        if any(f.is_Rational and not f.is_Integer for f in expr.args):
            raise CodegenError(f"'{expr}' is not an integer: no C integer expression for it")
        return super()._print_Mul(expr)

    def _print_Rational(self, expr):
        raise CodegenError(f"'{expr}' is not an integer: no C integer expression for it")

    def _print_Float(self, expr):
        raise CodegenError(f"'{expr}' is not an integer: no C integer expression for it")


def sym_prec(expr) -> int:
    """C precedence of the top operator of `sym_c(expr)`."""
    expr = sympy.sympify(expr)
    if expr.is_Integer:
        return UNARY if expr < 0 else POSTFIX
    if expr.is_Symbol or isinstance(expr, (sympy.Piecewise, sympy.Min, sympy.Max)):
        return POSTFIX
    if isinstance(expr, sympy.Add) or (isinstance(expr, sympy.Mul) and expr.could_extract_minus_sign()):
        return BINARY["+"]  # `-B*s` reads better parenthesised wherever a sum would be
    if isinstance(expr, (sympy.Mul, sympy.Pow, sympy.floor, sympy.ceiling, sympy.Mod, cdiv, cmod)):
        return BINARY["*"]
    if isinstance(expr, sympy.core.relational.Relational):
        return BINARY["=="] if expr.rel_op in ("==", "!=") else BINARY["<"]
    if isinstance(expr, sympy.And):
        return BINARY["&&"]
    if isinstance(expr, sympy.Or):
        return BINARY["||"]
    return UNARY


def sym_c(expr, cast: "str | None" = None) -> str:
    """An integer sympy expression (or condition) in C with C integer semantics."""
    return _IntPrinter(cast).doprint(sympy.sympify(expr))


def sym_raw(expr, cast: "str | None" = None) -> Raw:
    expr = sympy.sympify(expr)
    return Raw(sym_c(expr, cast), POSTFIX if cast and expr.is_Symbol else sym_prec(expr))


def wrap(item: Raw, level: int, strict: bool = False) -> str:
    """item's text, parenthesised when it binds looser than `level` (or as loose, if strict)."""
    return f"({item.text})" if item.prec < level or (strict and item.prec == level) else item.text


def binop(left: Raw, op: str, right: Raw) -> Raw:
    """left op right, grouped as written (left-associative C operators)."""
    p = BINARY[op]
    return Raw(f"{wrap(left, p)} {op} {wrap(right, p, strict=True)}", p)


def relation_c(relations) -> str:
    """A conjunction of sympy relations in C (the constraints of a case); `1` when empty."""
    parts = []
    for r in relations:
        text = printing.to_c(r)
        parts.append(text if sym_prec(r) > BINARY["&&"] else f"({text})")
    return " && ".join(parts) or "1"


# ------------------------------------------------------------------ syntax

class CPrinter:
    """Prints syntax trees. Subclasses change how array elements are reached (`index`)
    and how assignments are written (`assign`)."""

    def __init__(self, no_unroll: bool = False):
        self.no_unroll = no_unroll   # `#pragma unroll 1` before every loop

    # ---- expressions

    def expr(self, e) -> str:
        return self.raw(e).text

    def raw(self, e) -> Raw:
        if isinstance(e, Raw):
            return e
        if isinstance(e, syntax.Const):
            text = e.text or repr(e.value)
            return Raw(text, UNARY if text.startswith("-") else POSTFIX)
        if isinstance(e, syntax.Var):
            return Raw(e.name, POSTFIX)
        if isinstance(e, syntax.Index):
            return Raw(self.index(e), POSTFIX)
        if isinstance(e, syntax.Call):
            return Raw(f"{e.func}({', '.join(self.expr(a) for a in e.args)})", POSTFIX)
        if isinstance(e, syntax.Cast):
            return Raw(f"({e.ctype}){wrap(self.raw(e.operand), UNARY)}", UNARY)
        if isinstance(e, syntax.Unary):
            inner = self.raw(e.operand)
            text = wrap(inner, UNARY)
            if e.op in "+-" and text.startswith(("+", "-")):
                text = f"({text})"  # `- -x` must not become `--x`
            return Raw(e.op + text, UNARY)
        if isinstance(e, syntax.Binary):
            return self._binary(e)
        if isinstance(e, syntax.Ternary):
            cond = wrap(self.raw(e.cond), TERNARY, strict=True)
            then = self.expr(e.then)
            other = wrap(self.raw(e.other), TERNARY)
            return Raw(f"{cond} ? {then} : {other}", TERNARY)
        raise CodegenError(f"cannot print expression {type(e).__name__}", getattr(e, "span", None))

    def _binary(self, e: syntax.Binary) -> Raw:
        p = BINARY[e.op]
        left, right = self.raw(e.left), self.raw(e.right)
        lt = wrap(left, p) if not self._clarify(e.op, e.left) else f"({left.text})"
        rt = wrap(right, p, strict=True) if not self._clarify(e.op, e.right) else f"({right.text})"
        return Raw(f"{lt} {e.op} {rt}", p)

    @staticmethod
    def _clarify(op: str, child) -> bool:
        """Parentheses C does not need but gcc -Wparentheses (and a reader) wants."""
        if not isinstance(child, syntax.Binary) or child.op == op:
            return False
        if op == "||" and child.op == "&&":
            return True
        if op in _BITWISE:
            return True
        return op in syntax.COMPARISONS and child.op in syntax.COMPARISONS

    def index(self, e: syntax.Index) -> str:
        """An array element as written: a[i][j]."""
        return e.array + "".join(f"[{self.expr(i)}]" for i in e.indices)

    # ---- statements

    def block(self, stmts, depth: int) -> list[str]:
        lines: list[str] = []
        for s in stmts:
            lines.extend(self.stmt(s, depth))
        return lines

    def stmt(self, s, depth: int) -> list[str]:
        pad = INDENT * depth
        if isinstance(s, syntax.Block):
            return [pad + "{"] + self.block(s.stmts, depth + 1) + [pad + "}"]
        if isinstance(s, syntax.Decl):
            init = "" if s.init is None else f" = {self.expr(s.init)}"
            return [f"{pad}{s.ctype} {s.name}{init};"]
        if isinstance(s, syntax.Assign):
            return [pad + line for line in self.assign(s)]
        if isinstance(s, syntax.If):
            return self._if(s, depth)
        if isinstance(s, syntax.Loop):
            if s.parallel:
                raise CodegenError("meta_for inside the per-thread body is not supported", s.keyword_span)
            head = self.for_header(s.ctype, s.var, self.expr(s.lo), self.raw(s.hi), s.step)
            return self.loop(head, self.block(s.body.stmts, depth + 1), depth)
        raise CodegenError(f"cannot print statement {type(s).__name__}", getattr(s, "span", None))

    def assign(self, s: syntax.Assign) -> list[str]:
        """The statement's lines (without indentation); one line unless a subclass needs more."""
        target = self.index(s.target) if isinstance(s.target, syntax.Index) else s.target.name
        return [f"{target} {s.op} {self.expr(s.value)};"]

    def _if(self, s: syntax.If, depth: int) -> list[str]:
        pad = INDENT * depth
        lines = [f"{pad}if ({self.expr(s.cond)}) {{"] + self.block(s.then.stmts, depth + 1)
        other = s.other
        while other is not None:
            only = other.stmts[0] if len(other.stmts) == 1 else None
            if isinstance(only, syntax.If):  # else if: no staircase
                lines += [f"{pad}}} else if ({self.expr(only.cond)}) {{"] + self.block(only.then.stmts, depth + 1)
                other = only.other
            else:
                lines += [pad + "} else {"] + self.block(other.stmts, depth + 1)
                other = None
        return lines + [pad + "}"]

    def for_header(self, ctype: str, var: str, lo: str, hi: Raw, step) -> str:
        """`for (int k = lo; k < hi; k++)`; `step` is syntax or a sympy value."""
        cond = f"{var} < {wrap(hi, BINARY['<'], strict=True)}"
        tree = isinstance(step, _SYNTAX_EXPR)
        if (step.value == 1 if isinstance(step, syntax.Const) else not tree and sympy.sympify(step) == 1):
            update = f"{var}++"
        else:
            update = f"{var} += {self.expr(step) if tree else sym_c(step)}"
        return f"for ({ctype} {var} = {lo}; {cond}; {update})"

    def loop(self, head: str, body: list[str], depth: int) -> list[str]:
        pad = INDENT * depth
        pragma = [pad + "#pragma unroll 1"] if self.no_unroll else []
        return pragma + [f"{pad}{head} {{"] + body + [pad + "}"]


def print_expr(e) -> str:
    """One expression in C, with the default printer."""
    return CPrinter().expr(e)


class Names:
    """Fresh C identifiers: `stem`, else stem0, stem1, ... avoiding every name already taken."""

    def __init__(self, taken):
        self.taken = set(taken)

    def fresh(self, stem: str) -> str:
        name, n = stem, 0
        while name in self.taken:
            name, n = f"{stem}{n}", n + 1
        self.taken.add(name)
        return name


def unused(parameters: list[str], body: list[str]) -> list[str]:
    """`(void)x;` for each parameter (a C declaration) that the body never reads: a function of
    a fixed signature (every case's try function, every case's time model) then compiles
    without -Wunused-parameter under -Wextra."""
    used = identifiers(body)
    names = [_IDENT.findall(p)[-1] for p in parameters]
    return [f"(void){n};" for n in names if n not in used]


def identifiers(lines) -> set[str]:
    """The identifiers some C lines use, comments left out (to declare only what is read:
    nvcc warns about every local that is never referenced)."""
    return set(_IDENT.findall(_COMMENT.sub(" ", "\n".join(lines))))
