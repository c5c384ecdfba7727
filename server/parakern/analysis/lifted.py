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
parameters (the same element on every iteration), its load and its store are the only
references to the array in the body and run unconditionally (through plain blocks only),
the array is not staged in shared memory in this variant (its copy would then be the one
the body sees), and the facts prove that the loops run at least once (the load must not
read an element the loops would never touch). No other thread touches the element:
meta_for iterations are independent (MetaFork's contract, checked by dependence.py).

A plan, not a rewrite of the schedule (the model has no place for per-thread statements
outside the between loops): the IR the registers are counted on (ir/lower.py), the CUDA
(codegen/kernel.py) and the traffic analysis all run `before`, the between loops around
`body`, then `after`.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import sympy

from parakern import constraints as cs
from parakern import syntax
from parakern.kernel import Kernel
from parakern.model import Schedule


@dataclass(frozen=True)
class Lifted:
    before: tuple = ()          # per-thread statements before the between loops (the loads)
    body: "syntax.Block | None" = None   # the body the between loops run
    after: tuple = ()           # per-thread statements after them (the stores)
    arrays: tuple[str, ...] = ()   # arrays whose accumulator moved out


def lifted(kernel: Kernel) -> Lifted:
    """The kernel's per-thread code around its between loops (nothing moved where nothing can)."""
    return _lifted(kernel.schedule, tuple(kernel.cached))


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
    if array in cached:
        return None
    store = next((st for st in stmts[n + 1:] if isinstance(st, syntax.Assign) and st.op == "="
                  and isinstance(st.target, syntax.Index) and st.target.array == array
                  and isinstance(st.value, syntax.Var) and st.value.name == name), None)
    if store is None:
        return None
    uses = [x for x in syntax.walk(s.body) if isinstance(x, syntax.Index) and x.array == array]
    if len(uses) != 2 or not all(u is element or u is store.target for u in uses):
        return None   # another reference to the array: it may be this element
    after = stmts[next(k for k, st in enumerate(stmts) if st is store) + 1:]
    if any(isinstance(x, syntax.Var) and x.name == name for st in after for x in syntax.walk(st)):
        return None
    index = _index(s, element)
    if index is None or _index(s, store.target) != index:
        return None
    if {v.name for e in index for v in e.free_symbols} - fixed:
        return None   # it moves with a serial loop (or reads a local with no single value)
    from parakern.strategies.rebuild import to_syntax, var_ctypes
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
