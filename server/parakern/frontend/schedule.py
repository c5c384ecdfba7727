"""One meta_schedule statement -> `model.Schedule` (or the diagnostics that stop it)."""
from __future__ import annotations

import difflib
from dataclasses import dataclass

import sympy
from pycparser import c_ast

from parakern import model, syntax
from parakern.source.diagnostics import Diagnostic, Related, Span, error, warning
from parakern.frontend.context import FileContext, FunctionContext, declarations, identifiers
from parakern.frontend.convert import Converter, Scope
from parakern.frontend.ctypes import Symbol
from parakern.frontend.nest import (MAX_LEVELS, axis, body_operand_facts, divisors, grid_count, loop_bounds, mark_use,
                                    scan_body, serial_loop, split_nest, symbolic)
from parakern.frontend.signs import settled
from parakern.symbolic.symbols import sym

# C++ keywords that C allows as names: the generated CUDA is C++, where nvcc rejects them
# ("expected an identifier"), and the kernels keep the user's names
CXX_KEYWORDS = frozenset(
    "alignas alignof and and_eq asm bitand bitor catch char8_t char16_t char32_t class co_await co_return "
    "co_yield compl concept const_cast consteval constexpr constinit decltype delete dynamic_cast explicit "
    "export friend mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected "
    "public reinterpret_cast requires static_assert static_cast template this thread_local throw try typeid "
    "typename using virtual wchar_t xor xor_eq".split())
# CUDA's built-in variables: the kernels read them (blockIdx.x), so a name of the user's cannot
# hide them (`const int blockIdx = blockIdx.x;` does not compile).
CUDA_BUILTINS = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"})
# Names the constraints reserve for the machine (paper section 3.2).
MACHINE_NAMES = {"R_B": "registers per block", "Z": "shared memory per block",
                 "T": "threads per block", "P_occ": "occupancy"}


@dataclass(frozen=True)
class Site:
    """Where a schedule sits in its function: the names, asserts and loops around it."""
    label: c_ast.Label
    env: dict           # name -> Symbol visible at the schedule
    asserts: tuple      # (pycparser condition, span, its names' declarations) of assert() calls before it
    host_loops: tuple   # (variable name or '', loop node) of enclosing host loops
    index: int          # position among the function's schedules
    guarded: bool = False   # inside a host if or switch
    conditions: tuple = ()  # the same of the host ifs around it (and ifs that return before it)


