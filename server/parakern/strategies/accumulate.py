"""(5) Register accumulators: an array element that one thread reads and writes at the same
index on every iteration of a serial loop lives in a register for that loop.

    for (int z = 0; z < B0; z++)             int x = w * ub1;
        c[p][q + x] += a[..] * b[..];   ->   float c_acc = c[p][q + x];
                                             for (int z = 0; z < B0; z++)
                                                 c_acc += a[..] * b[..];
                                             c[p][q + x] = c_acc;

Global (or shared) memory then sees one load and one store of the element per execution of
the loop instead of one of each per iteration, and the loop's iterations no longer wait for
a store to reach L2 before the next load: PPCG's `private_c`, the paper's Fig. 2.

Where the element's index varies with an inner serial loop but not with the loop around it
(matmul: `for z { for w { c[p][q + w * ub1] += ... } }`), the two loops are interchanged
first when z3 proves it legal (no two iterations of the nest touch one element, one of them
writing, in the order the interchange reverses); the order in which each element's terms are
added is unchanged, so the result is the serial C's to the bit (up to FMA contraction).

An element other threads update at the same time with atomics (analysis/updates.py: a
histogram bin, q[t % 4] += x[...]) cannot be loaded and stored: the loop's additions are summed
in a register from 0 instead, and added to the element with one atomic after the loop (one
atomic per thread and loop instead of one per iteration; the float sum is then rounded in
another order, as a GPU's atomics round it anyway). Maxima and minima are left alone.

Declarations in the loop whose value does not change over it (`int x = w * ub1;`) move in
front of it, so that the accumulator's subscript reads as the source's. A source-level
rewrite: the IR the registers are counted on and the CUDA text both see it. Applied once to
the schedule before the case tree (every case has it: it lowers no counter, so the algorithm
would never choose it); decision code (5).
"""
from __future__ import annotations

from dataclasses import replace

import sympy

from parakern.symbolic import constraints as cs
from parakern import syntax
from parakern.analysis.updates import made_atomically
from parakern.kernel import Kernel
from parakern.model import Schedule
from parakern.analysis import rebuild
from parakern.strategies.base import Strategy
from parakern.analysis.lifted import lifted
from parakern.analysis.dependence import interchange_legal


class RegisterAccumulators(Strategy):
    code = "(5)"
    name = "register accumulators"
    improves = frozenset()          # a performance rewrite: no resource counter is lowered
    applies_to = "source"
    applied_words = "register accumulators"

    def changes(self, kernel: Kernel) -> "dict | None":
        schedule = accumulate(kernel.schedule)
        return None if schedule is None else {"schedule": schedule}

    def why_not(self, kernel: Kernel) -> str:
        atomic = ", ".join(dict.fromkeys(a.array for a in kernel.schedule.atomics if a.op in ("max", "min")))
        return ("register accumulators: no array element is read and written at one index on every "
                "iteration of a serial loop (or the loops around it could not be interchanged)"
                + (f"; the maxima or minima of {atomic} are made with atomics in memory" if atomic else ""))

    @classmethod
    def comment_words(cls, kernel: Kernel, cap: "int | None") -> "str | None":
        if cls.code not in kernel.decisions:
            return None
        words = ", ".join(accumulated_arrays(kernel.schedule)) + " accumulated in registers"
        moved = lifted(kernel).arrays
        if moved:   # also across the loops between grid and block levels (analysis/lifted.py)
            loops = ", ".join(lp.var for lp in kernel.schedule.between)
            words += f" ({', '.join(moved)} across {loops} too)"
        return words


def accumulate(schedule: Schedule) -> "Schedule | None":
    """The schedule with register accumulators, or None where no loop has one."""
    rewriter = _Rewriter(schedule)
    body = rewriter.block(schedule.body, _outer_scope(schedule))
    if not rewriter.accumulated:
        return None
    nest = rebuild.with_body(schedule.nest, body)
    return rebuild.rebuild(schedule, nest, len(schedule.grid))


def accumulated_arrays(schedule: Schedule) -> tuple[str, ...]:
    """Arrays with an accumulator in the schedule (their `<array>_acc...` locals)."""
    names = {a.name for a in schedule.arrays}
    found = []
    for local in schedule.locals:
        stem = local.name.rsplit("_acc", 1)[0]
        if "_acc" in local.name and stem in names and stem not in found:
            found.append(stem)
    return tuple(found)


