"""One readable `__global__` kernel per case of a case tree.

The kernel is the IR lowering (ir/lower.py) written as CUDA: arrays first
(`T *__restrict__`, `const` when only read), then every parameter in
`schedule.params` order; each meta_for variable is `lo + blockIdx.<axis>`
(grid) or `lo + threadIdx.<axis>` (block); the serial loops between grid
and block levels wrap the per-thread body; derived scalars are computed
from their definitions where the code reads them; cached arrays are staged
as ir/staged_copies.py stages them (codegen/memory.py). The case's source-level
strategies are already in `case.kernel.schedule`; its IR-level ones become
`#pragma unroll 1` (levels 1-3: the IR marks every loop nounroll) and
`__maxnreg__(cap)` (level 3: the ptxas cap the registers were counted
under).
"""
from __future__ import annotations

import sympy

from parakern import syntax
from parakern.analysis.loop_ranges import stride_start
from parakern.analysis.dependence import communicates
from parakern.analysis.fixed import Point, condition, suffix
from parakern.analysis.lifted import lifted
from parakern.analysis.traffic import access_key
from parakern.codegen.trace import Sites
from parakern.analysis.updates import Update, atomic_for, atomic_statement, made_atomically
from parakern.codegen.cprint import INDENT, CodegenError, CPrinter, Names, identifiers, relation_c, sym_c
from parakern.codegen.memory import Staging, global_element
from parakern.comprehensive import Case
from parakern.counters.registers import RegisterCounter
from parakern.ir.ptx import kernel_ptx
from parakern.kernel import Kernel
from parakern.launch import launch_of
from parakern.model import Schedule
from parakern.strategies.decisions import comment_words
from parakern.analysis.rebuild import chain, used_names
from parakern.symbolic.symbols import sym
from parakern.source.ctext import in_comment
from parakern.machine.targets import DEFAULT_TARGET

_WIDTH = 100


def kernel_name(schedule: Schedule, k: int) -> str:
    """`<function>_<index>_case<k>`, k counted from 1 as the dispatcher returns it."""
    return f"{schedule.function}_{schedule.index}_case{k}"


def array_parameters(schedule: Schedule, restrict: bool) -> list[str]:
    """The schedule's arrays as a kernel's parameters (array_parameter), in schedule.arrays order."""
    return [array_parameter(a, restrict) for a in schedule.arrays]


def array_parameter(array, restrict: bool) -> str:
    """`int *__restrict__ a`; `const` for an array the schedule only reads."""
    qualifier = " *__restrict__ " if restrict else " *"
    return ("const " if not array.written else "") + array.ctype + qualifier + array.name


def register_cap(kernel: Kernel) -> "int | None":
    """The register cap of IR level 3 (None at other levels, or where no cap can bind)."""
    return RegisterCounter().register_cap(kernel) if kernel.ir_level == 3 else None


def case_ptx(case: Case) -> str:
    """The PTX the case's registers were counted on (IR level of the variant)."""
    return kernel_ptx(case.kernel)


def instance_name(schedule: Schedule, k: int, fixed: Point) -> str:
    """`<function>_<index>_case<k>_B0_16_ub1_32`: case k's instance at compile-time values."""
    return f"{kernel_name(schedule, k)}_{suffix(fixed)}"


