"""(3b) Thread-granularity reduction: each thread does one unit of work instead of several.

(a) A serial loop that is the per-thread body (after local declarations
    whose values do not depend on it), with independent iterations (z3
    proves it: parakern.analysis.dependence) and a trip count fixed for the launch
    (parameters only), becomes a parallel level of the grid: the thread of
    iteration k runs the loop body once.
(b) A thread that does the same statement m times at subscripts `h * off`
    apart (the paper's matrix addition: `c[i][j]` and `c[i][j + N/2]`, each
    thread two elements) does it once, at `h * off`, with h a new grid level
    in [0, m).

The new level is the outermost grid level, so the innermost one stays .x.
CUDA has 3 grid dimensions: with 3 grid levels already, the new index is
multiplied into the outermost level g in [lo, hi): one level G in
[0, (hi - lo) * E) and, at the top of the body, `g = lo + G / E` and
`k = G % E` (E the new level's extent). The grid of the launch grows by the
factor E; threads per block are unchanged; what one block touches shrinks
by E (the shared-memory counter sees it through the footprints).
"""
from __future__ import annotations

from dataclasses import replace

import sympy

from parakern import syntax
from parakern.analysis.dependence import iterations_independent
from parakern.kernel import Kernel
from parakern.model import Schedule
from parakern.strategies.base import Strategy
from parakern.analysis.rebuild import (binary, chain, const, fresh_names, rebuild, same, to_syntax, used_names,
                                         var_ctypes, with_body)

_MAX_GRID = 3


class ReduceGranularity(Strategy):
    code = "(3b)"
    keep_code = "(3a)"
    name = "granularity"
    improves = frozenset({"registers", "shared_memory"})
    applies_to = "source"
    applied_words = "granularity reduced"
    kept_words = "granularity kept"

    def changes(self, kernel: Kernel) -> "dict | None":
        schedule = split_serial_loop(kernel.schedule) or split_copies(kernel.schedule)
        return None if schedule is None else {"schedule": schedule}

    def why_not(self, kernel: Kernel) -> str:
        return "granularity not reduced: " + _serial_loop_refusal(kernel.schedule)

    @classmethod
    def comment_words(cls, kernel: Kernel, cap: "int | None") -> str:
        return "granularity reduced" if cls.code in kernel.decisions else "granularity as written"


# ------------------------------------------------------------------ (a) serial loop

def _serial_loop_refusal(schedule: Schedule) -> str:
    """Why (a) does not apply ('' where it does), in the user's terms: what to change."""
    found = _top_loop(schedule)
    if found is None:
        inner = next((n for n in syntax.walk(schedule.body) if isinstance(n, syntax.Loop) and not n.parallel), None)
        if inner is None:
            return "each thread runs no serial loop, nor repeated statements, to spread over the grid"
        if iterations_independent(schedule, inner.var) == "refuted":
            return _shared_data(inner.var)
        return (f"loop {inner.var} is not the whole of each thread's work (only declarations that do not "
                "read it may come before it, nothing after it), so its iterations cannot become threads")
    _, loop = found
    params = {p.name for p in schedule.params} | {d.name for d in schedule.derived}
    bounds = [syntax.to_sympy(b) for b in (loop.lo, loop.hi, loop.step)]
    if any(b is None or not {s.name for s in b.free_symbols} <= params for b in bounds):
        return f"the trip count of loop {loop.var} is not fixed at launch (its bounds must read parameters only)"
    step = bounds[2]
    if not (step.is_Integer and step >= 1):
        return f"the step of loop {loop.var} is not a positive constant"
    verdict = iterations_independent(schedule, loop.var)
    if verdict == "refuted":
        return _shared_data(loop.var)
    if verdict != "proved":
        return f"the independence of the iterations of loop {loop.var} could not be proved"
    return ""


def _shared_data(var: str) -> str:
    return (f"iterations of loop {var} share data (a reduction into a local or an accumulator, or an "
            "element that several iterations write): they cannot run as different threads")


