"""Reads of an element the same thread has just written: no staging copy needs to load it.

2mm's `tmp[i][j] = 0; for (k ...) tmp[i][j] += ...` (or its accumulator `float tmp_acc =
tmp[i][j];` after the `= 0`) reads only what the thread wrote first. Walking the per-thread
body in order, an element is *written* after an unguarded store `A[s] = ...` with exact
subscripts, until the end of the enclosing block (a store inside an `if` or a loop does not
count after it: the branch may not run, the loop may run zero times; within a loop's body it
counts for the rest of that iteration, where the loop's variable keeps its value). A read of
an element written so, at the same subscripts as polynomials (locals substituted, so they
name the same values), reads the thread's own value. Another thread cannot have written the
element in between: meta_for iterations are independent.
"""
from __future__ import annotations

import sympy

from parakern import syntax
from parakern.model import Schedule


def written_first(schedule: Schedule) -> frozenset[int]:
    """Positions in schedule.accesses of the reads that only read what the thread wrote first."""
    by_node: dict = {}
    for i, a in enumerate(schedule.accesses):
        by_node.setdefault((a.array, a.span), []).append(i)
    covered: set[int] = set()
    _Walk(schedule, by_node, covered).block(schedule.body, frozenset())
    return frozenset(covered)


class _Walk:
    def __init__(self, schedule: Schedule, by_node: dict, covered: set):
        self.s = schedule
        self.by_node = by_node
        self.covered = covered

    def element(self, node: syntax.Index, write: bool):
        """(array, subscripts) of the access at this node, or None when not exact."""
        for i in self.by_node.get((node.array, node.span), ()):
            a = self.s.accesses[i]
            if a.exact and (a.is_write if write else a.is_read):
                return a.array, tuple(sympy.expand(x) for x in a.indices)
        return None

    def read(self, node: syntax.Index, written: frozenset) -> None:
        found = self.element(node, write=False)
        if found is not None and found in written:
            self.covered.update(i for i in self.by_node[(node.array, node.span)] if self.s.accesses[i].is_read)

    def expr(self, e, written: frozenset) -> None:
        for node in syntax.walk(e):
            if isinstance(node, syntax.Index):
                self.read(node, written)

    def block(self, block: syntax.Block, written: frozenset) -> None:
        for stmt in block.stmts:
            written = self.stmt(stmt, written)

    def stmt(self, stmt, written: frozenset) -> frozenset:
        """The elements written after the statement."""
        if isinstance(stmt, syntax.Block):
            self.block(stmt, written)
            return written
        if isinstance(stmt, syntax.Decl):
            if stmt.init is not None:
                self.expr(stmt.init, written)
            return written
        if isinstance(stmt, syntax.Assign):
            self.expr(stmt.value, written)
            if isinstance(stmt.target, syntax.Index):
                for index in stmt.target.indices:
                    self.expr(index, written)
                if stmt.op != "=":
                    self.read(stmt.target, written)
                found = self.element(stmt.target, write=True)
                if found is not None:
                    return written | {found}
            return written
        if isinstance(stmt, syntax.If):
            self.expr(stmt.cond, written)
            self.block(stmt.then, written)
            if stmt.other is not None:
                self.block(stmt.other, written)
            return written
        if isinstance(stmt, syntax.Loop):
            for bound in (stmt.lo, stmt.hi, stmt.step):
                self.expr(bound, written)
            self.block(stmt.body, written)
            return written
        return written