def analyze_schedule(fctx: FunctionContext, site: Site) -> tuple["model.Schedule | None", list[Diagnostic]]:
    ctx = fctx.file
    mark = ctx.prepared.schedule(site.label.name)
    keyword = mark.keyword_span
    diagnostics: list[Diagnostic] = []
    nest_node = _find_nest(ctx, site.label.stmt, keyword, diagnostics)
    if nest_node is None:
        return None, diagnostics

    conv = Converter(ctx.index, Scope(outer=dict(site.env)), ctx.defines, ctx.prepared.meta_for,
                     ctx.typedefs)
    nest = conv.loop(nest_node, parallel=True)
    diagnostics.extend(conv.diagnostics)
    if any(d.severity.value == "error" for d in diagnostics):
        return None, diagnostics

    levels, between, body = split_nest(nest, diagnostics)
    if levels is None:
        return None, diagnostics
    n_grid = grid_count(levels, between)
    grid_loops, block_loops = levels[:n_grid], levels[n_grid:]
    _rectangular(levels, between[0], n_grid, ctx.text_of, diagnostics)
    for kind, loops in (("grid", grid_loops), ("block", block_loops)):
        if len(loops) > MAX_LEVELS:
            extra = loops[MAX_LEVELS]
            diagnostics.append(error(
                "PK006", f"{len(loops)} meta_for levels map to the {kind} but CUDA has only 3 "
                f"{kind} dimensions; merge two levels into one (e.g. i = a * n + b)",
                extra.keyword_span, Related(loops[0].keyword_span, f"the first {kind} level")))
    if not block_loops:
        diagnostics.append(warning(
            "PK016", "a single meta_for level maps to the grid with one thread per block; nest a "
            "second meta_for (e.g. over a block size B) for threads within a block",
            levels[0].keyword_span))
    if any(d.severity.value == "error" for d in diagnostics):
        return None, diagnostics

    scalars = _Scalars(fctx, site, conv, diagnostics)
    arrays = _arrays(conv, nest, site, scalars, diagnostics)
    cache = _cache(mark, site, arrays, diagnostics)
    if any(d.severity.value == "error" for d in diagnostics):
        return None, diagnostics

    params = scalars.params(arrays)
    for param in params:
        if param.name in MACHINE_NAMES:
            diagnostics.append(error(
                "PK018", f"parameter '{param.name}' has the name of the machine parameter "
                f"{param.name} ({MACHINE_NAMES[param.name]}) that the case constraints use; "
                "rename it", scalars.used_span(param.name),
                Related(param.span, f"'{param.name}' is declared here")))
    if any(d.severity.value == "error" for d in diagnostics):
        return None, diagnostics
    param_names = {p.name for p in params} | {d.name for d in scalars.derived}
    accesses, locals_, serial_inside = scan_body(body, levels, between[0], param_names, conv.assigned_locals)
    named = [(p.name, p.span) for p in params] + [(a.name, a.span) for a in arrays] + \
        [(d.name, d.span) for d in scalars.derived] + \
        [(d.name, ctx.index.name_span(d)) for d in declarations(site.label.stmt)]   # meta_for, loops, locals
    for name, span in dict.fromkeys(named):
        if name in CXX_KEYWORDS:
            diagnostics.append(error(
                "PK018", f"'{name}' is a C++ keyword: the generated CUDA is C++, where it cannot be a name; "
                "rename it", span))
        elif name in CUDA_BUILTINS:
            diagnostics.append(error(
                "PK018", f"'{name}' is a CUDA built-in variable, which the generated kernels read; rename it",
                span))
    _hidden_outer_names(conv, params, arrays, scalars.derived, diagnostics)
    if any(d.severity.value == "error" for d in diagnostics):
        return None, diagnostics
    arrays = tuple(mark_use(a, accesses) for a in arrays)
    for array in arrays:
        if array.written and site.env[array.name].is_const:
            write = next(a for a in accesses if a.array == array.name and a.is_write)
            diagnostics.append(error(
                "PK004", f"'{array.name}' is declared const, and the schedule writes it: remove const from "
                "its declaration or write another array", write.span,
                Related(array.span, f"'{array.name}' is declared here")))
    if any(d.severity.value == "error" for d in diagnostics):
        return None, diagnostics
    parallel = tuple(
        model.ParallelLoop(loop.var, symbolic(loop.lo), symbolic(loop.hi), "grid" if k < n_grid else "block",
                           axis(k, n_grid, len(levels)),
                           ctx.index.header_at(loop.keyword_span), loop.keyword_span)
        for k, loop in enumerate(levels))
    facts = scalars.facts(parallel, site, conv, nest, param_names)
    span = keyword.to(ctx.index.stmt_span(site.label.stmt))
    schedule = model.Schedule(
        id=f"{fctx.name}:{site.index}", function=fctx.name, index=site.index, span=span,
        keyword_span=keyword, grid=parallel[:n_grid], block=parallel[n_grid:],
        between=tuple(serial_loop(loop, between=True, lower=loop_bounds(levels + list(between[0])))
                      for loop in between[0]),
        serial=tuple(serial_inside), body=body, nest=nest, accesses=accesses, locals=locals_,
        params=params, derived=tuple(scalars.derived), arrays=arrays, cache=cache, facts=facts,
        host_loops=tuple(name for name, _ in site.host_loops if name), text=ctx.text_of(span),
        function_span=fctx.span, host_guarded=site.guarded or bool(site.host_loops))
    return settled(schedule), diagnostics


# ----------------------------------------------------------------- structure

def _hidden_outer_names(conv: Converter, params, arrays, derived, diagnostics) -> None:
    """A loop variable or a local of the block named like a scalar or an array the block reads
    from outside it (a parameter of its kernel, an array, a derived scalar): C lets it hide that
    name, but the kernel declares both in the scope of its threads ("n" has already been
    declared) and the analysis knows a parameter by its name. Names the block does not read
    from outside (a host loop's `i`) may be used again."""
    outer = {x.name: x.span for group in (params, arrays, derived) for x in group}
    for name, span in conv.declared:
        if name in outer:
            diagnostics.append(error(
                "PK024", f"'{name}' is declared again inside meta_schedule, where the '{name}' declared before "
                "it is read too (it is a parameter of the kernel, which declares both in one scope); rename "
                "this one", span, Related(outer[name], f"'{name}' is declared here")))