def split_serial_loop(schedule: Schedule) -> "Schedule | None":
    """(a): the per-thread serial loop as a new grid level, or None where it does not apply."""
    if _serial_loop_refusal(schedule):
        return None  # a reduction (matvec's j), a shared element (matmul's z), or not proved
    prefix, loop = _top_loop(schedule)
    step = syntax.to_sympy(loop.step)
    taken = used_names(schedule)
    decls: list = []
    if step == 1:
        var, lo, hi = loop.var, loop.lo, loop.hi
    else:  # normalise to m in [0, trip), k = lo + m * step
        span = loop.keyword_span
        var = next(fresh_names(taken, loop.var + "m", numbered_only=False))
        lo = const(0, span)
        hi = binary("/", binary("-", binary("+", loop.hi, const(int(step) - 1, span), span), loop.lo, span),
                    const(int(step), span), span)
        decls.append(syntax.Decl(loop.var, loop.ctype, binary(
            "+", loop.lo, binary("*", syntax.Var(var, loop.ctype, span), const(int(step), span), span), span),
            span))
    body = loop.body if not prefix and not decls else \
        syntax.Block(tuple(decls) + tuple(prefix) + (loop.body,), schedule.body.span)
    level = syntax.Loop(var, loop.ctype, lo, hi, const(1, loop.step.span), syntax.Block((), loop.span),
                        True, loop.span, loop.keyword_span)
    return _add_grid_level(schedule, level, body, taken)


def _top_loop(schedule: Schedule):
    """(local declarations before it, the loop) when the body is such a serial loop."""
    stmts = list(schedule.body.stmts)
    while len(stmts) == 1 and isinstance(stmts[0], syntax.Block):
        stmts = list(stmts[0].stmts)
    if not stmts or not isinstance(stmts[-1], syntax.Loop) or stmts[-1].parallel:
        return None
    loop, prefix = stmts[-1], stmts[:-1]
    assigned = syntax.assigned_names(schedule.nest)
    outside = {p.name for p in schedule.params} | {d.name for d in schedule.derived}
    outside |= {n.name for lp in chain(schedule.nest) for b in (lp.lo, lp.hi, lp.step)
                for n in syntax.walk(b) if isinstance(n, syntax.Var)}
    if loop.var in outside:
        return None  # as a grid level it would shadow a name read outside the loop
    for decl in prefix:
        # Recomputed by every thread of the new level: must not read memory, the loop
        # variable (another variable before the loop) or change later.
        if not isinstance(decl, syntax.Decl) or decl.name == loop.var or decl.name in assigned:
            return None
        if decl.init is not None and loop.var in syntax.variables(decl.init):
            return None
        if decl.init is not None and any(isinstance(n, (syntax.Index, syntax.Call)) for n in syntax.walk(decl.init)):
            return None
    return prefix, loop


# ------------------------------------------------------------------ (b) copies

def split_copies(schedule: Schedule) -> "Schedule | None":
    """(b): m statements equal up to subscripts h*off apart -> one statement and a level h in [0, m)."""
    taken = used_names(schedule)
    var = next(fresh_names(taken, "h", numbered_only=False))
    found = _rewrite_copies(schedule.body, schedule, var)
    if found is None:
        return None
    body, count = found
    span = schedule.body.span
    level = syntax.Loop(var, "int", const(0, span), const(count, span), const(1, span), syntax.Block((), span),
                        True, span, span)
    return _add_grid_level(schedule, level, body, taken)


