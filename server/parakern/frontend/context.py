"""What the schedule analysis needs to know about the file and the function around it."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from pycparser import c_ast

from parakern.source.diagnostics import Span
from parakern.frontend.preprocess import LABEL_PREFIX, Prepared
from parakern.frontend.spans import TokenIndex


@dataclass
class FileContext:
    prepared: Prepared
    index: TokenIndex
    source: str
    defines: dict          # name -> syntax.Expr or Diagnostic
    typedefs: dict         # name -> scalar type
    globals: dict          # name -> Symbol

    def text_of(self, span: Span) -> str:
        lines = self.source.split("\n")
        if span.line == span.end_line:
            return lines[span.line - 1][span.col - 1:span.end_col - 1]
        parts = [lines[span.line - 1][span.col - 1:]]
        parts += lines[span.line:span.end_line - 1]
        parts.append(lines[span.end_line - 1][:span.end_col - 1])
        return "\n".join(parts)


@dataclass
class FunctionContext:
    file: FileContext
    name: str
    param_names: set
    global_names: set
    # name -> positions (line, col) where the function assigns it (=, op=, ++, --)
    assigned: dict = field(default_factory=dict)
    # (start, end) positions of every loop in the function
    loops: list = field(default_factory=list)
    span: "Span | None" = None  # the whole definition
    # names whose address the function takes (`&s`): a pointer or a call may change them anywhere
    address_taken: set = field(default_factory=set)
    # positions of the function's own labels (a goto may reach the code after them from anywhere)
    labels: list = field(default_factory=list)
    # positions of the calls it makes (but assert's): each may change any global variable
    calls: list = field(default_factory=list)

    def changed_between(self, name: str, start: tuple, here: tuple) -> bool:
        """Whether `name` may change between a definition at `start` and the schedule at `here`:
        assigned in between, or inside a loop that contains the schedule but not the definition,
        or through its address, which the function takes; a global, by a call made there."""
        if name in self.address_taken:
            return True
        changes = list(self.assigned.get(name, ())) + (self.calls if name in self.global_names else [])
        for pos in changes:
            if start < pos < here:
                return True
            for lo, hi in self.loops:
                if lo <= here <= hi and lo <= pos <= hi and not (lo <= start <= hi):
                    return True
        return False

    def jumped_into(self, start: tuple, here: tuple) -> bool:
        """Whether a label lies between `start` and the schedule at `here`: a goto may reach the
        schedule without passing what `start` holds (an assert, an if that returns)."""
        return any(start < pos < here for pos in self.labels)


# what an object-like macro's text assigns (`#define RESET (s = 0)`, `s += 2`, `s++`, `--s`)
_MACRO_WRITES = re.compile(r"([A-Za-z_]\w*)\s*(?:<<|>>|[-+*/%&|^])?=(?!=)|([A-Za-z_]\w*)\s*(?:\+\+|--)"
                           r"|(?:\+\+|--)\s*([A-Za-z_]\w*)")


def collect_writes(body, index: TokenIndex, fctx: FunctionContext) -> None:
    """Fills `assigned` and `loops` for the function body. Iterative: a sum of many terms
    is a tree as deep as it is long, and must not cost the recursion limit."""
    macros = {d.name: d.value for d in fctx.file.prepared.defines}
    pending = [body]
    while pending:
        node = pending.pop()
        if isinstance(node, c_ast.ID) and node.name in macros and node.coord is not None:
            for m in _MACRO_WRITES.finditer(re.sub(r"[<>!=]=", " ", macros[node.name])):
                name = next(g for g in m.groups() if g)
                fctx.assigned.setdefault(name, []).append((node.coord.line, node.coord.column))
        if isinstance(node, c_ast.Assignment):
            _record(fctx, node.lvalue)
        elif isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--"):
            _record(fctx, node.expr)
        elif isinstance(node, c_ast.UnaryOp) and node.op == "&" and isinstance(node.expr, c_ast.ID):
            fctx.address_taken.add(node.expr.name)
        elif isinstance(node, c_ast.Label) and not node.name.startswith(LABEL_PREFIX) and node.coord is not None:
            fctx.labels.append((node.coord.line, node.coord.column))
        elif isinstance(node, c_ast.FuncCall) and node.coord is not None and \
                not (isinstance(node.name, c_ast.ID) and node.name.name == "assert"):
            fctx.calls.append((node.coord.line, node.coord.column))
        elif isinstance(node, (c_ast.For, c_ast.While, c_ast.DoWhile)):
            first = index.tokens[index.first(node)]
            # a do-while ends at its condition, after the body (index.last stops at the `do`)
            last = index.tokens[max(index.last(part) for part in (node, node.stmt, node.cond) if part is not None)]
            fctx.loops.append(((first.line, first.col), (last.line, last.col)))
        pending.extend(child for _, child in reversed(node.children()))


def _record(fctx: FunctionContext, target) -> None:
    while isinstance(target, c_ast.ArrayRef):
        target = target.name
    if isinstance(target, c_ast.ID) and target.coord is not None:
        fctx.assigned.setdefault(target.name, []).append((target.coord.line, target.coord.column))


_EXPRESSIONS = (c_ast.BinaryOp, c_ast.UnaryOp, c_ast.TernaryOp, c_ast.Assignment, c_ast.FuncCall,
                c_ast.ArrayRef, c_ast.Cast, c_ast.ExprList)


def nesting_too_deep(node, limit: int):
    """Where the tree under `node` goes more than `limit` levels deep: the outermost
    expression around that place (or the statement, for nested statements); None when it
    does not. Iterative, however deep the tree."""
    pending = [(node, 0, None)]
    while pending:
        current, depth, outermost = pending.pop()
        if outermost is None and isinstance(current, _EXPRESSIONS):
            outermost = current
        if depth > limit:
            return outermost or current
        pending.extend((child, depth + 1, outermost) for _, child in current.children())
    return None


def identifiers(node):
    """Every c_ast.ID under a pycparser node, in order."""
    return _under(node, c_ast.ID)


def declarations(node):
    """Every named c_ast.Decl under a pycparser node (loop variables, locals), in order."""
    return (d for d in _under(node, c_ast.Decl) if d.name)


def _under(node, kind):
    if isinstance(node, kind):
        yield node
    for _, child in node.children():
        yield from _under(child, kind)