def _rectangular(levels, between, n_grid: int, text_of, diagnostics) -> None:
    """A meta_for's start and bound may not read an enclosing meta_for's variable, or a serial
    loop's between the grid and the block levels: CUDA's grid and blocks are rectangular,
    sized once at the launch."""
    for k, level in enumerate(levels):
        outer = list(levels[:k]) + (list(between) if k >= n_grid else [])
        for what, expr in (("start", level.lo), ("bound", level.hi)):
            read = [lp for lp in outer if lp.var in syntax.variables(expr)]
            if read:
                lp = read[0]
                kind = "meta_for" if lp.parallel else "serial loop"
                diagnostics.append(error(
                    "PK003", f"the {what} of meta_for '{level.var}' reads '{lp.var}', the variable of an enclosing "
                    f"{kind}: CUDA's grid and blocks are rectangular; give '{level.var}' the largest range it takes "
                    f"and put the body under if ({level.var} {'>=' if what == 'start' else '<'} {text_of(expr.span)})",
                    expr.span,
                    Related(lp.keyword_span, f"'{lp.var}' is this loop's variable")))


def _find_nest(ctx: FileContext, stmt, keyword: Span, diagnostics) -> "c_ast.For | None":
    """The single meta_for nest that a schedule must consist of."""
    items = [stmt]
    if isinstance(stmt, c_ast.Compound):
        items = [s for s in (stmt.block_items or ()) if not isinstance(s, c_ast.EmptyStatement)]
    nests = [s for s in items if isinstance(s, c_ast.For) and
             (s.coord.line, s.coord.column) in ctx.prepared.meta_for]
    if not nests:
        diagnostics.append(error(
            "PK009", "meta_schedule contains no meta_for loop, so nothing runs in parallel; "
            "write the block as a meta_for loop nest", keyword))
        return None
    others = [s for s in items if s is not nests[0]]
    if others:
        first = others[0]
        diagnostics.append(error(
            "PK009", "a meta_schedule must hold exactly one meta_for loop nest; move this "
            "statement into the nest or out of the meta_schedule",
            ctx.index.stmt_span(first), Related(ctx.index.for_header(nests[0]), "the loop nest")))
        return None
    return nests[0]


# ------------------------------------------------------------------- scalars

def _conjuncts(cond):
    """The operands of a chain of && (the condition itself when it is none)."""
    if isinstance(cond, c_ast.BinaryOp) and cond.op == "&&":
        return _conjuncts(cond.left) + _conjuncts(cond.right)
    return [cond]


