"""One readable `__global__` kernel per case of a case tree.

The kernel is the IR lowering (ir/lower.py) written as CUDA: arrays first
(`T *__restrict__`, `const` when only read), then every parameter in
`schedule.params` order; each meta_for variable is `lo + blockIdx.<axis>`
(grid) or `lo + threadIdx.<axis>` (block); the serial loops between grid
and block levels wrap the per-thread body; derived scalars are computed
from their definitions where the code reads them; cached arrays are staged
as ir/staging.py stages them (codegen/memory.py). The case's source-level
strategies are already in `case.kernel.schedule`; its IR-level ones become
`#pragma unroll 1` (levels 1-3: the IR marks every loop nounroll) and
`__maxnreg__(cap)` (level 3: the ptxas cap the registers were counted
under).
"""
from __future__ import annotations

from parakern import syntax
from parakern.codegen.cprint import INDENT, CPrinter, Names, identifiers, relation_c, sym_c
from parakern.codegen.memory import Staging, global_element
from parakern.comprehensive import Case
from parakern.counters.registers import RegisterCounter
from parakern.ir.ptx import kernel_ptx
from parakern.kernel import Kernel
from parakern.model import Schedule
from parakern.strategies.decisions import comment_words
from parakern.strategies.rebuild import chain, used_names
from parakern.ctext import in_comment

_WIDTH = 100


def kernel_name(schedule: Schedule, k: int) -> str:
    """`<function>_<index>_case<k>`, k counted from 1 as the dispatcher returns it."""
    return f"{schedule.function}_{schedule.index}_case{k}"


def array_parameters(schedule: Schedule, restrict: bool) -> list[str]:
    """`int *__restrict__ a`; `const` for an array the schedule only reads."""
    qualifier = " *__restrict__ " if restrict else " *"
    return [("const " if not a.written else "") + a.ctype + qualifier + a.name for a in schedule.arrays]


def register_cap(kernel: Kernel) -> "int | None":
    """The register cap of IR level 3 (None at other levels, or where no cap can bind)."""
    return RegisterCounter().register_cap(kernel) if kernel.ir_level == 3 else None


def case_ptx(case: Case) -> str:
    """The PTX the case's registers were counted on (IR level of the variant)."""
    return kernel_ptx(case.kernel)


def kernel_source(case: Case, k: int, cases: int = 0) -> str:
    """The comment and the `__global__` function of case k (1-based) of `cases`."""
    kernel = case.kernel
    s = kernel.schedule
    names = Names(used_names(s))
    staging = Staging(kernel, names, no_unroll=kernel.ir_level >= 1) if kernel.cached else None
    printer = _BodyPrinter(s, staging, no_unroll=kernel.ir_level >= 1)
    body = (staging.prologue(1) if staging else []) + _between(printer, s, staging, _between_loops(s), 1)
    if staging:
        body += staging.epilogue(1)
    prelude = _prelude(s, staging, body)
    cap = register_cap(kernel)
    head = "__global__ void " + (f"__maxnreg__({cap}) " if cap else "") + kernel_name(s, k)
    args = array_parameters(s, restrict=True) + [f"{p.ctype} {p.name}" for p in s.params]
    lines = _comment(case, k, cases, cap, staging) + [signature(head, args), "{"] + prelude + body + ["}"]
    return "\n".join(lines)


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

    def __init__(self, schedule: Schedule, staging: "Staging | None", no_unroll: bool):
        super().__init__(no_unroll)
        self.schedule = schedule
        self.staging = staging

    def index(self, e: syntax.Index) -> str:
        route = self.staging.route(e) if self.staging else None
        subscripts = [self.raw(i) for i in e.indices]
        if route is None:
            return global_element(self.schedule.array(e.array), subscripts)
        return self.staging.shared_element(route, [(r, i.ctype, i) for r, i in zip(subscripts, e.indices)])

    def assign(self, s: syntax.Assign) -> list[str]:
        route = self.staging.route(s.target) if self.staging and isinstance(s.target, syntax.Index) else None
        if route is None or not route.through:
            return super().assign(s)
        # Write-through: global memory gets the element too (staging.py: the block may not write
        # the whole region, so the region is not copied back).
        shared = self.index(s.target)
        glob = global_element(self.schedule.array(s.target.array), [self.raw(i) for i in s.target.indices])
        return [f"{shared} {s.op} {self.expr(s.value)};", f"{glob} = {shared};  /* write-through */"]


def _between_loops(s: Schedule) -> list[syntax.Loop]:
    """The serial loops between grid and block levels, as written (outer first)."""
    return [lp for lp in chain(s.nest) if not lp.parallel]


def _between(printer: _BodyPrinter, s: Schedule, staging, loops, depth: int) -> list[str]:
    """The serial loops between grid and block levels around the per-thread body."""
    if loops:
        lp = loops[0]
        head = printer.for_header(lp.ctype, lp.var, printer.expr(lp.lo), printer.raw(lp.hi), lp.step)
        return printer.loop(head, _between(printer, s, staging, loops[1:], depth + 1), depth)
    lines = staging.before_body(depth) if staging else []
    outer = {lp.var for lp in chain(s.nest)} | {d.name for d in s.derived}
    clash = any(isinstance(st, syntax.Decl) and st.name in outer for st in s.body.stmts)
    if clash:  # a local named like a loop variable or derived scalar: its own scope, as in the source
        lines += printer.stmt(s.body, depth)
    else:
        lines += printer.block(s.body.stmts, depth)
    return lines + (staging.after_body(depth) if staging else [])


# ------------------------------------------------------------------ declarations

def _loop_ctypes(s: Schedule) -> dict[str, str]:
    return {lp.var: lp.ctype for lp in reversed(chain(s.nest))}


def _prelude(s: Schedule, staging: "Staging | None", code: list[str]) -> list[str]:
    """Derived scalars, thread indices and staging declarations that `code` reads, in order."""
    candidates = []
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
