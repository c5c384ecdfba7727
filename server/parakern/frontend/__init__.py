"""MetaFork C -> frozen models of its meta_schedule blocks, plus diagnostics.

Entry points: `analyze_source(text, file)` and `analyze_file(path)`. They
never raise on user input: every problem is a diagnostic with a position.
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from pycparser import c_ast, c_generator, c_parser

from parakern.process import interrupts
from parakern import model, syntax
from parakern.source.diagnostics import Diagnostic, Severity, Span, error, warning
from parakern.frontend.constexpr import evaluate
from parakern.frontend.context import FileContext, FunctionContext, collect_writes, identifiers, nesting_too_deep
from parakern.frontend.convert import Converter, Scope
from parakern.frontend.ctypes import Symbol, file_typedefs, symbol_from_decl
from parakern.frontend.generated import Region, generated_regions, mask_regions, region_fingerprint
from parakern.frontend.parse import parse
from parakern.frontend.preprocess import LABEL_PREFIX, line_file, prepare
from parakern.frontend.schedule import Site, analyze_schedule
from parakern.frontend.spans import TokenIndex
from parakern.source.text import normalize_newlines, position_at

__all__ = ["analyze_source", "analyze_file"]

# Levels of statements and expressions a meta_schedule may nest: its translation and
# analysis recurse on them (a 100-term sum is 100 levels: pycparser nests a + b + c to the left).
# A written-out high-order stencil has hundreds of terms; every stage was run on a 390-term
# sum (optimize, verify with and without cache, emit + nvcc, profile --emulate, tune) within
# Python's default recursion limit.
MAX_NESTING = 400


def analyze_file(path: "str | Path") -> model.FrontendResult:
    path = Path(path)
    return analyze_source(path.read_text(encoding="utf-8", errors="replace"), str(path))


def analyze_source(text: str, file: str = "<input>") -> model.FrontendResult:
    try:
        return _analyze(text, file)
    except Exception as exc:  # a bug of ours must not cost the user the editor session
        interrupts.reraise()
        diag = error("PK099", f"internal error in the parakern front-end ({type(exc).__name__}: {exc}); "
                     "please report it with this file", Span.point(file, 1, 1))
        return model.FrontendResult(file, (), (diag,))


def _analyze(text: str, file: str) -> model.FrontendResult:
    text = normalize_newlines(text)
    regions = generated_regions(text)
    damaged = [_damaged(text, r, file) for r in regions if r.damaged]
    text = mask_regions(text, regions)
    prepared = prepare(text, file)
    diagnostics: list[Diagnostic] = damaged + list(prepared.diagnostics)
    ast, parse_diagnostics = parse(prepared)
    diagnostics.extend(parse_diagnostics)
    if ast is None:
        return model.FrontendResult(file, (), _sorted(diagnostics))
    index = TokenIndex(prepared.tokens, file)
    typedefs = file_typedefs(ast)
    ctx = FileContext(prepared, index, text, {}, typedefs, {})
    ctx.defines = {**_enumerators(ast, index), **_defines(prepared, typedefs)}
    schedules: list[model.Schedule] = []
    for ext in ast.ext:
        if isinstance(ext, c_ast.Decl) and ext.coord is not None and ext.coord.file == line_file(file):
            symbol = symbol_from_decl(ext, index.node_span(ext), typedefs)
            if symbol is not None:
                ctx.globals[ext.name] = symbol
        elif isinstance(ext, c_ast.FuncDef):
            found, diags = _guarded_function(ctx, ext)
            schedules.extend(found)
            diagnostics.extend(diags)
    errors = any(d.severity == Severity.ERROR for d in diagnostics)
    diagnostics += [d for r in regions if r.source and not r.damaged
                    if (d := _stale(text, r, schedules, file, errors))]
    diagnostics += _copies(text, regions, file)
    return model.FrontendResult(file, tuple(schedules), _sorted(_macro_calls(diagnostics, prepared.macros, text)))


def _macro_calls(diagnostics: list, macros: tuple, text: str) -> list:
    """The diagnostics with each call of a function-like macro (refused at its #define, PK002)
    left out of the calls that cannot be offloaded (PK007: `IDX` is no function), the PK002
    naming where it is used instead: one message, at its cause."""
    if not macros:
        return diagnostics
    lines = text.split("\n")
    call = re.compile(r"(" + "|".join(map(re.escape, macros)) + r")\s*\(")

    def called(d: Diagnostic) -> "str | None":
        if d.code != "PK007" or not 0 < d.span.line <= len(lines):
            return None
        found = call.match(lines[d.span.line - 1], d.span.col - 1)
        return found.group(1) if found else None

    uses: dict = {}
    for d in diagnostics:
        if (name := called(d)) is not None:
            uses.setdefault(name, []).append(d.span)
    out = []
    for d in diagnostics:
        if called(d) is not None:
            continue
        name = next((m for m in uses if d.code == "PK002" and d.message.startswith(f"function-like macro {m}(")), None)
        if name is not None:
            places = ", ".join(f"{s.line}:{s.col}" for s in uses[name])
            d = dataclasses.replace(d, message=f"{d.message} (it is used inside meta_schedule at {places}, "
                                    "where parakern does not expand it)")
        out.append(d)
    return out


def _line_span(text: str, offsets: tuple, file: str) -> Span:
    """The Span of a marker line's (start, end) offsets in `text`."""
    (line, col), (end_line, end_col) = position_at(text, offsets[0]), position_at(text, offsets[1])
    return Span(file, line + 1, col + 1, end_line + 1, end_col + 1)


def _copies(text: str, regions, file: str) -> list:
    """PK041 on each intact region of an id a region before it has: inserting replaces the first
    only, and nvcc refuses the second definitions."""
    out, first = [], {}
    for region in regions:
        if region.id not in first:
            first[region.id] = region
            continue
        if region.damaged:
            continue
        where = position_at(text, first[region.id].start)[0] + 1
        out.append(warning("PK041", f"a second generated region of {region.id} (the first begins at line {where}): "
                           "delete this one; inserting the dispatcher again replaces the first only",
                           _line_span(text, region.begin, file)))
    return out


def _stale(text: str, region: Region, schedules, file: str, errors: bool) -> "Diagnostic | None":
    """PK041 on the begin marker of a region generated from another version of its function
    (edited since: its kernels and dispatcher are not those of the code as it is), or of a
    schedule the file no longer has. None where the region is up to date, or where its schedule
    is missing from a file with errors (one that does not analyse is still there: `errors`)."""
    span = _line_span(text, region.begin, file)
    schedule = next((x for x in schedules if x.id == region.id), None)
    if schedule is None and errors:
        return None
    if schedule is None:
        return warning("PK041", f"the generated region of {region.id} has no meta_schedule {region.id} in this file "
                       "any more (removed, or numbered otherwise): delete the region, or insert the dispatcher of "
                       "the schedule as it is numbered now", span)
    fs = schedule.function_span
    if fs is None or region_fingerprint(text, (fs.line - 1, fs.col - 1, fs.end_line - 1, fs.end_col - 1)) \
            == region.source:
        return None
    return warning("PK041", f"the generated region of {region.id} was made from an earlier version of function "
                   f"{schedule.function}, edited since: its kernels and dispatcher may not do what the code says "
                   f"now. Insert the dispatcher of {region.id} again to update it", span)


def _damaged(text: str, region: Region, file: str) -> Diagnostic:
    """PK019 on the marker a damaged region has left (parakern.frontend.generated)."""
    span = _line_span(text, region.marker, file)
    lost = {"begin": f"// parakern:begin {region.id}", "end": f"// parakern:end {region.id}"}.get(region.missing)
    if lost:
        message = (f"the generated region of {region.id} has lost its '{lost}' line; it is still read as "
                   "generated code. Restore the line or delete the region (quick fixes)")
    else:
        message = (f"this marker of {region.id} has no partner and no generated code of {region.id} "
                   "next to it; delete the line (quick fix), or insert the dispatcher again")
    return warning("PK019", message, span)


def _guarded_function(ctx: FileContext, func: c_ast.FuncDef):
    """_analyze_function; a function too deep to walk, or a bug of ours, costs that function
    alone its analysis (one diagnostic on its name), never the others."""
    try:
        return _analyze_function(ctx, func)
    except RecursionError:
        message = (f"function {func.decl.name} nests statements or expressions too deeply to analyse; "
                   "split it into smaller statements")
        code = "PK013"
    except Exception as exc:
        interrupts.reraise()
        message = (f"internal error while analysing function {func.decl.name} ({type(exc).__name__}: "
                   f"{exc}); please report it with this file")
        code = "PK099"
    coord = func.decl.coord
    where = Span.point(ctx.prepared.file, coord.line, coord.column, len(func.decl.name or "")) \
        if coord is not None else Span.point(ctx.prepared.file, 1, 1)
    return [], [error(code, message, where)]


def _sorted(diagnostics) -> tuple[Diagnostic, ...]:
    unique = list(dict.fromkeys(diagnostics))
    return tuple(sorted(unique, key=lambda d: (d.span.line, d.span.col, d.code)))


def _enumerators(ast: c_ast.FileAST, index) -> dict:
    """The constants of the file's enums (`enum { K3 = 3 };`) as int constants, as a #define of
    them would be; an enumerator whose value is no integer expression of literals and earlier
    enumerators is left out (the next ones too: their values count on it)."""
    out: dict = {}
    for node in _enum_nodes(ast):
        following = 0
        for item in node.values.enumerators if node.values is not None else ():
            try:
                value = following if item.value is None else evaluate(item.value, {n: c.value for n, c in out.items()})
            except ValueError:
                break
            out[item.name] = syntax.Const(value, "int", index.node_span(item), str(value))
            following = value + 1
    return out


def _enum_nodes(node):
    if isinstance(node, c_ast.Enum):
        yield node
    if isinstance(node, c_ast.FuncDef):
        return   # a function's own enums are its scope's, not the file's
    for _, child in node.children():
        yield from _enum_nodes(child)


def _defines(prepared, typedefs) -> dict:
    """#define NAME value -> the value as a typed expression (or why it cannot be used)."""
    result: dict = {}
    for define in prepared.defines:
        if not define.value:
            continue
        snippet = f"void __pkdef(void) {{ ({define.value}); }}\n"
        try:
            tiny = prepare(snippet, "<define>")
            ast = c_parser.CParser().parse(tiny.prelude + tiny.text, filename="<define>")
            node = ast.ext[-1].body.block_items[0]
            conv = Converter(TokenIndex(tiny.tokens, "<define>"), Scope(outer={}), result,
                             tiny.meta_for, typedefs)
            value = conv.expr(node)
            if conv.diagnostics:
                raise ValueError(conv.diagnostics[0].message)
            result[define.name] = value
        except Exception as exc:
            message = exc.args[0] if isinstance(exc, ValueError) and exc.args else "cannot be read"
            why = "- " + message if isinstance(exc, ValueError) else "is not a supported expression"
            result[define.name] = error(
                "PK002", f"#define {define.name} is used in a meta_schedule but its value '{define.value}' {why}",
                define.span)
    return result


def _analyze_function(ctx: FileContext, func: c_ast.FuncDef):
    name = func.decl.name
    params: dict[str, Symbol] = {}
    func_type = func.decl.type
    args = getattr(func_type, "args", None)
    declared = {p.name: p for p in (args.params if args is not None else ()) if isinstance(p, c_ast.Decl) and p.name}
    for param in (args.params if args is not None else ()):
        if isinstance(param, c_ast.Decl) and param.name:
            early = _size_before_declaration(ctx, name, param, declared, params)
            if early is not None:
                return [], [early]
            symbol = symbol_from_decl(param, ctx.index.node_span(param), ctx.typedefs)
            if symbol is not None:
                params[param.name] = symbol
    fctx = FunctionContext(ctx, name, set(params), set(ctx.globals))
    fctx.span = ctx.index.node_span(func.decl).to(ctx.index.stmt_span(func.body))
    collect_writes(func.body, ctx.index, fctx)
    walker = _Walker(ctx, fctx, [dict(ctx.globals), params])
    walker.visit(func.body)
    if func.param_decls and (walker.schedules or walker.diagnostics):
        # int n; float *a; between `f(n, a)` and `{`: its names would read as undeclared
        coord = func.decl.coord
        where = Span.point(ctx.prepared.file, coord.line, coord.column, len(name))
        return [], [error("PK022", f"function {name} declares its parameters in the old (K&R) style; "
                                   f"declare them in the parentheses: {name}(int n, float *a, ...)", where)]
    return walker.schedules, walker.diagnostics


def _size_before_declaration(ctx: FileContext, function: str, param: c_ast.Decl, declared: dict,
                             before: dict) -> "Diagnostic | None":
    """`void f(float a[n], int n)`: C reads a parameter's array size where it is written, so n
    is not declared there yet (gcc: "'n' undeclared"). The analysis would take it for the later
    parameter; say so instead, at the name, with the parameters in an order that compiles."""
    node = param.type
    while isinstance(node, (c_ast.ArrayDecl, c_ast.PtrDecl)):
        if isinstance(node, c_ast.ArrayDecl) and node.dim is not None:
            for sub in identifiers(node.dim):
                if sub.name in declared and sub.name not in before and sub.name != param.name:
                    order = [n for n in declared if n != sub.name]
                    order.insert(order.index(param.name), sub.name)
                    written = ", ".join(c_generator.CGenerator().visit(declared[n]) for n in order)
                    return error("PK010", f"'{sub.name}' is used in the size of parameter '{param.name}' before it "
                                          f"is declared (C reads the parameters in order); declare it first: "
                                          f"{function}({written})", ctx.index.node_span(sub))
        node = node.type
    return None


_FLIPPED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def _negation(cond):
    """!cond with the negation taken inside (De Morgan, comparisons flipped): `!(s <= 0 || B < 1)`
    is the facts s > 0 and B >= 1, each its own conjunct."""
    if isinstance(cond, c_ast.BinaryOp) and cond.op in _FLIPPED:
        return c_ast.BinaryOp(_FLIPPED[cond.op], cond.left, cond.right, cond.coord)
    if isinstance(cond, c_ast.BinaryOp) and cond.op in ("&&", "||"):
        return c_ast.BinaryOp("||" if cond.op == "&&" else "&&", _negation(cond.left), _negation(cond.right),
                              cond.coord)
    if isinstance(cond, c_ast.UnaryOp) and cond.op == "!":
        return cond.expr
    return c_ast.UnaryOp("!", cond, cond.coord)


def _leaves(node) -> bool:
    """Whether a statement never runs on past its end: a return, exit() or abort(), or a block
    that ends with one."""
    while isinstance(node, c_ast.Compound) and node.block_items:
        node = node.block_items[-1]
    if isinstance(node, c_ast.Return):
        return True
    return isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and \
        node.name.name in ("exit", "abort")


class _Walker:
    """Walks a function body in order, keeping the names, asserts and loops in scope."""

    def __init__(self, ctx: FileContext, fctx: FunctionContext, frames):
        self.ctx, self.fctx = ctx, fctx
        self.frames = frames
        self.asserts: list[list] = [[] for _ in frames]
        self.conditions: list[list] = [[] for _ in frames]   # (condition, span, names) of the ifs around
        self.host_loops: list = []
        self.guards = 0          # host ifs and switches around the statement visited
        self.schedules: list[model.Schedule] = []
        self.diagnostics: list[Diagnostic] = []
        self.count = 0

    def env(self) -> dict:
        merged = {}
        for frame in self.frames:
            merged.update(frame)
        return merged

    def declare(self, decl: c_ast.Decl) -> None:
        if not decl.name:
            return
        symbol = symbol_from_decl(decl, self.ctx.index.node_span(decl), self.ctx.typedefs)
        if symbol is not None:
            self.frames[-1][decl.name] = symbol

    def resolved(self, cond) -> dict:
        """The declarations the names of a condition mean where it is written: at the schedule a
        name declared again in between (`if (s > 0) { int s = k; ...`) is another variable."""
        env = self.env()
        return {n.name: env.get(n.name) for n in identifiers(cond)}

    def push(self):
        self.frames.append({})
        self.asserts.append([])
        self.conditions.append([])

    def pop(self):
        self.frames.pop()
        self.asserts.pop()
        self.conditions.pop()

    def visit(self, node) -> None:
        if node is None:
            return
        if isinstance(node, c_ast.Compound):
            self.push()
            for item in node.block_items or ():
                self.visit(item)
            self.pop()
        elif isinstance(node, c_ast.Decl):
            self.declare(node)
        elif isinstance(node, c_ast.DeclList):
            for decl in node.decls:
                self.declare(decl)
        elif isinstance(node, c_ast.FuncCall):
            if isinstance(node.name, c_ast.ID) and node.name.name == "assert" and node.args \
                    and len(node.args.exprs) == 1:
                cond = node.args.exprs[0]
                self.asserts[-1].append((cond, self.ctx.index.stmt_span(node), self.resolved(cond)))
        elif isinstance(node, c_ast.Label):
            if node.name.startswith(LABEL_PREFIX):
                self.schedule(node)
            else:
                self.visit(node.stmt)
        elif isinstance(node, c_ast.For):
            self.push()
            if isinstance(node.init, c_ast.DeclList):
                for decl in node.init.decls:
                    self.declare(decl)
            var = node.init.decls[0].name if isinstance(node.init, c_ast.DeclList) and node.init.decls else ""
            self.host_loops.append((var, node))
            self.visit(node.stmt)
            self.host_loops.pop()
            self.pop()
        elif isinstance(node, (c_ast.While, c_ast.DoWhile)):
            self.host_loops.append(("", node))
            self.visit_branch(node.stmt)
            self.host_loops.pop()
        elif isinstance(node, c_ast.If):
            self.guards += 1
            where, names = self.ctx.index.node_span(node.cond), self.resolved(node.cond)
            negated = _negation(node.cond)
            self.visit_branch(node.iftrue, (node.cond, where, names))
            self.visit_branch(node.iffalse, (negated, where, names))
            self.guards -= 1
            # `if (n <= 0) return;`: what follows runs only where the branch was not taken
            if _leaves(node.iftrue) and not _leaves(node.iffalse):
                self.conditions[-1].append((negated, where, names))
            elif _leaves(node.iffalse) and not _leaves(node.iftrue):
                self.conditions[-1].append((node.cond, where, names))
        elif isinstance(node, (c_ast.Switch, c_ast.Case, c_ast.Default)):
            self.guards += 1
            for child in node.stmts if hasattr(node, "stmts") and node.stmts else ():
                self.visit_branch(child)
            if isinstance(node, c_ast.Switch):
                self.visit_branch(node.stmt)
            self.guards -= 1

    def visit_branch(self, node, condition=None) -> None:
        """A statement that may not run (an if's branch, a loop's body, a case): what it asserts
        holds only where it runs (`if (flag) assert(B == 32);` says nothing of B otherwise).
        `condition`: what holds where the branch runs (an if's condition, or its negation): a
        schedule there runs only where it holds, as after an assert (`if (s > 0)` around a
        scatter `out[i * s]` proves it free of races)."""
        self.push()
        if condition is not None:
            self.conditions[-1].append(condition)
        self.visit(node)
        self.pop()

    def schedule(self, label: c_ast.Label) -> None:
        asserts = tuple(a for frame in self.asserts for a in frame)
        conditions = tuple(c for frame in self.conditions for c in frame)
        site = Site(label, self.env(), asserts, tuple(self.host_loops), self.count, self.guards > 0, conditions)
        self.count += 1
        deep = nesting_too_deep(label.stmt, MAX_NESTING)
        if deep is not None:   # its translation would recurse that deep: a clear error where it is
            where = self.ctx.prepared.schedule(label.name).keyword_span
            try:
                where = self.ctx.index.node_span(deep) if deep.coord is not None else where
            except RecursionError:
                pass
            self.diagnostics.append(error(
                "PK013", "expression or statements nested too deeply for a meta_schedule "
                f"(more than {MAX_NESTING} levels); split it into several statements", where))
            return
        try:
            found, diags = analyze_schedule(self.fctx, site)
        except Exception as exc:
            interrupts.reraise()
            mark = self.ctx.prepared.schedule(label.name)
            found, diags = None, [error(
                "PK099", f"internal error while analysing this meta_schedule ({type(exc).__name__}: "
                f"{exc}); please report it with this file", mark.keyword_span)]
        self.diagnostics.extend(diags)
        if found is not None:
            self.schedules.append(found)