class _Scalars:
    """Parameters, derived scalars and facts of one schedule (paper, Definition 1)."""

    def __init__(self, fctx: FunctionContext, site: Site, conv: Converter, diagnostics):
        self.fctx = fctx
        self.site = site
        self.conv = conv
        self.diagnostics = diagnostics
        self.derived: list[model.Derived] = []
        self._derived_names: set[str] = set()
        self._visited: set[str] = set()
        self.used: dict[str, Span] = {}
        for name in list(conv.used_outer):
            self._use(name)

    def used_span(self, name: str) -> Span:
        """Where the block first reads `name` (its declaration if read only through a definition)."""
        return self.conv.used_outer.get(name, self.site.env[name].span)

    def _use(self, name: str) -> None:
        """Records a scalar read by the block, following derived definitions."""
        if name in self._visited:
            return
        self._visited.add(name)
        symbol: Symbol = self.site.env[name]
        value = self._derived_value(symbol)
        if value is None:
            self.used[name] = symbol.span
            return
        expr, deps = value
        for dep in deps:   # its ingredients first: a definition reads only earlier ones
            self._use(dep)
        self.derived.append(model.Derived(name, symbol.ctype, expr, symbol.span))
        self._derived_names.add(name)

    def _derived_value(self, symbol: Symbol):
        """(value, dependencies) when `symbol` is fixed by its initializer at the schedule."""
        fctx = self.fctx
        if symbol.init is None or symbol.is_array or symbol.name in fctx.param_names:
            return None
        if symbol.name in fctx.global_names and not symbol.is_const:
            return None
        if fctx.assigned.get(symbol.name):
            return None
        conv = Converter(fctx.file.index, Scope(outer=dict(self.site.env)), fctx.file.defines,
                         fctx.file.prepared.meta_for, fctx.file.typedefs)
        try:
            init = conv.expr(symbol.init)
        except Exception:
            return None
        if conv.diagnostics or not syntax.is_integer(init.ctype):
            return None
        value = syntax.to_sympy(init)
        if value is None:
            return None
        deps = list(conv.used_outer)
        decl_at = (symbol.span.line, symbol.span.col)
        here = (self.site.label.coord.line, self.site.label.coord.column)
        for dep in deps:
            if dep not in fctx.param_names and self.site.env[dep].init is not None and \
                    self._derived_value(self.site.env[dep]) is not None:
                continue
            if fctx.changed_between(dep, decl_at, here):
                return None
        return value, deps

    def params(self, arrays: tuple[model.Array, ...]) -> tuple[model.Param, ...]:
        sizes: set[str] = set()
        for array in arrays:
            for dim in array.dims:
                if dim is not None:
                    sizes |= {s.name for s in dim.free_symbols}
        derived = {d.name: d for d in self.derived}
        # A derived name in a dimension makes its ingredients data parameters.
        for name in list(sizes):
            if name in derived:
                sizes |= {s.name for s in derived[name].value.free_symbols}
        order = sorted(self.used, key=lambda n: (self.used[n].line, self.used[n].col))
        result = []
        for name in order:
            symbol = self.site.env[name]
            kind = "data" if name in sizes else "program"
            result.append(model.Param(name, symbol.ctype, kind, symbol.span))
        return tuple(sorted(result, key=lambda p: p.kind != "data"))

    def _in_parameters(self, relation, param_names: set):
        """relation with the local scalars the schedule does not read replaced by their
        initializers: `int h = n / B; assert(h >= 2048);` is a fact on n and B, where h stood as
        a free unknown (tune refused every B)."""
        for _ in range(8):   # a definition may read another: one level each time round
            free = {s for s in relation.free_symbols if s.name not in param_names}
            if not free:
                return relation
            swap = {}
            for s in free:
                symbol = self.site.env.get(s.name)
                value = self._derived_value(symbol) if symbol is not None else None
                if value is not None:
                    swap[s] = value[0]
            if not swap:
                break
            relation = relation.xreplace(swap)
        return relation

    def _no_longer(self, names: dict, start: tuple, here: tuple) -> str:
        """Why a condition at `start` (an assert, a host if) may not hold at the schedule at `here`,
        or "": a variable it reads declared again (another variable of that name), or changed
        (FunctionContext.changed_between: assigned, through its address, a global by a call); a
        label in between (a goto may skip it)."""
        hidden = sorted(n for n, symbol in names.items() if self.site.env.get(n) is not symbol)
        if hidden:
            return f"{', '.join(hidden)} at the meta_schedule is another variable (declared again in between)"
        changed = sorted(n for n in names if self.fctx.changed_between(n, start, here))
        if changed:
            how = " or has its address taken" if any(n in self.fctx.address_taken for n in changed) else ""
            how += ", or is a global variable a call in between may change" \
                if any(n in self.fctx.global_names for n in changed) else ""
            return f"{', '.join(changed)} may change before the meta_schedule (assigned in between{how})"
        if self.fctx.jumped_into(start, here):
            return "a label lies between it and the meta_schedule (a goto may skip it)"
        return ""

    def facts(self, loops, site: Site, conv: Converter, nest, param_names: set) -> tuple[model.Fact, ...]:
        facts: list[model.Fact] = []
        for loop in loops:
            facts.append(model.Fact(sympy.Ge(loop.extent, 1), "loop bound", loop.span))
        for d in self.derived:
            facts.append(model.Fact(sympy.Eq(sym(d.name), d.value), "definition", d.span))
        for expr, span in [(d.value, d.span) for d in self.derived] + [(lp.hi, lp.span) for lp in loops]:
            for divisor in divisors(expr):
                facts.append(model.Fact(sympy.Ne(divisor, 0), "divisor", span))
        facts += body_operand_facts(nest, param_names)
        here = (site.label.coord.line, site.label.coord.column)
        for cond, span, names, kind in [(*a, "assert") for a in site.asserts] + \
                [(*c, "host if") for c in site.conditions]:
            why = self._no_longer(names, (span.line, span.col), here)
            if why:   # `assert(s > 0); s = 0;`: what it says no longer holds at the schedule
                if kind == "assert":
                    self.diagnostics.append(warning(
                        "PK023", f"{why}: the analysis does not use this assertion; assert it just before "
                        "the meta_schedule", span))
                continue
            # each conjunct alone: one the analysis cannot read (B & (B - 1)) used to take the
            # others (B > 16) with it, without a word
            for part in _conjuncts(cond):
                read = {n.name for n in identifiers(part)}
                if kind == "host if" and (read - param_names or read & {n for n, _ in site.host_loops}):
                    continue   # `if (flag)`, `if (s % 4 == 3)` of a host loop: nothing the kernels or tune use
                checker = Converter(conv.index, Scope(outer=dict(site.env)), conv.defines, conv.meta_for,
                                    conv.typedefs)
                converted = checker.expr(part)
                if not checker.diagnostics and syntax.wraps_around(converted):
                    if kind == "assert":
                        self.diagnostics.append(warning(
                            "PK023", "this condition of the assertion computes in unsigned arithmetic, which wraps "
                            "around (x - 1u is the largest unsigned value at x = 0): the analysis does not use it; "
                            "compare without the unsigned subtraction (x >= 1u)", conv.index.node_span(part)))
                    continue
                relation = syntax.to_sympy_condition(converted)
                if relation is None or checker.diagnostics:
                    if read & param_names and kind == "assert":   # an if on data or flags is ordinary code
                        names_read = ", ".join(sorted(read & param_names))
                        self.diagnostics.append(warning(
                            "PK023", f"this condition of the assertion reads {names_read} but the "
                            "analysis cannot use it (only +, -, *, /, % and comparisons of integers): tune, "
                            "bench and emit --fix do not check it; assert it in that form if it can be",
                            conv.index.node_span(part)))
                    continue
                # a function argument the schedule does not read stays: bench judges it with its value
                relation = self._in_parameters(relation, param_names)
                pieces = relation.args if isinstance(relation, sympy.And) else (relation,)
                facts.extend(model.Fact(piece, kind, span) for piece in pieces)
        unique, seen = [], set()
        for fact in facts:
            if fact.relation in (sympy.true,) or fact.relation in seen:
                continue
            seen.add(fact.relation)
            unique.append(fact)
        return tuple(unique)


