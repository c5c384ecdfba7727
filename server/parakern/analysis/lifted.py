"""Register accumulators across the serial loops between grid and block levels.

Decision (5) (strategies/accumulate.py) keeps an element in a register for a serial loop of
the per-thread body. The loops between grid and block levels (matmul's k) are not in the
body: the kernel runs the body once per iteration of them, so the accumulator is still
loaded and stored once per k:

    for (int k = 0; k < n / B0; k++) {            float c_acc = c[i * B0 + v][...];
        ...                                       for (int k = 0; k < n / B0; k++) {
        float c_acc = c[p][q + x];          ->        ...
        for (z ...) c_acc += ...;                     for (z ...) c_acc += ...;
        c[p][q + x] = c_acc;                      }
    }                                             c[i * B0 + v][...] = c_acc;

An accumulator moves out when its element's index reads only grid and block indices and
parameters (the same element on every iteration), the other references to the array in the
body are provably other elements (a subscript differs by a nonzero constant: the rows of
thread coarsening, (6); or by an expression the facts prove nonzero: a register tile's copies
(8), B0 rows apart), its load and its store run unconditionally (through plain blocks only),
the array is not staged in shared memory in this variant (its copy would then be the one
the body sees), and the facts prove that the loops run at least once (the load must not
read an element the loops would never touch). No other thread touches the element:
meta_for iterations are independent (MetaFork's contract, checked by dependence.py).

In a compile-time instance (analysis/fixed.py), an accumulator inside a serial loop of the
body whose trip count the fixed values make a constant (matmul's `for (w = 0; w < s; w++)`
at s = 4, one accumulator per coefficient of the thread) moves out too (where no register-pressure
strategy keeps loops rolled: IR level 0): the loop is unrolled,
each copy in its own block with `int w = <value>;` and its own accumulator
(`c_acc_w0`, ...), loaded before the between loops and stored after them. The copies run in
the loop's order and each keeps its element in the same register as before, so every
element sees the same operations in the same order; the elements of two copies must differ
(z3 is not needed: their subscripts differ by a nonzero constant once the values are
substituted), else they are left alone. Without it such an accumulator is loaded and stored
once per iteration of the between loops (static SASS of matmul's case 1 at B0 = 16, ub1 =
16, s = 4: 4 loads and 4 stores of c beside 64 FMAs per k).

A plan, not a rewrite of the schedule (the model has no place for per-thread statements
outside the between loops): the IR the registers are counted on (ir/lower.py), the CUDA
(codegen/kernel_source.py) and the traffic analysis all run `before`, the between loops around
`body`, then `after` (the IR and the traffic analysis: the parametric kernel's plan).
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, replace

import sympy

from parakern.symbolic import constraints as cs
from parakern import syntax
from parakern.analysis.settled import settled
from parakern.kernel import Kernel
from parakern.model import Schedule
from parakern.symbolic.symbols import sym
from parakern.analysis.rebuild import used_names
from parakern.analysis.rebuild import fresh_names, to_syntax, var_ctypes


@dataclass(frozen=True)
class Lifted:
    before: tuple = ()          # per-thread statements before the between loops (the loads)
    body: "syntax.Block | None" = None   # the body the between loops run
    after: tuple = ()           # per-thread statements after them (the stores)
    arrays: tuple[str, ...] = ()   # arrays whose accumulator moved out


MAX_UNROLLED = 16   # copies of a loop unrolled for its accumulators (registers: one per copy and array)


def lifted(kernel: Kernel, fixed: tuple = ()) -> Lifted:
    """The kernel's per-thread code around its between loops (nothing moved where nothing can);
    fixed: the values of a compile-time instance ((name, value), ...), which may unroll loops
    where no register-pressure strategy was applied (those keep their loops rolled: IR level 0
    only). An instance's guards that its values prove are gone first (analysis/settled.py)."""
    schedule = settled(kernel.schedule, tuple(fixed))
    plan = _lifted(schedule, tuple(kernel.cached))
    if not fixed or kernel.ir_level != 0:
        return plan
    return _unrolled(schedule, tuple(kernel.cached), plan, tuple(fixed))


@functools.lru_cache(maxsize=256)
def _lifted(s: Schedule, cached: tuple[str, ...]) -> Lifted:
    plain = Lifted((), s.body, (), ())
    if not s.between or not _loops_run(s):
        return plain
    fixed = ({p.name for p in s.params} | {d.name for d in s.derived} | {lp.var for lp in s.loops})
    before, after, arrays, removed = [], [], [], set()
    for block in _plain_blocks(s.body):
        for n, stmt in enumerate(block.stmts):
            found = _accumulator(s, block.stmts, n, stmt, cached, fixed)
            if found is None:
                continue
            load, store, subscripts = found
            element = replace(load.init, indices=subscripts)
            before.append(replace(load, init=element))
            after.append(replace(store, target=element))
            arrays.append(element.array)
            removed |= {id(load), id(store)}
    if not removed:
        return plain
    return Lifted(tuple(before), _without(s.body, removed), tuple(reversed(after)), tuple(arrays))