def kernel_source(case: Case, k: int, cases: int = 0, trace: "Sites | None" = None, fixed: Point = ()) -> str:
    """The comment and the `__global__` function of case k (1-based) of `cases`; with `trace`,
    every element reference is printed traced (codegen/trace.py); with `fixed` ((parameter,
    value), ...: analysis/fixed.py), the instance with those parameters as constants."""
    kernel = case.kernel
    s = kernel.schedule
    names = Names(used_names(s))
    if trace is not None:
        trace.case = k
    # an instance's copies in its serial loops are not unrolled (codegen/memory.py: `looped`); a
    # parametric kernel's keep nvcc's unrolling (rolled, the 8 x 8 register tile's took 227
    # registers where unrolled it takes 128: docs/bench/register-tiles.md)
    staging = Staging(kernel, names, no_unroll=kernel.ir_level >= 1, sites=trace,
                      looped=bool(fixed) and bool(_between_loops(s))) if kernel.cached else None
    printer = _BodyPrinter(s, staging, no_unroll=kernel.ir_level >= 1, sites=trace, target=kernel.target)
    # accumulators kept in registers across the between loops, as the IR does (an instance: also
    # those of loops its constants unroll)
    plan = lifted(kernel, fixed)
    body = (staging.prologue(1) if staging else []) + printer.block(plan.before, 1) \
        + _between(printer, s, staging, _between_loops(s), 1, plan.body, communicates(kernel)) \
        + printer.block(plan.after, 1)
    if staging:
        body += staging.epilogue(1)
    prelude = _prelude(s, staging, body, dict(fixed))
    cap = register_cap(kernel)
    name = instance_name(s, k, fixed) if fixed else kernel_name(s, k)
    bound = None if cap else fixed_threads(case, fixed)
    head = "__global__ void " + (f"__maxnreg__({cap}) " if cap else "") \
        + (f"__launch_bounds__({bound}) " if bound else "") + name
    values = dict(fixed)
    args = array_parameters(s, restrict=True) + [f"{p.ctype} {p.name}" for p in s.params if p.name not in values]
    comment = _comment(case, k, cases, cap, staging)
    if fixed:   # the case's comment, then what the instance fixes
        comment[-1:] = [f" * instance    {condition(fixed).replace(' == ', ' = ').replace(' && ', ', ')} "
                        "at compile time: launched when the run-time values are these", " */"]
    lines = comment + [signature(head, args), "{"] + prelude + body + ["}"]
    return "\n".join(lines)


def fixed_threads(case: Case, fixed: Point) -> "int | None":
    """The threads per block of case's instance at `fixed`, where the point fixes them: its
    `__launch_bounds__`, so that ptxas keeps the registers within what a block of that size
    can have (65536 / threads): else an instance may take more than a block of its own size
    can hold (matmul's (6) case at B0 = 128, ub1 = 32 on an H200: 76 registers x 1024
    threads), and the dispatcher can only launch the slower parametric kernel or another case.
    None for the parametric kernel, or where data parameters size the block."""
    if not fixed:
        return None
    threads = sympy.sympify(launch_of(case).threads).xreplace({sym(n): sympy.Integer(v) for n, v in fixed})
    return int(threads) if threads.is_Integer and 0 < int(threads) <= 1024 else None


def signature(head: str, args: list[str]) -> str:
    """head(args) on one line, or wrapped with the arguments aligned after the parenthesis."""
    one = f"{head}({', '.join(args)})"
    if len(one) <= _WIDTH:
        return one
    pad = " " * (len(head) + 1)
    lines, line = [], head + "("
    for n, arg in enumerate(args):
        piece = arg + ("," if n + 1 < len(args) else ")")
        if line.strip() and len(line) + len(piece) + 1 > _WIDTH and not line.endswith("("):
            lines.append(line.rstrip())
            line = pad
        line += piece + " "
    return "\n".join(lines + [line.rstrip()])


# ------------------------------------------------------------------ the body