def _outer_scope(schedule: Schedule) -> set[str]:
    """Names every statement of the per-thread body can read."""
    names = {p.name for p in schedule.params} | {d.name for d in schedule.derived}
    names |= {lp.var for lp in schedule.loops} | {lp.var for lp in schedule.between}
    return names


class _Rewriter:
    def __init__(self, schedule: Schedule):
        self.schedule = schedule
        self.accesses = {(a.span, a.array): a for a in schedule.accesses}
        self.taken = rebuild.used_names(schedule)
        self.ctypes = rebuild.var_ctypes(schedule)
        self.arrays = {a.name: a for a in schedule.arrays}
        self.accumulated: list[str] = []

    # ---- walking the body

    def block(self, block: syntax.Block, scope: set[str]) -> syntax.Block:
        out, scope = [], set(scope)
        for stmt in block.stmts:
            new = self.stmt(stmt, scope)
            out.extend(new)
            for s in new:
                if isinstance(s, syntax.Decl):
                    scope.add(s.name)
        return replace(block, stmts=tuple(out))

    def stmt(self, stmt, scope: set[str]) -> list:
        if isinstance(stmt, syntax.Block):
            return [self.block(stmt, scope)]
        if isinstance(stmt, syntax.If):
            then = self.block(stmt.then, scope)
            other = self.block(stmt.other, scope) if stmt.other is not None else None
            return [replace(stmt, then=then, other=other)]
        if isinstance(stmt, syntax.Loop) and not stmt.parallel:
            inner = scope | {stmt.var}
            loop = replace(stmt, body=self.block(stmt.body, inner))
            done = self.loop(loop, scope)
            if done is None:
                swapped = self.interchanged(loop)
                if swapped is not None:
                    inner_loop = _only_loop(swapped.body)
                    rewritten = self.loop(inner_loop, scope | {swapped.var})
                    if rewritten is not None:
                        return [replace(swapped, body=syntax.Block(tuple(rewritten), swapped.body.span))]
                return [loop]
            return done
        return [stmt]

    # ---- one loop

    def loop(self, loop: syntax.Loop, scope: set[str]) -> "list | None":
        """[hoisted declarations, accumulator loads, the loop, stores], or None."""
        hoisted, kept = _hoist(loop, scope)
        visible = scope | {d.name for d in hoisted}
        body = replace(loop.body, stmts=tuple(kept))
        inner_vars = {n.var for n in syntax.walk(body) if isinstance(n, syntax.Loop)}
        bound_inside = {n.name for n in syntax.walk(body) if isinstance(n, syntax.Decl)}
        loads, stores, replaced = [], [], {}
        atomic = {a.array for a in self.schedule.atomics}
        for stmt in kept:
            if not (isinstance(stmt, syntax.Assign) and isinstance(stmt.target, syntax.Index)):
                continue
            target = stmt.target
            if target.array in replaced:
                continue
            partial = target.array in atomic   # other threads update the element at the same time
            if partial and not self._sums_only(target.array, body):
                continue
            index = self._index(target)
            if index is None:
                continue
            uses = [n for n in syntax.walk(body) if isinstance(n, syntax.Index) and n.array == target.array]
            if any(self._index(n) != index for n in uses):
                continue  # another element of the same array in the loop: it may be this one
            free = {s.name for e in index for s in e.free_symbols}
            if free & ({loop.var} | inner_vars):
                continue  # the element changes over the loop
            subscripts = self._subscripts(target, index, visible, bound_inside)
            if subscripts is None:
                continue
            name = next(rebuild.fresh_names(self.taken, f"{target.array}_acc", numbered_only=False))
            ctype = self.arrays[target.array].ctype
            element = replace(target, indices=subscripts)
            if partial:   # this thread's sum, added with one atomic (the statement's span: atomics)
                zero = "0.0f" if ctype == "float" else "0.0" if ctype == "double" else "0"
                loads.append(syntax.Decl(name, ctype, syntax.Const(0.0 if "." in zero else 0, ctype, target.span,
                                                                   zero), target.span))
                stores.append(syntax.Assign(element, "+=", syntax.Var(name, ctype, target.span), stmt.span))
            else:
                loads.append(syntax.Decl(name, ctype, element, target.span))
                stores.append(syntax.Assign(element, "=", syntax.Var(name, ctype, target.span), stmt.span))
            replaced[target.array] = syntax.Var(name, ctype, target.span)
        if not replaced:
            return None
        self.accumulated.extend(replaced)
        new_loop = replace(loop, body=_substitute(body, replaced))
        statements = list(hoisted) + loads + [new_loop] + stores
        if self._may_be_empty(loop):
            cond = syntax.Binary("<", loop.lo, loop.hi, "int", loop.keyword_span)
            return [syntax.If(cond, syntax.Block(tuple(statements), loop.span), None, loop.keyword_span)]
        return statements

    def _sums_only(self, array: str, body: syntax.Block) -> bool:
        """Whether every reference to an atomically updated array in the loop belongs to an
        atomic addition or subtraction (the other threads' updates then commute with this
        thread's partial sum)."""
        references = [n.span for n in syntax.walk(body) if isinstance(n, syntax.Index) and n.array == array]
        owned = set()
        for n in syntax.walk(body):
            update = made_atomically(self.schedule, n)
            if update is not None and update.target.array == array:
                if update.kind != "add":
                    return False
                owned |= update.references
        return bool(references) and all(span in owned for span in references)

    def _index(self, node: syntax.Index) -> "tuple | None":
        access = self.accesses.get((node.span, node.array))
        if access is None or not access.exact:
            return None
        return tuple(sympy.expand(i) for i in access.indices)

    def _subscripts(self, target: syntax.Index, index, visible: set[str], inside: set[str]):
        """The subscripts as written when they read only what is visible before the loop,
        else printed from the access's polynomial."""
        names = {n.name for i in target.indices for n in syntax.walk(i) if isinstance(n, syntax.Var)}
        if names <= visible and not names & inside:
            return target.indices
        try:
            return tuple(rebuild.to_syntax(e, "int", self.ctypes, target.span) for e in index)
        except ValueError:
            return None

    def _may_be_empty(self, loop: syntax.Loop) -> bool:
        """Unless the facts prove lo < hi: the accumulator must not read an element the
        loop would never have touched."""
        lo, hi = syntax.to_sympy(loop.lo), syntax.to_sympy(loop.hi)
        if lo is None or hi is None:
            return True
        system = cs.System((), tuple(self.schedule.facts))
        return cs.implies(system, sympy.Lt(lo, hi)) != "proved"

    # ---- interchange

    def interchanged(self, outer: syntax.Loop) -> "syntax.Loop | None":
        """for a { for b { S } } -> for b { for a { S } } when an element written in S moves
        with b but not with a, the bounds do not depend on each other and it is legal."""
        inner = _only_loop(outer.body)
        if inner is None or inner.parallel:
            return None
        for bound in (outer.lo, outer.hi, outer.step):
            if inner.var in syntax.variables(bound):
                return None
        for bound in (inner.lo, inner.hi, inner.step):
            if outer.var in syntax.variables(bound):
                return None
        wanted = False
        for node in syntax.walk(inner.body):
            if isinstance(node, syntax.Assign) and isinstance(node.target, syntax.Index):
                index = self._index(node.target)
                free = {s.name for e in index for s in e.free_symbols} if index else set()
                if index is not None and inner.var in free and outer.var not in free:
                    wanted = True
        if not wanted or interchange_legal(self.schedule, outer.var, inner.var) != "proved":
            return None
        swapped_inner = replace(outer, body=inner.body)
        return replace(inner, body=syntax.Block((swapped_inner,), outer.body.span))