def _unrolled(s: Schedule, cached: tuple, plan: Lifted, fixed: tuple) -> Lifted:
    """The plan with each loop of the body that has an accumulator and a constant trip count at
    `fixed` unrolled, its accumulators moved out like the others."""
    if not s.between or not _loops_run(s):
        return plan
    # the plan may be the cached one of an equal schedule: its body's nodes are the ones to walk
    s = replace(s, body=plan.body)
    values = {sym(n): sympy.Integer(v) for n, v in fixed}
    known = ({p.name for p in s.params} | {d.name for d in s.derived} | {lp.var for lp in s.loops})
    taken = set(used_names(s))
    before, after, arrays = list(plan.before), [], list(plan.arrays)

    def block(b: syntax.Block) -> syntax.Block:
        stmts = []
        for stmt in b.stmts:
            if isinstance(stmt, syntax.Block):
                stmts.append(block(stmt))
                continue
            found = _unrollable(s, stmt, cached, known, values, taken) if isinstance(stmt, syntax.Loop) else None
            if found is None:
                stmts.append(stmt)
                continue
            copies, loads, stores, moved = found
            stmts.extend(copies)
            before.extend(loads)
            after[:0] = stores
            arrays.extend(moved)
        return replace(b, stmts=tuple(stmts))

    body = block(plan.body)
    if len(arrays) == len(plan.arrays):
        return plan
    return Lifted(tuple(before), body, tuple(after) + plan.after, tuple(arrays))


def _unrollable(s: Schedule, loop: syntax.Loop, cached, known: set, values: dict, taken: set):
    """(the loop's copies, their accumulators' loads, stores, the arrays) where `loop` is serial,
    runs a constant number of times at the fixed values and its body holds accumulators of
    elements that move with the loop's variable only (all distinct); else None."""
    if loop.parallel:
        return None
    bounds = [syntax.to_sympy(e) for e in (loop.lo, loop.hi, loop.step)]
    if any(b is None for b in bounds):
        return None
    read = {x.name for b in bounds for x in sympy.sympify(b).free_symbols}
    if read - known or read & _declared(s.body):
        return None   # a local (perhaps named like a parameter it shadows) decides the trips
    if any(_divides(e) for e in (loop.lo, loop.hi, loop.step)):
        return None   # C's / and % truncate where floor does not: (1 - s) / s is 0 at s = 3, not -1
    lo, hi, step = (sympy.sympify(b).xreplace(values) for b in bounds)
    if not (lo.is_Integer and hi.is_Integer and step.is_Integer and step > 0):
        return None
    trips = list(range(int(lo), int(hi), int(step)))
    if not 1 <= len(trips) <= MAX_UNROLLED:
        return None
    stmts = loop.body.stmts
    found = [f for n, stmt in enumerate(stmts)
             if (f := _accumulator(s, stmts, n, stmt, cached, known | {loop.var})) is not None]
    if not found:
        return None
    moved = {id(x) for load, store, _ in found for x in (load, store)}
    inner = _declared(replace(loop.body, stmts=tuple(st for st in stmts if id(st) not in moved)))
    if loop.var in inner or any(load.name in inner for load, _, _ in found):
        return None   # renaming would reach a shadowing declaration (or redeclare the variable)
    w = sym(loop.var)
    elements = [[tuple(sympy.expand(e.xreplace(values).xreplace({w: sympy.Integer(t)})) for e in _index(s, load.init))
                 for t in trips] for load, _, _ in found]
    if not _distinct([e for per_load in elements for e in per_load], tuple(s.facts)):
        return None   # two copies would accumulate into one element
    ctypes = var_ctypes(s)
    names = [iter(fresh_names(taken, f"{load.name}_w", numbered_only=True)) for load, _, _ in found]
    copies, loads, stores = [], [], []
    for k, t in enumerate(trips):
        kept = tuple(st for st in stmts if id(st) not in moved)
        for (load, store, _), per_load, fresh in zip(found, elements, names):
            name = next(fresh)   # fresh_names adds it to taken
            try:
                subscripts = tuple(to_syntax(e, "int", ctypes, load.init.span) for e in per_load[k])
            except ValueError:
                return None
            at = replace(load.init, indices=subscripts)
            loads.append(replace(load, name=name, init=at))
            stores.append(replace(store, target=at, value=syntax.Var(name, load.ctype, store.value.span)))
            kept = tuple(syntax.renamed(st, {load.name: name}) for st in kept)
        value = syntax.Decl(loop.var, loop.ctype, syntax.Const(t, loop.ctype, loop.keyword_span, str(t)),
                            loop.keyword_span)
        copies.append(syntax.Block((value,) + kept, loop.body.span))
    return copies, loads, stores[::-1], [load.init.array for load, _, _ in found]


