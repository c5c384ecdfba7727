"""pycparser AST of a meta_schedule body -> frozen, typed `parakern.syntax` trees.

Every construct that cannot run in a kernel is reported here, at its exact
range, with what to write instead. Conversion goes on after an error (the
bad piece becomes a placeholder) so that one pass reports all of them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pycparser import c_ast, c_generator

from parakern import syntax
from parakern.source.diagnostics import Diagnostic, Related, Span, error
from parakern.frontend.ctypes import ScalarInfo, Symbol, scalar_type_name
from parakern.frontend.spans import TokenIndex
from parakern.frontend.loops import canonical_header

_ASSIGN_OPS = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="})
_BINARY_OPS = frozenset({"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "&&", "||",
                         "<", "<=", ">", ">=", "==", "!="})


@dataclass
class Scope:
    """Names visible inside the schedule, innermost last."""
    outer: dict[str, Symbol]                      # declared before the schedule
    frames: list[dict[str, ScalarInfo]] = field(default_factory=lambda: [{}])
    loop_vars: dict[str, Span] = field(default_factory=dict)

    def local(self, name: str) -> "ScalarInfo | None":
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        return None


class Converter:
    def __init__(self, index: TokenIndex, scope: Scope, defines: dict[str, "syntax.Expr | Diagnostic"],
                 meta_for: frozenset[tuple[int, int]], typedefs: "dict[str, str] | None" = None):
        self.index = index
        self.scope = scope
        self.defines = defines
        self.meta_for = meta_for
        self.typedefs = typedefs or {}
        self.diagnostics: list[Diagnostic] = []
        self.used_outer: dict[str, Span] = {}   # outer scalars read, first use
        self.assigned_locals: set[str] = set()
        # locals whose declaration was refused (already an error): their uses say nothing more
        self.refused: set[str] = set()
        self.declared: list[tuple[str, Span]] = []   # loop variables and locals, each name's token

    # ------------------------------------------------------------ utilities

    def span(self, node) -> Span:
        return self.index.node_span(node)

    def fail(self, code: str, message: str, span: Span, *related: Related) -> syntax.Const:
        self.diagnostics.append(error(code, message, span, *related))
        return syntax.Const(0, "int", span, "0")

    def is_meta_for(self, node) -> bool:
        return isinstance(node, c_ast.For) and (node.coord.line, node.coord.column) in self.meta_for

    # ---------------------------------------------------------- expressions

    def expr(self, node) -> syntax.Expr:
        method = getattr(self, "_expr_" + type(node).__name__, None)
        if method is None:
            hint = {"StructRef": ": pass the member to the function as a scalar or an array of its own",
                    "ExprList": ": write each expression as a statement of its own",
                    "CompoundLiteral": ": declare the value before the schedule",
                    "InitList": ": declare the array before the schedule",
                    "Typename": ": use the type in a declaration before the schedule"}.get(type(node).__name__, "")
            return self.fail("PK013", f"{_describe(node)} is not supported inside meta_schedule{hint}",
                             self.span(node))
        return method(node)

    def _expr_Constant(self, node: c_ast.Constant) -> syntax.Expr:
        span = self.span(node)
        text = node.value
        if node.type == "char":
            inner = text[1:-1]
            value = ord(inner[-1]) if inner else 0
            return syntax.Const(value, "int", span, text)
        if node.type == "string":
            return self.fail("PK013", "string literals cannot be used inside meta_schedule", span)
        lower = text.lower()
        try:
            if node.type in ("float", "double") or ("." in text or "e" in lower) and not lower.startswith("0x"):
                ctype = "float" if lower.endswith("f") else "double"
                return syntax.Const(float(lower.rstrip("fl")), ctype, span, text)
            digits = lower.rstrip("ul")
            value = int(digits, 0) if not (digits.startswith("0") and digits[1:].isdigit()) else int(digits, 8)
        except ValueError:
            return self.fail("PK013", f"cannot read the number '{text}'", span)
        suffix = lower[len(digits):]
        ctype = ("unsigned " if "u" in suffix else "") + ("long" if "l" in suffix else "int")
        return syntax.Const(value, ctype.replace("unsigned int", "unsigned"), span, text)

    def _expr_ID(self, node: c_ast.ID) -> syntax.Expr:
        span = self.span(node)
        name = node.name
        if name in self.scope.loop_vars:
            return syntax.Var(name, "int", span)
        local = self.scope.local(name)
        if local is not None:
            return syntax.Var(name, local.ctype, span)
        if name in self.refused:
            return syntax.Const(0, "int", span, "0")
        symbol = self.scope.outer.get(name)
        if symbol is not None:
            if symbol.is_array:
                return self.fail("PK013", f"array '{name}' is used without a subscript; inside "
                                 "meta_schedule arrays can only be indexed", span)
            if symbol.ctype not in syntax.SCALAR_TYPES:
                return self.fail("PK011", f"'{name}' has type {symbol.ctype}, which kernels here do "
                                 f"not support; use one of {', '.join(syntax.SCALAR_TYPES)}", span)
            self.used_outer.setdefault(name, span)
            return syntax.Var(name, symbol.ctype, span)
        if name in self.defines:
            value = self.defines[name]
            if isinstance(value, Diagnostic):
                self.diagnostics.append(value)
                return syntax.Const(0, "int", span, "0")
            return _respan(value, span)
        return self.fail("PK010", f"'{name}' is not declared before this meta_schedule", span)

    def _expr_ArrayRef(self, node: c_ast.ArrayRef) -> syntax.Expr:
        subscripts = []
        base = node
        while isinstance(base, c_ast.ArrayRef):
            subscripts.append(base.subscript)
            base = base.name
        subscripts.reverse()
        span = self.span(node)
        if not isinstance(base, c_ast.ID):
            return self.fail("PK013", "only named arrays can be indexed inside meta_schedule", span)
        name = base.name
        symbol = self.scope.outer.get(name)
        if name in self.refused and self.scope.local(name) is None:
            return syntax.Const(0, "int", span, "0")
        if self.scope.local(name) is not None or name in self.scope.loop_vars:
            return self.fail("PK012", f"'{name}' is a scalar and cannot be indexed", span)
        if symbol is None:
            return self.fail("PK010", f"array '{name}' is not declared before this meta_schedule",
                             self.span(base))
        if not symbol.is_array:
            return self.fail("PK012", f"'{name}' is a scalar and cannot be indexed", span)
        if symbol.ctype not in syntax.SCALAR_TYPES:
            return self.fail("PK011", f"array '{name}' has element type {symbol.ctype}; kernels here "
                             f"support {', '.join(syntax.SCALAR_TYPES)}", self.span(base))
        if symbol.dims and symbol.dims[0] is None and symbol.rank >= 2:
            rows = "".join(f"[{c_generator.CGenerator().visit(d)}]" for d in symbol.dims[1:])
            self.refused.add(name)   # said once, at its first access
            return self.fail("PK012", f"the number of rows of '{name}' is not declared: declare it with "
                             f"every extent ({symbol.ctype} {name}[ROWS]{rows}): the kernels flatten it and "
                             "check its tiles against its rows", self.span(base),
                             Related(symbol.span, f"'{name}' is declared here"))
        if len(subscripts) != symbol.rank:
            if symbol.is_pointer:
                message = (f"'{name}' is a pointer: index it with one linear subscript "
                           f"({name}[i * N + j]) or declare it as an array parameter "
                           f"({symbol.ctype} {name}[N][N])")
            else:
                message = (f"'{name}' has {symbol.rank} dimension{'s' * (symbol.rank != 1)} but is "
                           f"indexed with {len(subscripts)} subscript{'s' * (len(subscripts) != 1)}")
            return self.fail("PK012", message, span, Related(symbol.span, f"'{name}' is declared here"))
        indices = tuple(self.expr(s) for s in subscripts)
        for sub, idx in zip(subscripts, indices):
            if not syntax.is_integer(idx.ctype):
                self.fail("PK013", "an array subscript must be an integer expression", self.span(sub))
        return syntax.Index(name, indices, symbol.ctype, span, self.span(base))

    def _expr_BinaryOp(self, node: c_ast.BinaryOp) -> syntax.Expr:
        span = self.span(node)
        if node.op not in _BINARY_OPS:
            return self.fail("PK013", f"operator '{node.op}' is not supported", span)
        left, right = self.expr(node.left), self.expr(node.right)
        if node.op in syntax.COMPARISONS or node.op in syntax.LOGICAL:
            ctype = "int"
        elif node.op in ("<<", ">>"):
            ctype = left.ctype
        else:
            ctype = syntax.arithmetic_result(left.ctype, right.ctype)
        if node.op in ("%", "<<", ">>", "&", "|", "^") and not syntax.is_integer(ctype):
            return self.fail("PK013", f"operator '{node.op}' needs integer operands", span)
        return syntax.Binary(node.op, left, right, ctype, span)

    def _expr_UnaryOp(self, node: c_ast.UnaryOp) -> syntax.Expr:
        span = self.span(node)
        if node.op in ("++", "--", "p++", "p--"):
            return self.fail("PK013", f"'{node.op.lstrip('p')}' inside an expression is not supported; "
                             "write the increment as a statement of its own", span)
        if node.op not in ("-", "+", "!", "~"):
            what = {"*": "pointer dereference", "&": "taking an address", "sizeof": "sizeof"}
            hint = {"*": ": index the array instead (p[i], not *(p + i))",
                    "&": ": pass the array and index it inside the schedule",
                    "sizeof": ": compute it before the schedule (int bytes = sizeof(float);) and use that"}
            return self.fail("PK013", f"{what.get(node.op, repr(node.op))} is not supported inside "
                             f"meta_schedule{hint.get(node.op, '')}", span)
        operand = self.expr(node.expr)
        ctype = "int" if node.op == "!" else operand.ctype
        if node.op == "~" and not syntax.is_integer(ctype):
            return self.fail("PK013", "'~' needs an integer operand", span)
        return syntax.Unary(node.op, operand, ctype, span)

    def _expr_TernaryOp(self, node: c_ast.TernaryOp) -> syntax.Expr:
        cond, then, other = self.expr(node.cond), self.expr(node.iftrue), self.expr(node.iffalse)
        return syntax.Ternary(cond, then, other, syntax.arithmetic_result(then.ctype, other.ctype),
                              self.span(node))

    def _expr_Cast(self, node: c_ast.Cast) -> syntax.Expr:
        ctype = scalar_type_name(node.to_type.type, self.typedefs)
        span = self.span(node)
        if ctype not in syntax.SCALAR_TYPES:
            return self.fail("PK011", f"cast to {ctype or 'this type'} is not supported; cast to one "
                             f"of {', '.join(syntax.SCALAR_TYPES)}", span)
        return syntax.Cast(ctype, self.expr(node.expr), span)

    def _expr_FuncCall(self, node: c_ast.FuncCall) -> syntax.Expr:
        span = self.span(node)
        name = node.name.name if isinstance(node.name, c_ast.ID) else None
        if name not in syntax.MATH_FUNCTIONS:
            shown = name or "this function"
            return self.fail("PK007", f"call to '{shown}' cannot be offloaded: only <math.h> functions "
                             f"(sqrt, exp, log, sin, pow, fmod, atan2, erf, fmin, ... and their float "
                             f"versions: {len(syntax.MATH_ARITY)} in all), abs, min and max may be called "
                             "inside meta_schedule", span)
        args = tuple(self.expr(a) for a in (node.args.exprs if node.args else ()))
        double = syntax.math_double_name(name)
        arity = syntax.MATH_ARITY.get(double, 1 if name == "abs" else 2)
        if len(args) != arity:
            return self.fail("PK013", f"'{name}' takes {arity} argument{'s' * (arity != 1)}, "
                             f"here {len(args)}", span)
        if name in ("abs",):
            ctype = "int"
        elif name in ("min", "max"):
            ctype = args[0].ctype
            for arg in args[1:]:
                ctype = syntax.arithmetic_result(ctype, arg.ctype)
        elif name == double:
            ctype = "double"
        else:
            ctype = "float"
        return syntax.Call(name, args, ctype, span)

    def _expr_Assignment(self, node: c_ast.Assignment) -> syntax.Expr:
        return self.fail("PK013", "an assignment inside an expression is not supported; write it as "
                         "a statement of its own", self.span(node))

    # ----------------------------------------------------------- statements

    def block(self, node) -> syntax.Block:
        """A statement as a Block (a compound opens a new scope)."""
        if isinstance(node, c_ast.Compound):
            self.scope.frames.append({})
            stmts = []
            for item in node.block_items or ():
                stmts.extend(self.stmt(item))
            self.scope.frames.pop()
            return syntax.Block(tuple(stmts), self.index.stmt_span(node))
        return syntax.Block(tuple(self.stmt(node)), self.index.stmt_span(node))

    def stmt(self, node) -> list[syntax.Stmt]:
        if isinstance(node, c_ast.Compound):
            return [self.block(node)]
        if isinstance(node, c_ast.Decl):
            return self.decl(node)
        if isinstance(node, c_ast.DeclList):
            return [d for decl in node.decls for d in self.decl(decl)]
        if isinstance(node, c_ast.Assignment):
            return [self.assignment(node)]
        if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--"):
            target = self.lvalue(node.expr)
            one = syntax.Const(1, "int", self.span(node), "1")
            op = "+=" if "+" in node.op else "-="
            return [syntax.Assign(target, op, one, self.index.stmt_span(node))]
        if isinstance(node, c_ast.If):
            cond = self.expr(node.cond)
            then = self.block(node.iftrue)
            other = self.block(node.iffalse) if node.iffalse is not None else None
            return [syntax.If(cond, then, other, self.index.stmt_span(node))]
        if isinstance(node, c_ast.For):
            return [self.loop(node, parallel=self.is_meta_for(node))]
        if isinstance(node, c_ast.EmptyStatement):
            return []
        if isinstance(node, (c_ast.Goto, c_ast.Return, c_ast.Break)):
            word = type(node).__name__.lower()
            advice = {"goto": "restructure with if statements",
                      "return": "a kernel thread cannot return from the host function; use an if",
                      "break": "loops in a kernel must run their full trip count; use a guard"}
            self.fail("PK008", f"'{word}' is not allowed inside meta_schedule: {advice[word]}",
                      self.index.stmt_span(node))
            return []
        if isinstance(node, c_ast.Label) and node.name.startswith("__pkms"):
            label = self.index.tokens[self.index.first(node)]
            self.fail("PK014", "meta_schedule cannot be nested inside another meta_schedule",
                      Span.point(self.index.file, label.line, label.col, len("meta_schedule")))
            return []
        if isinstance(node, c_ast.FuncCall):
            self.expr(node)  # reports unsupported calls; a bare math call has no effect
            return []
        names = {"While": "while loops", "DoWhile": "do-while loops", "Switch": "switch statements",
                 "Continue": "continue", "Label": "labels", "Typedef": "typedefs"}
        what = names.get(type(node).__name__, _describe(node))
        hints = {"Continue": " (put the rest of the loop's body under an if instead)",
                 "Switch": " (use if / else if)", "Label": " (write the control flow with if and for)",
                 "Typedef": " (declare the typedef outside the function)"}
        hint = " (use a for loop in canonical form)" if "while" in what else hints.get(type(node).__name__, "")
        self.fail("PK013", f"{what} are not supported inside meta_schedule{hint}"
                  if what.endswith("s") else f"{what} is not supported inside meta_schedule{hint}",
                  self.index.stmt_span(node))
        return []

    def declare(self, decl: c_ast.Decl) -> None:
        """Records a loop variable or a local (schedule.py checks them against the names read from
        outside the block); one named like the variable of an enclosing loop is refused: C lets it
        hide that variable, but a nest is one kernel, whose threads' variables share one scope
        (CUDA: "ty" has already been declared), and the analysis knows a loop variable by its name."""
        name = self.index.name_span(decl)
        self.declared.append((decl.name, name))
        enclosing = self.scope.loop_vars.get(decl.name)
        if enclosing is not None:
            self.fail("PK024", f"'{decl.name}' is already the variable of an enclosing loop, which this "
                      "declaration would hide: the loops of a meta_schedule become one kernel; rename this one",
                      name, Related(enclosing, f"the loop of '{decl.name}' is here"))

    def decl(self, node: c_ast.Decl) -> list[syntax.Stmt]:
        span = self.index.node_span(node) if node.init is None else \
            self.index.span(self.index.first(node), self.index.wrap(node.init)[1])
        self.declare(node)
        if not isinstance(node.type, c_ast.TypeDecl):
            self.fail("PK013", f"local arrays and pointers ('{node.name}') are not supported inside "
                      "meta_schedule; declare scalars only", span)
            self.refused.add(node.name)
            return []
        ctype = scalar_type_name(node.type, self.typedefs)
        if ctype not in syntax.SCALAR_TYPES:
            self.fail("PK011", f"local '{node.name}' has type {ctype or 'unknown'}; use one of "
                      f"{', '.join(syntax.SCALAR_TYPES)}", span)
            self.refused.add(node.name)
            return []
        init = None
        if node.init is not None:
            if isinstance(node.init, c_ast.InitList):
                self.fail("PK013", "initializer lists are not supported for scalars", span)
            else:
                init = self.expr(node.init)
        self.scope.frames[-1][node.name] = ScalarInfo(node.name, ctype, span)
        return [syntax.Decl(node.name, ctype, init, span)]

    def lvalue(self, node) -> "syntax.Var | syntax.Index":
        span = self.span(node)
        if isinstance(node, c_ast.ID):
            name = node.name
            if name in self.scope.loop_vars:
                self.fail("PK017", f"'{name}' is a loop variable and cannot be assigned in the loop "
                          "body", span, Related(self.scope.loop_vars[name], "the loop is here"))
                return syntax.Var(name, "int", span)
            local = self.scope.local(name)
            if local is not None:
                self.assigned_locals.add(name)
                return syntax.Var(name, local.ctype, span)
            if name in self.scope.outer and not self.scope.outer[name].is_array:
                self.fail("PK004", f"cannot assign to '{name}' inside meta_schedule: scalars from "
                          "outside the block are parameters, read-only on the GPU; declare a local "
                          "variable inside the block instead", span,
                          Related(self.scope.outer[name].span, f"'{name}' is declared here"))
                return syntax.Var(name, self.scope.outer[name].ctype, span)
            result = self.expr(node)
            return result if isinstance(result, syntax.Var) else syntax.Var(name, "int", span)
        if isinstance(node, c_ast.ArrayRef):
            result = self.expr(node)
            if isinstance(result, syntax.Index):
                return result
            return syntax.Var("?", "int", span)
        self.fail("PK013", "only scalars and array elements can be assigned", span)
        return syntax.Var("?", "int", span)

    def assignment(self, node: c_ast.Assignment) -> syntax.Assign:
        span = self.index.stmt_span(node)
        if node.op not in _ASSIGN_OPS:
            self.fail("PK013", f"assignment operator '{node.op}' is not supported", span)
        target = self.lvalue(node.lvalue)
        value = self.expr(node.rvalue)
        return syntax.Assign(target, node.op, value, span)

    def loop(self, node: c_ast.For, parallel: bool) -> syntax.Loop:
        """A canonical for loop; meta_for must be `int v = lo; v < hi; v++`."""
        header = canonical_header(self, node, parallel)
        lo, hi, step, var, ctype, down = header
        if var != "?":
            self.declare(node.init.decls[0])
        keyword = self.index.span(self.index.first(node), self.index.first(node))
        if parallel:
            keyword = Span(keyword.file, keyword.line, keyword.col, keyword.line, keyword.col + 8)
        shadowed = self.scope.loop_vars.get(var)
        self.scope.loop_vars[var] = keyword
        self.scope.frames.append({})
        body = self.block(node.stmt)
        self.scope.frames.pop()
        if shadowed is None:
            del self.scope.loop_vars[var]
        else:
            self.scope.loop_vars[var] = shadowed
        if down:
            return _counting_up(node, var, ctype, lo, hi, step, body, self.index.stmt_span(node), keyword)
        return syntax.Loop(var, ctype, lo, hi, step, body, parallel, self.index.stmt_span(node), keyword)


def _counting_up(node: c_ast.For, var: str, ctype: str, start, last, step, body, span: Span, keyword: Span):
    """`for (int i = start; i >= last; i -= step) body` as the count-up loop every stage reads:
    `for (int i_down = 0; i_down < (start - last + step)/step; i_down++) { int i = start - step*i_down;
    body }`, the same values of i in the same order (C's / truncates: no trip where start < last).
    Writes to i in the body were refused (PK017) while it was converted as the loop's variable."""
    new = _fresh(f"{var}_down", node)
    one = isinstance(step, syntax.Const) and step.value == 1
    integer = syntax.arithmetic_result(start.ctype, last.ctype)
    count = syntax.Binary("+", syntax.Binary("-", start, last, integer, span), step, integer, span)
    if not one:
        count = syntax.Binary("/", count, step, integer, span)
    counter = syntax.Var(new, ctype, keyword)
    value = syntax.Binary("-", start, counter if one else syntax.Binary("*", step, counter, integer, span),
                          syntax.arithmetic_result(start.ctype, ctype), span)
    body = syntax.Block((syntax.Decl(var, ctype, value, keyword),) + body.stmts, body.span)
    zero = syntax.Const(0, "int", keyword, "0")
    return syntax.Loop(new, ctype, zero, count, syntax.Const(1, "int", keyword, "1"), body, False, span, keyword)


def _fresh(name: str, node) -> str:
    """`name`, or with underscores added until no identifier of the loop has it."""
    taken = {getattr(n, "name", None) for _, n in _c_nodes(node)}
    while name in taken:
        name += "_"
    return name


def _c_nodes(node):
    yield None, node
    for item in node.children():
        yield from _c_nodes(item[1])


def _describe(node) -> str:
    names = {"StructRef": "struct member access", "ExprList": "the comma operator",
             "CompoundLiteral": "compound literals", "InitList": "initializer lists",
             "Typename": "type names", "Pragma": "#pragma"}
    return names.get(type(node).__name__, f"'{type(node).__name__}'")


def _respan(expr, span: Span):
    """A #define's expression placed at its use site."""
    import dataclasses
    changes = {"span": span}
    for f in dataclasses.fields(expr):
        value = getattr(expr, f.name)
        if f.name == "indices" or f.name == "args":
            changes[f.name] = tuple(_respan(v, span) for v in value)
        elif dataclasses.is_dataclass(value) and not isinstance(value, Span):
            changes[f.name] = _respan(value, span)
        elif f.name == "array_span":
            changes[f.name] = span
    return dataclasses.replace(expr, **changes)
