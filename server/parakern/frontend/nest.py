"""A meta_for nest: its levels, the serial loops between them, and what the front-end derives
from it (grid/block axes, bounds, accesses, locals, serial loops, divisors).

The front-end builds a schedule with these functions and a source-level strategy rebuilds its
rewritten nest with the same ones (analysis/rebuild.py), so that a transformed schedule is
exactly what the front-end would have made of the same nest.
"""
from __future__ import annotations

from dataclasses import replace

import sympy

from parakern.symbolic import cinteger
from parakern import model, syntax
from parakern.symbolic.cinteger import cdiv, cmod
from parakern.source.diagnostics import Related, error
from parakern.symbolic.symbols import sym

MAX_LEVELS = 3           # grid levels, and block levels: CUDA's three dimensions
_LOWER = "?lower"         # the key of an environment's loop-variable bounds (no C name has a `?`)
AXES = ("x", "y", "z")


# ----------------------------------------------------------------- structure

def only_statement(block: syntax.Block):
    """The one statement of a block (looking through nested blocks), else None."""
    if len(block.stmts) != 1:
        return None
    stmt = block.stmts[0]
    return only_statement(stmt) if isinstance(stmt, syntax.Block) else stmt


def split_nest(nest: syntax.Loop, diagnostics):
    """meta_for levels outer first, the serial loops between them, and the per-thread body."""
    levels, between, split_at = [], [], None
    node = nest
    while True:
        levels.append(node)
        inner = only_statement(node.body)
        chain = []
        while isinstance(inner, syntax.Loop) and not inner.parallel:
            chain.append(inner)
            inner = only_statement(inner.body)
        if isinstance(inner, syntax.Loop) and inner.parallel:
            if chain:
                if split_at is not None:
                    diagnostics.append(error(
                        "PK009", "serial loops may sit between meta_for levels at one place only "
                        "(between the grid and the block levels)", chain[0].keyword_span))
                    return None, None, None
                split_at = len(levels)
                between.extend(chain)
            node = inner
            continue
        body = node.body
        break
    for stmt in syntax.walk(body):
        if isinstance(stmt, syntax.Loop) and stmt.parallel:
            diagnostics.append(error(
                "PK009", "meta_for loops must be perfectly nested: this one sits among other "
                "statements of the loop body; make it the only statement of the enclosing meta_for",
                stmt.keyword_span, Related(levels[-1].keyword_span, "the enclosing meta_for")))
            return None, None, None
    return levels, (tuple(between), split_at), body


def grid_count(levels, between) -> int:
    """A serial loop between levels splits the nest there; otherwise half and half,
    the odd middle level going to the grid."""
    _, split_at = between
    if split_at is not None:
        return split_at
    return (len(levels) + 1) // 2


def axis(k: int, n_grid: int, n_levels: int) -> str:
    """The CUDA axis of level k (outer first) of `n_levels`: the innermost grid level and the
    innermost block level are `.x`."""
    return AXES[(n_grid - 1 - k) if k < n_grid else (n_levels - 1 - k)]


# ------------------------------------------------------------------- values

def symbolic(expr: syntax.Expr, env=None, lower=None) -> sympy.Expr:
    """`expr` in sympy, or an opaque symbol named after its position where it has no polynomial value."""
    value = syntax.to_sympy(expr, env, lower)
    return value if value is not None else \
        sympy.Symbol(f"?{expr.span.line}_{expr.span.col}", integer=True)


def serial_loop(loop: syntax.Loop, between: bool, env=None, lower=None) -> model.SerialLoop:
    """A serial loop with its bounds in loop variables and parameters (locals substituted)."""
    return model.SerialLoop(loop.var, symbolic(loop.lo, env, lower), symbolic(loop.hi, env, lower),
                            symbolic(loop.step, env, lower), between, loop.span, loop.keyword_span)


def loop_bounds(loops, lower: "dict | None" = None, env=None) -> dict:
    """`lower` with the least value of each loop's variable (from its start; None: unknown,
    a start that may be negative), outer loops first: what C's / and % need to know
    (symbolic/cinteger.py)."""
    lower = dict(lower or {})
    for loop in loops:
        lower[loop.var] = cinteger.lower_bound(symbolic(loop.lo, env, lower), lower)
    return lower