def _divides(node) -> bool:
    """Whether C's / or % is written in it: the analysis reads them as floor and mod, the same
    only where the operands are not negative (hypothesis H1), which an expression such as
    2 * w - 1 need not be."""
    return any(isinstance(n, syntax.Binary) and n.op in ("/", "%") for n in syntax.walk(node))


def _declared(block) -> set:
    """Names of the locals declared anywhere in a block."""
    return {n.name for n in syntax.walk(block) if isinstance(n, syntax.Decl)}


def _distinct(elements: list, facts: tuple = ()) -> bool:
    """Every two elements differ in some subscript by a nonzero constant, or by an expression of
    the parameters the facts prove nonzero (a register tile's copies: rows B0 apart)."""
    for a, b in itertools.combinations(elements, 2):
        if not any(_nonzero(sympy.expand(x - y), facts) for x, y in zip(a, b)):
            return False
    return True


@functools.lru_cache(maxsize=1024)
def _nonzero(difference: sympy.Expr, facts: tuple) -> bool:
    if difference.is_Integer:
        return difference != 0
    if not facts or not difference.free_symbols:
        return False
    return cs.implies(cs.System((), facts), sympy.Ne(difference, 0)) == "proved"


def _loops_run(s: Schedule) -> bool:
    system = cs.System((), tuple(s.facts))
    for loop in s.between:
        if cs.implies(system, sympy.Lt(loop.lo, loop.hi)) != "proved":
            return False
    return True


def _plain_blocks(block: syntax.Block):
    """The body and the blocks nested in it through blocks only (run whenever the body runs)."""
    yield block
    for stmt in block.stmts:
        if isinstance(stmt, syntax.Block):
            yield from _plain_blocks(stmt)


def _accumulator(s: Schedule, stmts, n: int, load, cached, fixed):
    """(load, store, subscripts) when stmts[n] is `T acc = A[...]` whose element can live in
    a register across the between loops, else None."""
    if not (isinstance(load, syntax.Decl) and isinstance(load.init, syntax.Index)):
        return None
    element = load.init
    name, array = load.name, element.array
    if array in cached or load.ctype != s.array(array).ctype:
        return None   # a float sum of an int array: C converts it at every store, once per k
    store = next((st for st in stmts[n + 1:] if isinstance(st, syntax.Assign) and st.op == "="
                  and isinstance(st.target, syntax.Index) and st.target.array == array
                  and isinstance(st.value, syntax.Var) and st.value.name == name), None)
    if store is None:
        return None
    after = stmts[next(k for k, st in enumerate(stmts) if st is store) + 1:]
    if any(isinstance(x, syntax.Var) and x.name == name for st in after for x in syntax.walk(st)):
        return None
    index = _index(s, element)
    if index is None or _index(s, store.target) != index:
        return None
    others = [x for x in syntax.walk(s.body) if isinstance(x, syntax.Index) and x.array == array
              and x is not element and x is not store.target]
    if any((other := _index(s, x)) is None or not _distinct([index, other], tuple(s.facts)) for x in others):
        return None   # another reference to the array may be this element (the rows of (6) are not)
    if _divides(element) or _divides(store.target):
        return None   # printed again from the analysis' floor, C's / would round (2*w - 1)/2 otherwise
    if {v.name for e in index for v in e.free_symbols} - fixed:
        return None   # it moves with a serial loop (or reads a local with no single value)
    try:
        subscripts = tuple(to_syntax(e, "int", var_ctypes(s), element.span) for e in index)
    except ValueError:
        return None
    return load, store, subscripts


def _index(s: Schedule, node: syntax.Index):
    access = next((a for a in s.accesses if a.array == node.array and a.span == node.span and a.exact), None)
    return None if access is None else tuple(sympy.expand(i) for i in access.indices)


def _without(block: syntax.Block, removed: set) -> syntax.Block:
    stmts = []
    for stmt in block.stmts:
        if id(stmt) in removed:
            continue
        stmts.append(_without(stmt, removed) if isinstance(stmt, syntax.Block) else stmt)
    return replace(block, stmts=tuple(stmts))