# -------------------------------------------------------------------- arrays

def _arrays(conv: Converter, nest: syntax.Loop, site: Site, scalars: _Scalars, diagnostics):
    names = []
    for node in syntax.walk(nest):
        if isinstance(node, syntax.Index) and node.array not in names:
            names.append(node.array)
    arrays = []
    for name in names:
        symbol: Symbol = site.env[name]
        dims = []
        for k, dim in enumerate(symbol.dims):
            if dim is None:
                if k > 0:   # `float b[n][]` (an editor's closed bracket): C allows only the first empty
                    diagnostics.append(error(
                        "PK012", f"extent {k + 1} of '{name}' is empty: C leaves only the first extent of an array "
                        f"parameter empty; give every other one ({symbol.ctype} {name}[n][m])", symbol.span))
                dims.append(None)
                continue
            if isinstance(dim, c_ast.ID) and dim.name == "*":   # `float b[*]`: a prototype's form only
                diagnostics.append(error("PK012", f"'{name}[*]' has no size: [*] belongs in prototypes; in the "
                                         f"definition give its size ({symbol.ctype} {name}[n])", symbol.span))
                dims.append(None)
                continue
            checker = Converter(conv.index, Scope(outer=dict(site.env)), conv.defines, conv.meta_for,
                                conv.typedefs)
            value = syntax.to_sympy(checker.expr(dim))
            for used in checker.used_outer:
                scalars._use(used)
            if value is not None and value.is_number and value <= 0:   # gcc: size of array is negative
                diagnostics.append(error("PK012", f"extent {k + 1} of '{name}' is {value}: an array's "
                                         "extents are positive", symbol.span))
            dims.append(value)
        arrays.append(model.Array(name, symbol.ctype, tuple(dims), symbol.rank, symbol.is_pointer,
                                  False, False, symbol.span))
    return tuple(arrays)


def _cache(mark, site: Site, arrays, diagnostics) -> tuple[model.CachedArray, ...]:
    used = {a.name for a in arrays}
    result, seen = [], set()
    for item in mark.cache:
        if item.name in seen:
            diagnostics.append(error("PK005", f"'{item.name}' is named twice in cache()", item.span))
            continue
        seen.add(item.name)
        symbol = site.env.get(item.name)
        if symbol is None:
            # a misspelt array (cache(A) of `float a[n]`): name the schedule's arrays that come close
            close = difflib.get_close_matches(item.name, sorted(used), n=1, cutoff=0.5) or \
                [a for a in sorted(used) if a.lower() == item.name.lower()]
            hint = f"; did you mean '{close[0]}'?" if close else \
                (f" (the arrays of this meta_schedule: {', '.join(sorted(used))})" if used else "")
            diagnostics.append(error("PK005", f"cache({item.name}): '{item.name}' is not declared{hint}",
                                     item.span))
        elif not symbol.is_array:
            diagnostics.append(error(
                "PK005", f"cache({item.name}): '{item.name}' is a scalar; cache() takes arrays "
                "read or written in the block", item.span, Related(symbol.span, "declared here")))
        elif item.name not in used:
            diagnostics.append(error(
                "PK005", f"cache({item.name}): array '{item.name}' is not used in this meta_schedule; "
                "remove it from cache()", item.span))
        else:
            result.append(model.CachedArray(item.name, item.span))
    return tuple(result)