class _BodyPrinter(CPrinter):
    """The per-thread statements: array elements in global memory or in their staged copy."""

    def __init__(self, schedule: Schedule, staging: "Staging | None", no_unroll: bool, sites: "Sites | None" = None,
                 target: str = DEFAULT_TARGET):
        super().__init__(no_unroll)
        self.schedule = schedule
        self.staging = staging
        self.sites = sites
        self.target = target

    def _site(self, e: syntax.Index, space: str) -> "int | None":
        return None if self.sites is None else self.sites.site(access_key(e.array, e.span, space))

    def _instance(self) -> str:
        return self.sites.instance() if self.sites else "0"

    def stmt(self, s, depth: int) -> list[str]:
        update = made_atomically(self.schedule, s)
        if update is not None:
            if update.guard is not None:   # `if (i < n && v > m[k])`: the atomic where the rest holds
                return [INDENT * depth + f"if ({self.expr(update.guard)}) {{",
                        INDENT * (depth + 1) + self._atomic(update), INDENT * depth + "}"]
            return [INDENT * depth + self._atomic(update)]
        if self.sites is None or not isinstance(s, syntax.Loop):
            return super().stmt(s, depth)
        # traced: the loop is part of each execution's identity; a grid-stride loop's lanes run
        # its m-th iteration together, each at its own start: m is, not i
        lo, step = syntax.to_sympy(s.lo), syntax.to_sympy(s.step)
        stride = lo is not None and step is not None and stride_start(lo, step, self.schedule) is not None
        self.sites.loops.append(f"(({s.var}) - ({self.expr(s.lo)})) / ({self.expr(s.step)})" if stride else s.var)
        try:
            return super().stmt(s, depth)
        finally:
            self.sites.loops.pop()

    def _atomic(self, update: Update) -> str:
        """`atomicAdd(&h[k], v);`: the update made by CUDA's atomic (an atomically updated array
        is never staged: analysis/staging.py)."""
        atomic, why = atomic_for(update, self.target)
        if atomic is None:
            raise CodegenError(why, update.span)
        e = update.target
        element = global_element(self.schedule.array(e.array), [self.raw(i) for i in e.indices],
                                 self._site(e, "global"), self._instance(), atomic=True)
        return atomic_statement(update, atomic, element, self.expr(update.value))

    def index(self, e: syntax.Index) -> str:
        route = self.staging.route(e) if self.staging else None
        subscripts = [self.raw(i) for i in e.indices]
        if route is None:
            return global_element(self.schedule.array(e.array), subscripts, self._site(e, "global"),
                                  self._instance())
        return self.staging.shared_element(route, [(r, i.ctype, i) for r, i in zip(subscripts, e.indices)],
                                           self._site(e, "shared"), e)

    def assign(self, s: syntax.Assign) -> list[str]:
        route = self.staging.route(s.target) if self.staging and isinstance(s.target, syntax.Index) else None
        if route is None or not route.through:
            return super().assign(s)
        # Write-through: global memory gets the element too (staging.py: the block may not write
        # the whole region, so the region is not copied back).
        shared = self.index(s.target)
        glob = global_element(self.schedule.array(s.target.array), [self.raw(i) for i in s.target.indices],
                              self._site(s.target, "global"), self._instance())
        return [f"{shared} {s.op} {self.expr(s.value)};", f"{glob} = {shared};  /* write-through */"]


def _between_loops(s: Schedule) -> list[syntax.Loop]:
    """The serial loops between grid and block levels, as written (outer first)."""
    return [lp for lp in chain(s.nest) if not lp.parallel]


def _between(printer: _BodyPrinter, s: Schedule, staging, loops, depth: int, body: syntax.Block,
             communicate: bool) -> list[str]:
    """The serial loops between grid and block levels around the per-thread body; `communicate`:
    the threads of a block communicate between iterations (analysis.dependence.communicates)."""
    if loops:
        lp = loops[0]
        head = printer.for_header(lp.ctype, lp.var, printer.expr(lp.lo), printer.raw(lp.hi), lp.step)
        if printer.sites is not None:
            printer.sites.loops.append(lp.var)
        inner = _between(printer, s, staging, loops[1:], depth + 1, body, communicate)
        if printer.sites is not None:
            printer.sites.loops.pop()
        return printer.loop(head, inner, depth)
    lines = staging.before_body(depth) if staging else []
    outer = {lp.var for lp in chain(s.nest)} | {d.name for d in s.derived}
    clash = any(isinstance(st, syntax.Decl) and st.name in outer for st in body.stmts)
    if clash:  # a local named like a loop variable or derived scalar: its own scope, as in the source
        lines += printer.stmt(body, depth)
    else:
        lines += printer.block(body.stmts, depth)
    lines += staging.after_body(depth) if staging else []
    if communicate and not (lines and lines[-1].lstrip().startswith("__syncthreads()")):
        # MetaFork joins the meta_for after each iteration: the next reads what other threads wrote
        lines.append(INDENT * depth + "__syncthreads();  /* the next iteration reads what other threads wrote */")
    return lines