def divisors(expr: sympy.Expr):
    """The symbolic divisors of `expr` (of its floor divisions and Mods): each must not be 0."""
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.floor):
            _, den = sympy.fraction(sympy.together(node.args[0]))
            if not den.is_number:
                yield den
        elif isinstance(node, (sympy.Mod, cdiv, cmod)) and not node.args[1].is_number:
            yield node.args[1]


def body_operand_facts(nest, param_names: set) -> list:
    """What the C of the schedule needs of a parameter expression as an operand: `x / d`,
    `i % B` on integers, d != 0 (as a loop bound's divisor: C traps); `x << k`, `x >> k`,
    0 <= k < the bits of x's type (C leaves a wider shift undefined; nvcc warns of it). Then a
    witness, a verify or profile point, a tuned or fixed value keeps to them. Floating-point
    division gives no fact (it does not trap)."""
    facts = []
    for node in syntax.walk(nest):
        if not isinstance(node, syntax.Binary) or node.ctype in ("float", "double"):
            continue
        if node.op not in ("/", "%", "<<", ">>"):
            continue
        operand = syntax.to_sympy(node.right)
        if operand is None or operand.is_number or {s.name for s in operand.free_symbols} - param_names:
            continue
        if node.op in ("/", "%"):
            facts.append(model.Fact(sympy.Ne(operand, 0), "divisor", node.span))
        else:
            bits = 64 if "long" in node.ctype else 32
            facts += [model.Fact(sympy.Ge(operand, 0), "shift", node.span),
                      model.Fact(sympy.Lt(operand, bits), "shift", node.span)]
    return facts


# ------------------------------------------------------------------ accesses

def scan_body(body: syntax.Block, levels, between_loops, param_names: set[str], assigned_locals: set[str]):
    """(accesses, locals, serial loops) of the per-thread body: every array reference with
    subscripts in loop variables and parameters, every local scalar, every serial loop.
    `assigned_locals`: the locals assigned after their declaration (they have no single value)."""
    loop_names = {lp.var for lp in levels} | {lp.var for lp in between_loops}
    known = {sym(n) for n in param_names | loop_names}
    dependent = _data_locals(body)
    outer = loop_bounds(list(levels) + list(between_loops))
    accesses: list[model.Access] = []
    locals_: list[model.LocalScalar] = []
    serial: list[model.SerialLoop] = []

    def guard(cond, env, taken: bool) -> model.Guard:
        condition = syntax.to_sympy_condition(cond, env, env[_LOWER])
        uniform = condition is not None and {s.name for s in condition.free_symbols} <= param_names
        return model.Guard(condition, taken, uniform, cond.span)

    def record(expr, env, guards, loops):
        """The array reads of an expression; those in a branch of `?:` under its condition,
        as under an if's."""
        if isinstance(expr, syntax.Index):
            accesses.append(_access(expr, env, guards, loops, known, read=True, write=False, data=dependent))
            for idx in expr.indices:
                record(idx, env, guards, loops)
        elif isinstance(expr, syntax.Ternary):
            record(expr.cond, env, guards, loops)
            record(expr.then, env, guards + (guard(expr.cond, env, True),), loops)
            record(expr.other, env, guards + (guard(expr.cond, env, False),), loops)
        else:
            for child in syntax.children(expr):
                record(child, env, guards, loops)

    def visit(stmt, env, guards, loops):
        if isinstance(stmt, syntax.Block):
            env = dict(env)
            for s in stmt.stmts:
                env = visit(s, env, guards, loops) or env
            return None
        if isinstance(stmt, syntax.Decl):
            locals_.append(model.LocalScalar(stmt.name, stmt.ctype, stmt.span))
            if stmt.init is not None:
                record(stmt.init, env, guards, loops)
            value = syntax.to_sympy(stmt.init, env, env[_LOWER]) if stmt.init is not None else None
            env = dict(env)
            # A local assigned again later has no single value: keep it opaque.
            opaque = stmt.name in assigned_locals or value is None
            env[stmt.name] = sympy.Symbol(stmt.name, integer=True) if opaque else value
            if opaque:
                known.discard(sympy.Symbol(stmt.name, integer=True))
                env[_LOWER] = {**env[_LOWER], stmt.name: None}   # any sign
            return env
        if isinstance(stmt, syntax.Assign):
            record(stmt.value, env, guards, loops)
            if isinstance(stmt.target, syntax.Index):
                for idx in stmt.target.indices:
                    record(idx, env, guards, loops)
                accesses.append(_access(stmt.target, env, guards, loops, known,
                                        read=stmt.op != "=", write=True, data=dependent))
            return None
        if isinstance(stmt, syntax.If):
            record(stmt.cond, env, guards, loops)
            visit(stmt.then, env, guards + (guard(stmt.cond, env, True),), loops)
            if stmt.other is not None:
                visit(stmt.other, env, guards + (guard(stmt.cond, env, False),), loops)
            return None
        if isinstance(stmt, syntax.Loop):
            for bound in (stmt.lo, stmt.hi, stmt.step):
                record(bound, env, guards, loops)
            serial.append(_unknown_as_opaque(serial_loop(stmt, between=False, env=env, lower=env[_LOWER]), known))
            inner = dict(env)
            inner[stmt.var] = sym(stmt.var)
            inner[_LOWER] = loop_bounds([stmt], env[_LOWER], env)
            known.add(sym(stmt.var))
            visit(stmt.body, inner, guards, loops + (stmt.var,))
            return None
        return None

    serial_vars = tuple(lp.var for lp in between_loops)
    start = {_LOWER: outer}
    for level in levels:
        for bound in (level.lo, level.hi):
            record(bound, start, (), ())
    for lp in between_loops:
        for bound in (lp.lo, lp.hi, lp.step):
            record(bound, start, (), ())
    visit(body, start, (), serial_vars)
    return tuple(accesses), tuple(locals_), tuple(serial)


