"""Canonical loop headers: `for (int v = lo; v < hi; v++)` and its variants."""
from __future__ import annotations

from pycparser import c_ast

from parakern import syntax
from parakern.frontend.ctypes import scalar_type_name

_FORM = "meta_for (int i = lo; i < hi; i++)"
_SERIAL_FORM = "for (int k = lo; k < hi; k += step)"


def canonical_header(conv, node: c_ast.For, parallel: bool):
    """(lo, hi, step, var, ctype, down) as syntax expressions; reports what breaks the form.

    meta_for: one int variable declared in the init, `<` bound, `++` or `+= 1`.
    Serial loops may also use `<=` (normalised to `< hi + 1`) and `+= step`, or count down:
    `for (int i = start; i >= last; i -= step)` (or `> last`, `i--`), then `down` is True and
    (lo, hi, step) are (start, last, step): convert.Converter.loop makes it a count-up loop.
    """
    code = "PK003" if parallel else "PK015"
    form = _FORM if parallel else _SERIAL_FORM
    kind = "meta_for" if parallel else "a serial for loop inside meta_schedule"
    header = conv.index.for_header(node)
    zero = syntax.Const(0, "int", header, "0")
    one = syntax.Const(1, "int", header, "1")

    init = node.init
    decls = init.decls if isinstance(init, c_ast.DeclList) else None
    if not decls or len(decls) != 1 or decls[0].init is None or not isinstance(decls[0].type, c_ast.TypeDecl):
        where = conv.span(init) if init is not None else header
        conv.fail(code, f"{kind} must declare exactly one integer variable with a start value: {form}",
                  where)
        return zero, zero, one, "?", "int", False
    decl = decls[0]
    var = decl.name
    ctype = _decl_type(conv, decl)
    if ctype not in syntax.INTEGER_TYPES:
        conv.fail(code, f"the variable of {kind} must be an integer (int, unsigned or long), "
                  f"not {ctype or 'this type'}", conv.index.node_span(decl))
    lo = conv.expr(decl.init)

    cond = node.cond
    allowed = ("<",) if parallel else ("<", "<=", ">=", ">")
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op in allowed
            and isinstance(cond.left, c_ast.ID) and cond.left.name == var):
        where = conv.span(cond) if cond is not None else header
        bound = "'<'" if parallel else "'<' or '<=' (or, counting down, '>=' or '>')"
        conv.fail(code, f"the condition of {kind} must compare its variable '{var}' with {bound} "
                  f"to a bound: {form}", where)
        return lo, zero, one, var, ctype, False
    if cond.op in (">=", ">"):
        return _down(conv, node, lo, var, ctype, code, kind)
    hi = conv.expr(cond.right)
    if cond.op == "<=":
        hi = syntax.Binary("+", hi, syntax.Const(1, "int", hi.span, "1"),
                           syntax.arithmetic_result(hi.ctype, "int"), hi.span)

    step = _step(conv, node.next, var, parallel)
    if step is None:
        where = conv.span(node.next) if node.next is not None else header
        what = "increment its variable by one ('++' or '+= 1')" if parallel else \
            "increment its variable ('++' or '+= step')"
        conv.fail(code, f"{kind} must {what}: {form}", where)
        return lo, hi, one, var, ctype, False
    if not _integers(conv, kind, code, lo, hi, step):
        return zero, zero, one, var, ctype, False
    return lo, hi, step, var, ctype, False


def _integers(conv, kind: str, code: str, lo, hi, step) -> bool:
    for what, expr in (("start", lo), ("bound", hi), ("step", step)):
        if expr.ctype not in syntax.INTEGER_TYPES:   # a float bound: CUDA's grid and trip counts are integers
            conv.fail(code, f"the {what} of {kind} is a {expr.ctype} expression; it must be an integer: "
                      f"convert it, (int)(...), or declare what it reads as int", expr.span)
            return False
    return True


def _down(conv, node: c_ast.For, start, var: str, ctype: str, code: str, kind: str):
    """A serial loop counting down (back substitution, Horner): (start, last, step, ..., True)."""
    zero = syntax.Const(0, "int", start.span, "0")
    one = syntax.Const(1, "int", start.span, "1")
    cond = node.cond
    last = conv.expr(cond.right)
    if cond.op == ">":   # i > b: the last value is b + 1
        last = syntax.Binary("+", last, syntax.Const(1, "int", last.span, "1"),
                             syntax.arithmetic_result(last.ctype, "int"), last.span)
    if ctype.startswith("unsigned"):   # i >= 0 always holds: C's loop would not end where ours does
        conv.fail(code, f"{kind} counting down must have a signed variable: '{var}' is {ctype}, "
                  "for which the test never fails at 0; declare it int or long", conv.span(cond))
        return zero, zero, one, var, ctype, False
    nxt = node.next
    step = None
    if isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("--", "p--") and \
            isinstance(nxt.expr, c_ast.ID) and nxt.expr.name == var:
        step = syntax.Const(1, "int", conv.span(nxt), "1")
    elif isinstance(nxt, c_ast.Assignment) and nxt.op == "-=" and \
            isinstance(nxt.lvalue, c_ast.ID) and nxt.lvalue.name == var:
        step = conv.expr(nxt.rvalue)
        step = step if syntax.is_integer(step.ctype) else None
    if step is None:
        where = conv.span(nxt) if nxt is not None else conv.index.for_header(node)
        conv.fail(code, f"{kind} counting down ('{cond.op}') must decrement its variable ('--' or '-= step'): "
                  f"for (int k = hi - 1; k >= lo; k--)", where)
        return zero, zero, one, var, ctype, False
    if not _integers(conv, kind, code, start, last, step):
        return zero, zero, one, var, ctype, False
    return start, last, step, var, ctype, True


def _decl_type(conv, decl) -> str:
    return scalar_type_name(decl.type, conv.typedefs)


def _step(conv, nxt, var: str, parallel: bool):
    if isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("++", "p++") and \
            isinstance(nxt.expr, c_ast.ID) and nxt.expr.name == var:
        return syntax.Const(1, "int", conv.span(nxt), "1")
    if isinstance(nxt, c_ast.Assignment) and nxt.op == "+=" and \
            isinstance(nxt.lvalue, c_ast.ID) and nxt.lvalue.name == var:
        if parallel:
            if isinstance(nxt.rvalue, c_ast.Constant) and nxt.rvalue.value == "1":
                return syntax.Const(1, "int", conv.span(nxt), "1")
            return None
        step = conv.expr(nxt.rvalue)
        return step if syntax.is_integer(step.ctype) else None
    return None