# ------------------------------------------------------------------ declarations

def _loop_ctypes(s: Schedule) -> dict[str, str]:
    return {lp.var: lp.ctype for lp in reversed(chain(s.nest))}


def _prelude(s: Schedule, staging: "Staging | None", code: list[str], fixed: "dict | None" = None) -> list[str]:
    """Fixed parameters (constants), derived scalars, thread indices and staging declarations
    that `code` reads, in order."""
    candidates = [(p.name, f"const {p.ctype} {p.name} = {fixed[p.name]};  /* fixed at compile time */")
                  for p in s.params if fixed and p.name in fixed]
    for d in s.derived:
        candidates.append((d.name, f"const {d.ctype} {d.name} = {sym_c(d.value)};"))
    ctypes = _loop_ctypes(s)
    for lp in s.loops:
        index = ("blockIdx." if lp.level == "grid" else "threadIdx.") + lp.axis
        ctype = ctypes.get(lp.var, "int")
        value = index if lp.lo == 0 else f"{sym_c(lp.lo)} + ({ctype}){index}"
        where = f"/* meta_for {lp.var} in [{sym_c(lp.lo)}, {sym_c(lp.hi)}): {lp.level} level */"
        candidates.append((lp.var, f"const {ctype} {lp.var} = {value};  {where}"))
    if staging:
        candidates += staging.declarations()
    used = identifiers(code)
    kept = []
    for name, line in reversed(candidates):  # later declarations may read earlier ones
        if name in used:
            kept.append(INDENT + line)
            used |= identifiers([line])
    kept.reverse()
    if staging:
        at = next((n for n, line in enumerate(kept) if "PARAKERN_DYNAMIC_SHARED" in line), 0)
        parts = staging.summary()
        head = f"/* Shared memory, {sym_c(staging.bytes)} bytes per block (the launch's dynamic size):"
        kept[at:at] = [INDENT + head] + [INDENT + f" *   {line}" for line in parts[:-1]] \
            + [INDENT + f" *   {parts[-1]} */"]
    return kept




# ------------------------------------------------------------------ the comment

def _comment(case: Case, k: int, cases: int, cap, staging) -> list[str]:
    kernel = case.kernel
    s = kernel.schedule
    values = dict(case.counters)
    where = relation_c(case.constraints.relations)
    shared = values.get("shared_memory", 0)
    lines = [f"{s.id}, case {k}" + (f" of {cases}" if cases else "") + f" ({in_comment(str(s.keyword_span))})",
             f"runs where  {where}" + ("" if case.verified else "   (consistency not proved)"),
             f"decisions   {' '.join(case.decisions)}: {comment_words(case.kernel, cap)}",
             f"registers   {values.get('registers')} per thread (ptxas -arch={kernel.target} on the IR's PTX"
             + (f", capped at {cap})" if cap else ")"),
             "shared      " + (f"{sym_c(shared)} bytes per block (dynamic)" if shared != 0 else "none"),
             f"threads     {sym_c(values.get('threads'))} per block"]
    if "occupancy" in values:
        lines.append(f"occupancy   {values['occupancy']}")
    return ["/*"] + [" * " + line for line in lines] + [" */"]


def dims_c(sizes) -> str:
    """`(N - 2)/(B*s), 1, 1`: the three sizes in C."""
    return ", ".join(sym_c(x) for x in sizes)


def launch_snippet(case: Case, name: str) -> str:
    """The launch as a CUDA programmer writes it (for reports; the dispatcher checks more)."""
    s = case.kernel.schedule
    launch = launch_of(case)
    args = [a.name for a in s.arrays] + [p.name for p in s.params]
    shared = sym_c(launch.shared_bytes)
    return "\n".join([f"dim3 block({dims_c(launch.block)});",
                      f"dim3 grid({dims_c(launch.grid)});",
                      f"{name}<<<grid, block, {shared}>>>({', '.join(args)});"])