def _unknown_as_opaque(loop: model.SerialLoop, known: set) -> model.SerialLoop:
    """The loop with every local its bounds read that has no value in parameters and loop
    variables (`int hi = rowptr[r + 1];`) as an opaque `?name_line_col` value, as a bound read
    from an array is: the model and the code printed from it must not take it for a parameter
    (dispatch_auto's C named `hi`, which nvcc refused)."""
    bounds = (loop.lo, loop.hi, loop.step)
    unknown = {v for b in bounds for v in sympy.sympify(b).free_symbols} - known
    unknown = {v: sympy.Symbol(f"?{v.name}_{loop.span.line}_{loop.span.col}", integer=True)
               for v in unknown if "?" not in v.name}
    if not unknown:
        return loop
    return replace(loop, lo=sympy.sympify(loop.lo).xreplace(unknown), hi=sympy.sympify(loop.hi).xreplace(unknown),
                   step=sympy.sympify(loop.step).xreplace(unknown))


def _data_locals(body) -> frozenset[str]:
    """The locals whose value may read array elements: declared or assigned from an expression
    that reads an array or another such local."""
    values = [(n.name, n.init) for n in syntax.walk(body) if isinstance(n, syntax.Decl) and n.init is not None]
    values += [(n.target.name, n.value) for n in syntax.walk(body)
               if isinstance(n, syntax.Assign) and isinstance(n.target, syntax.Var)]
    found: set[str] = set()
    while True:
        more = {name for name, value in values if name not in found and _reads_data(value, found)}
        if not more:
            return frozenset(found)
        found |= more


def _reads_data(expr, locals_: "set[str] | frozenset[str]") -> bool:
    return any(isinstance(n, syntax.Index) or (isinstance(n, syntax.Var) and n.name in locals_)
               for n in syntax.walk(expr))


def _access(node: syntax.Index, env, guards, loops, known, read: bool, write: bool,
            data: frozenset = frozenset()) -> model.Access:
    indices, exact = [], True
    for k, idx in enumerate(node.indices):
        value = syntax.to_sympy(idx, env, env.get(_LOWER))
        if value is None:
            value = sympy.Symbol(f"?{node.array}{k}_{idx.span.line}_{idx.span.col}", integer=True)
            exact = False
        elif not value.free_symbols <= known:
            exact = False
        indices.append(value)
    reads = any(_reads_data(idx, data) for idx in node.indices)
    return model.Access(node.array, tuple(indices), read, write, exact, guards, loops, node.span, reads)


def mark_use(array: model.Array, accesses) -> model.Array:
    """`array` with `read` and `written` as the accesses say."""
    mine = [a for a in accesses if a.array == array.name]
    return replace(array, read=any(a.is_read for a in mine), written=any(a.is_write for a in mine))