def _rewrite_copies(block: syntax.Block, schedule: Schedule, var: str):
    """(new block, m) for the first group of copies in `block` or its `if` branches; else None.

    Not inside serial loops: the copies of different iterations would then
    run in a different order.
    """
    stmts = block.stmts
    for start in range(len(stmts)):
        group = _copies_from(stmts, start, schedule)
        if group is not None:
            count, merged = group(var)
            new = stmts[:start] + (merged,) + stmts[start + count:]
            return replace(block, stmts=new), count
        stmt = stmts[start]
        if isinstance(stmt, syntax.Block):
            inner = _rewrite_copies(stmt, schedule, var)
            if inner is not None:
                return replace(block, stmts=stmts[:start] + (inner[0],) + stmts[start + 1:]), inner[1]
        if isinstance(stmt, syntax.If):
            for branch in ("then", "other"):
                sub = getattr(stmt, branch)
                inner = None if sub is None else _rewrite_copies(sub, schedule, var)
                if inner is not None:
                    new = replace(stmt, **{branch: inner[0]})
                    return replace(block, stmts=stmts[:start] + (new,) + stmts[start + 1:]), inner[1]
    return None


def _copies_from(stmts, start, schedule: Schedule):
    """A maker of the merged statement when stmts[start], stmts[start+1], ... are copies."""
    params = {p.name for p in schedule.params} | {d.name for d in schedule.derived}
    first = stmts[start]
    if not _plain_assign(first):
        return None
    positions, offset = None, None
    count = 1
    for h in range(1, len(stmts) - start):
        other = stmts[start + h]
        if not _plain_assign(other):
            break
        diffs = _diff(first, other)
        if not diffs:
            break
        if h == 1:
            offset = diffs[0][1]
            if not {s.name for s in offset.free_symbols} <= params or \
                    any(sympy.expand(d - offset) != 0 for _, d, _ in diffs):
                break
            positions = [p for p, _, _ in diffs]
        elif [p for p, _, _ in diffs] != positions or \
                any(sympy.expand(d - h * offset) != 0 for _, d, _ in diffs):
            break
        count += 1
    if count < 2 or not _copies_independent(stmts[start:start + count]):
        return None
    if not any(p < len(first.target.indices) for p in positions):
        return None  # the copies write one element: the last one wins, not a race
    second = _diff(first, stmts[start + 1])
    offset_syntax = [_offset_syntax(old, new, offset, schedule) for _, _, (old, new) in second]

    def make(var: str):
        span = first.span
        subs = iter(offset_syntax)

        def shift(sub):
            step = binary("*", syntax.Var(var, "int", span), next(subs), span)
            return binary("+", sub, step, span)

        return count, _shift_subscripts(first, positions, shift)

    return make


def _plain_assign(stmt) -> bool:
    return isinstance(stmt, syntax.Assign) and isinstance(stmt.target, syntax.Index)


def _diff(a, b):
    """[(subscript position, delta, (a's subscript, b's subscript))] where a and b differ; None if
    they differ anywhere else or a delta has no symbolic value."""
    out = []
    counter = iter(range(10 ** 9))

    def go(x, y) -> bool:
        if type(x) is not type(y):
            return False
        if isinstance(x, syntax.Index):
            if x.array != y.array or len(x.indices) != len(y.indices):
                return False
            for sx, sy in zip(x.indices, y.indices):
                n = next(counter)
                if same(sx, sy):
                    continue
                vx, vy = syntax.to_sympy(sx), syntax.to_sympy(sy)
                if vx is None or vy is None:
                    return False
                delta = sympy.expand(vy - vx)
                if delta == 0:
                    return False  # written differently, same value: not a copy at an offset
                out.append((n, delta, (sx, sy)))
            return True
        if isinstance(x, syntax.Assign):
            return x.op == y.op and go(x.target, y.target) and go(x.value, y.value)
        if isinstance(x, (syntax.Const, syntax.Var)):
            return same(x, y)
        kids_x, kids_y = syntax.children(x), syntax.children(y)
        head = {f: getattr(x, f) for f in ("op", "func", "ctype") if hasattr(x, f)}
        return head == {f: getattr(y, f) for f in head} and len(kids_x) == len(kids_y) and \
            all(go(p, q) for p, q in zip(kids_x, kids_y))

    return out if go(a, b) else None