def _only_loop(block: syntax.Block) -> "syntax.Loop | None":
    stmts = block.stmts
    while len(stmts) == 1 and isinstance(stmts[0], syntax.Block):
        stmts = stmts[0].stmts
    return stmts[0] if len(stmts) == 1 and isinstance(stmts[0], syntax.Loop) else None


def _hoist(loop: syntax.Loop, scope: set[str]) -> tuple[list, list]:
    """(declarations at the top of the loop body whose value is the same on every iteration,
    the other statements). A declaration moves when its value reads no array and only names
    visible before the loop or declared by a moved declaration, and it is never assigned."""
    assigned = syntax.assigned_names(loop.body)
    hoisted, kept, visible = [], [], set(scope)
    for stmt in loop.body.stmts:
        movable = (isinstance(stmt, syntax.Decl) and not kept and stmt.init is not None
                   and stmt.name not in assigned and stmt.name not in scope
                   and not any(isinstance(n, (syntax.Index, syntax.Call)) for n in syntax.walk(stmt.init))
                   and syntax.variables(stmt.init) <= visible)
        if movable:
            hoisted.append(stmt)
            visible.add(stmt.name)
        else:
            kept.append(stmt)
    return hoisted, kept


def _substitute(node, replaced: dict):
    """The tree with every access to an accumulated array replaced by its register."""
    return syntax.replaced(node, lambda n: replaced.get(n.array) if isinstance(n, syntax.Index) else None)
