"""Exact source ranges for pycparser nodes.

pycparser records only where a node starts. The end is found from the token
list of the (length-preserving) rewritten text: the matching bracket of a
subscript or call, the last token of an operand, the `;` of a statement.
"""
from __future__ import annotations

import bisect

from pycparser import c_ast

from parakern.source.diagnostics import Span
from parakern.frontend.preprocess import Token

_OPEN = {"(": ")", "[": "]", "{": "}"}


class TokenIndex:
    def __init__(self, tokens: tuple[Token, ...], file: str):
        self.tokens = tokens
        self.file = file
        self.keys = [(t.line, t.col) for t in tokens]
        self._match = self._pair_brackets()

    def _pair_brackets(self) -> dict[int, int]:
        match, stack = {}, []
        for i, tok in enumerate(self.tokens):
            if tok.kind != "punct":
                continue
            if tok.text in _OPEN:
                stack.append(i)
            elif tok.text in (")", "]", "}"):
                # Pop to the nearest opener of the same kind; mismatches stay unpaired.
                for depth in range(len(stack) - 1, -1, -1):
                    if _OPEN[self.tokens[stack[depth]].text] == tok.text:
                        match[stack[depth]] = i
                        match[i] = stack[depth]
                        del stack[depth:]
                        break
        return match

    def at(self, line: int, col: int) -> int:
        """Index of the first token starting at or after (line, col)."""
        return min(bisect.bisect_left(self.keys, (line, col)), len(self.tokens) - 1)

    def before(self, line: int, col: int) -> int:
        """Index of the last token ending at or before (line, col); -1 if none."""
        return bisect.bisect_left(self.keys, (line, col)) - 1

    def matching(self, i: int) -> "int | None":
        return self._match.get(i)

    def span(self, first: int, last: int) -> Span:
        a, b = self.tokens[first], self.tokens[last]
        return Span(self.file, a.line, a.col, b.line, b.end_col)

    def next_text(self, line: int, col: int, text: str) -> "int | None":
        """Index of the next token with this text at or after (line, col)."""
        for i in range(self.at(line, col), len(self.tokens)):
            if self.tokens[i].text == text:
                return i
        return None

    # ------------------------------------------------------------ node ranges

    def first(self, node) -> int:
        """Token index where a node starts. Iterative along the left operands: a sum of
        many terms nests as deep as it is long."""
        wrapped = []            # operands whose enclosing parentheses belong to their parent
        while True:
            if isinstance(node, (c_ast.BinaryOp, c_ast.Assignment)):
                node = node.left if isinstance(node, c_ast.BinaryOp) else node.lvalue
                wrapped.append(node)
            elif isinstance(node, (c_ast.ArrayRef, c_ast.FuncCall)):
                node = node.name
            elif isinstance(node, c_ast.UnaryOp) and node.op in ("p++", "p--"):
                node = node.expr
            elif isinstance(node, c_ast.TernaryOp):
                node = node.cond
                wrapped.append(node)
            else:
                break
        index = self._own_first(node)
        for operand in reversed(wrapped):
            index = self._widened(index, self.last(operand))[0]
        return index

    def _own_first(self, node) -> int:
        if isinstance(node, c_ast.Decl):
            # A declaration starts at its type, which pycparser places on the inner type node.
            inner = node.type
            while getattr(inner, "type", None) is not None and not isinstance(inner, c_ast.IdentifierType):
                inner = inner.type
            coords = [c for c in (getattr(inner, "coord", None), node.coord) if c is not None]
            if coords:
                coord = min(coords, key=lambda c: (c.line, c.column))
                return self.at(coord.line, coord.column)
        coord = node.coord
        if coord is None:   # pycparser gives some nodes none (a designated initializer's `[1] = 3`)
            coord = _first_coord(node)
            if coord is None:
                raise ValueError(f"no source position in {type(node).__name__}")
        return self.at(coord.line, coord.column)

    def last(self, node) -> int:
        """Token index where a node ends (inclusive)."""
        if isinstance(node, c_ast.ID):
            return self.first(node)
        if isinstance(node, c_ast.Constant):
            return self.first(node)
        if isinstance(node, (c_ast.ArrayRef, c_ast.FuncCall)):
            opener = "[" if isinstance(node, c_ast.ArrayRef) else "("
            i = self.last(node.name) + 1
            while i < len(self.tokens) and self.tokens[i].text != opener:
                i += 1
            close = self.matching(i) if i < len(self.tokens) else None
            return close if close is not None else len(self.tokens) - 1
        if isinstance(node, c_ast.BinaryOp):
            return self.wrap(node.right)[1]
        if isinstance(node, c_ast.Assignment):
            return self.wrap(node.rvalue)[1]
        if isinstance(node, c_ast.UnaryOp):
            if node.op in ("p++", "p--"):
                return self.wrap(node.expr)[1] + 1
            if node.op == "sizeof":
                return self.wrap(node.expr)[1]
            return self.wrap(node.expr)[1]
        if isinstance(node, c_ast.Cast):
            return self.wrap(node.expr)[1]
        if isinstance(node, c_ast.TernaryOp):
            return self.wrap(node.iffalse)[1]
        if isinstance(node, c_ast.Compound):
            close = self.matching(self.first(node))
            return close if close is not None else len(self.tokens) - 1
        if isinstance(node, (c_ast.For, c_ast.While)):
            return self.last_stmt(node.stmt)
        if isinstance(node, c_ast.If):
            return self.last_stmt(node.iffalse if node.iffalse is not None else node.iftrue)
        if isinstance(node, c_ast.Label):
            return self.last_stmt(node.stmt)
        if isinstance(node, c_ast.Goto):
            return self.first(node) + 1  # the label name
        if isinstance(node, c_ast.Return) and node.expr is not None:
            return self.wrap(node.expr)[1]
        if isinstance(node, c_ast.Decl):
            if node.init is not None:
                return self.wrap(node.init)[1]
            return self.at(node.coord.line, node.coord.column)
        return self.first(node)

    def last_stmt(self, node) -> int:
        """Like last(), but takes in the `;` that ends a simple statement."""
        end = self.last(node)
        if isinstance(node, (c_ast.Compound, c_ast.For, c_ast.While, c_ast.If, c_ast.Label)):
            return end
        if end + 1 < len(self.tokens) and self.tokens[end + 1].text == ";":
            return end + 1
        return end

    def wrap(self, node) -> tuple[int, int]:
        """(first, last) of an operand, widened over parentheses that enclose exactly it."""
        return self._widened(self.first(node), self.last(node))

    def _widened(self, first: int, last: int) -> tuple[int, int]:
        while (first > 0 and last + 1 < len(self.tokens)
               and self.tokens[first - 1].text == "("
               and self.matching(first - 1) == last + 1):
            first, last = first - 1, last + 1
        return first, last

    def node_span(self, node) -> Span:
        return self.span(self.first(node), self.last(node))

    def name_span(self, decl) -> Span:
        """The token of the name a c_ast.Decl declares (the declaration's own span where it
        cannot be found)."""
        whole = self.node_span(decl)
        i = self.next_text(whole.line, whole.col, decl.name)
        return whole if i is None else self.span(i, i)

    def stmt_span(self, node) -> Span:
        return self.span(self.first(node), self.last_stmt(node))

    def header_at(self, keyword: Span) -> Span:
        """From a loop keyword to the `)` closing its header."""
        kw = self.at(keyword.line, keyword.col)
        close = self.matching(kw + 1) if kw + 1 < len(self.tokens) else None
        end = self.tokens[close] if close is not None else self.tokens[kw]
        return Span(self.file, keyword.line, keyword.col, end.line, end.end_col)

    def for_header(self, node: c_ast.For) -> Span:
        """From the `for` keyword to the `)` closing its header."""
        kw = self.first(node)
        close = self.matching(kw + 1) if kw + 1 < len(self.tokens) else None
        return self.span(kw, close if close is not None else kw)


def _first_coord(node):
    """The earliest position among a node's descendants (the node has none of its own)."""
    coords = []
    for _, child in node.children():
        coord = getattr(child, "coord", None) or _first_coord(child)
        if coord is not None:
            coords.append(coord)
    return min(coords, key=lambda c: (c.line, c.column)) if coords else None