def _copies_independent(group) -> bool:
    """Arrays the copies write are read only at the element their own statement writes."""
    written = {s.target.array for s in group}
    for stmt in group:
        for node in syntax.walk(stmt.value):
            if isinstance(node, syntax.Index) and node.array in written and not same(node, stmt.target):
                return False
        for index in stmt.target.indices:
            if any(isinstance(n, syntax.Index) and n.array in written for n in syntax.walk(index)):
                return False
    return True


def _offset_syntax(old, new, offset, schedule: Schedule) -> syntax.Expr:
    """The offset as the user wrote it (`j + N / 2` -> `N / 2`), else printed from its value."""
    if isinstance(new, syntax.Binary) and new.op == "+":
        for mine, other in ((new.left, new.right), (new.right, new.left)):
            value = syntax.to_sympy(other)
            if same(mine, old) and value is not None and sympy.expand(value - offset) == 0:
                return other
    return to_syntax(offset, "int", var_ctypes(schedule), new.span)


def _shift_subscripts(stmt, positions, shift):
    """The statement with shift(sub) at the subscript positions (numbered as `_diff` numbers them)."""
    counter = iter(range(10 ** 9))
    wanted = set(positions)

    def go(e):
        if isinstance(e, syntax.Index):
            subs = []
            for s in e.indices:
                n = next(counter)
                subs.append(shift(s) if n in wanted else s)
            return replace(e, indices=tuple(subs))
        if isinstance(e, syntax.Assign):
            target = go(e.target)
            return replace(e, target=target, value=go(e.value))
        if isinstance(e, (syntax.Unary, syntax.Cast)):
            return replace(e, operand=go(e.operand))
        if isinstance(e, syntax.Binary):
            left = go(e.left)
            return replace(e, left=left, right=go(e.right))
        if isinstance(e, syntax.Ternary):
            cond = go(e.cond)
            then = go(e.then)
            return replace(e, cond=cond, then=then, other=go(e.other))
        if isinstance(e, syntax.Call):
            return replace(e, args=tuple(go(a) for a in e.args))
        return e

    return go(stmt)


# ------------------------------------------------------------------ the new level

def _add_grid_level(schedule: Schedule, level: syntax.Loop, body: syntax.Block, taken: set[str]) -> "Schedule | None":
    """The schedule with `level` as a new outermost grid level and `body` per thread."""
    nest = with_body(schedule.nest, body)
    n_grid = len(schedule.grid)
    if n_grid < _MAX_GRID:
        outer = replace(level, body=syntax.Block((nest,), nest.span))
        return rebuild(schedule, outer, n_grid + 1)
    # Three grid levels: G in [0, extent(g) * E) replaces the outermost level g.
    g = nest
    others = chain(nest)[1:]
    if any(g.var in syntax.variables(b) for lp in others for b in (lp.lo, lp.hi, lp.step)):
        return None  # an inner level's bounds read g: it cannot become a local
    span = g.keyword_span
    merged_var = next(fresh_names(taken, g.var + level.var, numbered_only=False))
    extent = binary("-", level.hi, level.lo, span) if syntax.to_sympy(level.lo) != 0 else level.hi
    g_extent = binary("-", g.hi, g.lo, span) if syntax.to_sympy(g.lo) != 0 else g.hi
    merged = syntax.Var(merged_var, "int", span)
    g_value = binary("/", merged, extent, span)
    k_value = binary("%", merged, extent, span)
    if syntax.to_sympy(g.lo) != 0:
        g_value = binary("+", g.lo, g_value, span)
    if syntax.to_sympy(level.lo) != 0:
        k_value = binary("+", level.lo, k_value, span)
    decls = (syntax.Decl(g.var, g.ctype, g_value, span), syntax.Decl(level.var, level.ctype, k_value, span))
    inner = with_body(nest, syntax.Block(decls + (body,), body.span))
    new = replace(inner, var=merged_var, ctype="int", lo=const(0, span),
                  hi=binary("*", g_extent, extent, span), step=const(1, span))
    return rebuild(schedule, new, n_grid)
