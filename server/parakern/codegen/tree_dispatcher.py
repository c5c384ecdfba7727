"""The host side: per schedule, the tree's dispatcher (the paper's rule) and what the others build on.

Contract (other parts of the project compile against it):

    int <function>_<index>_dispatch_tree(<the schedule's parameters and arrays (as pointers), in
                                         the order the C function declares them: host_arguments>);

returns the 1-based number of the case it launched, PARAKERN_NO_CASE_FITS
when no case fits the device (nothing is launched), PARAKERN_CUDA_ERROR when
a CUDA call failed (a failed launch's error stays readable with
cudaGetLastError). It reads the device's properties once per device (a
static) and, for each case in the tree's order, one `try` function: the
machine parameters (R_B = regsPerBlock, Z = sharedMemPerBlockOptin, T =
maxThreadsPerBlock), the launch limits, the case's constraints in 64-bit
arithmetic, then the real fit of nvcc's kernel (cudaFuncGetAttributes: its
registers per block as the hardware allocates them <= R_B; shared bytes <= Z;
threads <= T). When no case both holds and fits, a second pass tries the
cases in the same order, constraints aside: the first whose kernel fits. The rule (order,
passes, limits, fit) is parakern.dispatch's, printed here; its Python
`dispatch.choose` (`Choice.tree`) is what verify, the bench and the editor use. Kernels are
launched only through PARAKERN_LAUNCH.

The default dispatcher, `<function>_<index>_dispatch` (codegen/fastest.py), takes the same
arguments and returns the same statuses; it probes each case with `<function>_<index>_select`
and launches the one the time model predicts fastest.
"""
from __future__ import annotations

import sympy

from parakern import dispatch, syntax
from parakern.codegen.cprint import INDENT, CodegenError, Names, identifiers, relation_c, sym_c, unused
from parakern.analysis.fixed import condition
from parakern.codegen.kernel_source import array_parameter, array_parameters, instance_name, kernel_name, signature
from parakern.launch import AXES, in_parameters
from parakern.comprehensive import CaseTree
from parakern.counters.registers import ALLOCATION_UNIT, WARP_GRANULARITY, WARP_SIZE
from parakern.model import Array, Schedule
from parakern.analysis.rebuild import used_names
from parakern.symbolic.symbols import P_OCC, sym
from parakern.source.ctext import in_comment

STATIC_SHARED_LIMIT = "48 * 1024"  # above it a kernel must opt in to more dynamic shared memory
_WIDE = ("int", "unsigned", "long", "long long")   # carried as long long on the host


def dispatcher_name(schedule: Schedule) -> str:
    """`<function>_<index>_dispatch`: the one place the dispatcher's name is made."""
    return f"{schedule.function}_{schedule.index}_dispatch"


def tree_name(schedule: Schedule) -> str:
    """`<function>_<index>_dispatch_tree`: the tree's dispatcher (the paper's rule)."""
    return f"{schedule.function}_{schedule.index}_dispatch_tree"


def _try_name(schedule: Schedule, k: int) -> str:
    return f"{schedule.function}_{schedule.index}_try_case{k}"


def host_arguments(schedule: Schedule) -> tuple:
    """The dispatchers' arguments, each a model.Param or model.Array: in the order the C
    function declares them (its parameters, then what its body declares, a host loop's step
    `t`), so that a call written as the function's own compiles to the right values. (Arrays in
    the order the body first used them, after the scalars, made `saxpy_0_dispatch(n, B, alpha,
    y, x)` of `saxpy(n, B, alpha, x, y)`: a call in the C order compiled and was wrong.)"""
    return tuple(sorted((*schedule.params, *schedule.arrays), key=lambda x: (x.span.line, x.span.col)))


def forwarded(schedule: Schedule, value=None) -> list[str]:
    """The arguments of a call from one dispatcher to another (host_arguments order): each
    argument's name, or value(argument) where that gives one (dispatch_auto's chosen values)."""
    return [(value(x) if value else None) or x.name for x in host_arguments(schedule)]


def is_array(argument) -> bool:
    return isinstance(argument, Array)


def dispatcher_arguments(schedule: Schedule, leave_out: "set | frozenset" = frozenset()) -> list[str]:
    """host_arguments as C declarations (arrays as pointers, const where only read), less the
    names in leave_out (dispatch_auto's tuned parameters)."""
    return [array_parameter(x, restrict=False) if is_array(x) else f"{x.ctype} {x.name}"
            for x in host_arguments(schedule) if x.name not in leave_out]


def prototype(tree: CaseTree) -> str:
    """The dispatchers' declarations (the default's and the tree's), with a comment listing the cases."""
    s = tree.schedule
    n = len(tree.cases)
    lines = [f"{s.id} ({in_comment(str(s.keyword_span))}): {n} case{'s' * (n != 1)}"]
    for k, case in enumerate(tree.cases, 1):
        lines.append(f"  {k}: {relation_c(case.constraints.relations)}   {' '.join(case.decisions)}")
    for u in tree.uncovered:
        lines.append(f"  no case fits where {relation_c(u.constraints.relations)}")
    lines.append(f"{dispatcher_name(s)} launches, of the cases whose kernel fits this device and launches at")
    lines.append("these values, the one the time model predicts fastest here (ties: the tree's order);")
    lines.append(f"{tree_name(s)} the first in the tree's order whose constraints hold and whose kernel fits"
                 + ("," if len(dispatch.passes(tree)) > 1 else " (the paper's rule)."))
    if len(dispatch.passes(tree)) > 1:
        lines.append("then the first whose kernel fits (the paper's rule).")
    returns = f"1 to {n}" if n > 1 else "1" if n else "never"
    lines.append(f"Both return the case launched ({returns}), PARAKERN_NOTHING_TO_DO (an empty meta_for),")
    lines.append("PARAKERN_INVALID_VALUES (an assertion or a divisor of the function fails, or a parameter is")
    lines.append("negative), PARAKERN_NO_CASE_FITS")
    lines.append("or PARAKERN_CUDA_ERROR; only a case is a launch.")
    comment = ["/*"] + [" * " + line for line in lines] + [" */"]
    return "\n".join(comment + [signature("int " + name, dispatcher_arguments(s)) + ";"
                                for name in (dispatcher_name(s), tree_name(s))])


def dispatcher_source(tree: CaseTree, instances: tuple = ()) -> str:
    """The try function of every case, then the select function and the tree's dispatcher.
    instances: per case (tree order), the points of its compile-time instances (analysis/fixed.py),
    launched where the run-time values are those."""
    instances = tuple(instances) or ((),) * len(tree.cases)
    parts = [_try_case(tree, rule, instances[rule.number - 1]) for rule in dispatch.case_rules(tree)]
    return "\n\n".join(parts + [_dispatcher(tree, instances)])


# ------------------------------------------------------------------ one case

def _host_type(ctype: str) -> str:
    return "long long" if ctype in _WIDE else ctype


def _try_case(tree: CaseTree, rule: dispatch.CaseRule, instances: tuple = ()) -> str:
    s, k, launch = tree.schedule, rule.number, rule.launch
    names = Names(used_names(s) | {"R_B", "Z", "T"})
    words = ("prop", "attr", "raised", "by_fit", "probe", "grid", "block", "threads", "shared_bytes") \
        + (("attr_fixed", "raised_fixed", "instance", "fit", "opted") if instances else ())
    n = {w: names.fresh(w) for w in words}
    kernel = kernel_name(s, k)
    args = [f"const cudaDeviceProp &{n['prop']}", f"const cudaFuncAttributes &{n['attr']}", f"bool &{n['raised']}",
            f"bool {n['by_fit']}", f"bool {n['probe']}"] \
        + ([f"const cudaFuncAttributes *{n['attr_fixed']}", f"bool *{n['raised_fixed']}"] if instances else []) \
        + [f"{_host_type(p.ctype)} {p.name}" for p in s.params] + array_parameters(s, restrict=False)
    # (kernel, its arguments) per instance, the parametric kernel last (instance 0)
    kernels = [(instance_name(s, k, point), [a.name for a in s.arrays]
                + [_kernel_argument(p) for p in s.params if p.name not in dict(point)]) for point in instances]
    kernels.append((kernel, [a.name for a in s.arrays] + [_kernel_argument(p) for p in s.params]))
    attr, raised = (n["fit"], n["opted"]) if instances else (n["attr"], n["raised"])
    body: list[str] = ["/* the launch, in 64-bit arithmetic: the constraints' products must not overflow */"]
    grid = [_size(body, names, f"grid_{axis}", size) for axis, size in zip(AXES, launch.grid)]
    block = [_size(body, names, f"block_{axis}", size) for axis, size in zip(AXES, launch.block)]
    threads = " * ".join(b for b in block if b != "1") or "1"
    body.append(f"const long long {n['threads']} = {threads};")
    shared = any(f.need == "shared_bytes" for f in rule.fits)
    if shared:
        body.append(f"const long long {n['shared_bytes']} = {sym_c(launch.shared_bytes)};")
    sizes = {**{f"grid_{axis}": g for axis, g in zip(AXES, grid)}, "threads": n["threads"], "block_z": block[2]}
    body += [f"if ({' || '.join(_beyond(dispatch.LAUNCH_BOUNDS, sizes))})",
             INDENT + "return 0;  /* an empty grid or block, or one beyond CUDA's limits */"]
    if launch.requires:   # Kernel.requires: a register tile's factors divide the grid
        body += [f"if (!({relation_c(launch.requires)}))",
                 INDENT + "return 0;  /* the kernel computes whole register tiles only: not at these values */"]
    if instances:   # which kernel these values launch: the fit is that kernel's
        body += ["/* the instance compiled for these values (1, ...), or 0: the parametric kernel */",
                 f"const int {n['instance']} = "
                 + "".join(f"{condition(p)} ? {i} : " for i, p in enumerate(instances, 1)) + "0;"]
        if any(f.need == "registers" for f in rule.fits):
            body.append(f"const cudaFuncAttributes &{attr} = {n['instance']} ? {n['attr_fixed']}[{n['instance']} - 1]"
                        f" : {n['attr']};")
        if shared:
            body.append(f"bool &{raised} = {n['instance']} ? {n['raised_fixed']}[{n['instance']} - 1]"
                        f" : {n['raised']};")
    tests = _constraints(rule, s, n["by_fit"])
    need = {"registers": _registers_per_block(f"{attr}.numRegs", n["threads"]),
            "shared_bytes": n["shared_bytes"], "threads": n["threads"]}
    per_thread = [f"{attr}.numRegs > {dispatch.MAX_REGISTERS}"]   # no thread addresses more
    fits = per_thread + [f"{need[f.need]} > {f.machine}" for f in rule.fits]
    body += _machine(n, identifiers(tests + fits)) + tests
    body += [f"if ({' || '.join(fits)})",
             INDENT + "return 0;  /* the constraints hold, but nvcc's kernel needs more than this device has */"]
    body += [f"if ({n['probe']})", INDENT + f"return {k};  /* asked which case, not to launch it */"]
    if shared:   # once per device: the opt-in maximum, which covers every later size
        body += [f"if ({n['shared_bytes']} > {STATIC_SHARED_LIMIT} && !{raised}) {{"]
        body += [INDENT + line for line in _per_instance(n.get("instance"), kernels, lambda name, _: [
            f"if (cudaFuncSetAttribute({name}, cudaFuncAttributeMaxDynamicSharedMemorySize,",
            f"                         (int){n['prop']}.sharedMemPerBlockOptin) != cudaSuccess)",
            INDENT + "return PARAKERN_CUDA_ERROR;"])]
        body += [INDENT + f"{raised} = true;", "}"]
    dims = [f"{n['grid']}({', '.join(_unsigned(g) for g in grid)})",
            f"{n['block']}({', '.join(_unsigned(b) for b in block)})"]
    shared_arg = f"(size_t){n['shared_bytes']}" if shared else "0"
    body += [f"const dim3 {', '.join(dims)};",
             "(void)cudaGetLastError();  /* a stale error must not be taken for this launch's */"]
    body += _per_instance(n.get("instance"), kernels, lambda name, call: [
        f"PARAKERN_LAUNCH({name}, {n['grid']}, {n['block']}, {shared_arg}, {', '.join(call)});"])
    body += ["/* peek, not get: the caller can still read why a launch failed */",
             f"return cudaPeekAtLastError() == cudaSuccess ? {k} : PARAKERN_CUDA_ERROR;"]
    comment = [f"/* {s.id}, case {k}: launches {kernel} when its constraints hold and it fits the device",
               f" * ({n['by_fit']}: its constraints on R_B dropped, the fit of nvcc's kernel decides;",
               f" * {n['probe']}: only says that it would, launching nothing); {n['attr']}",
               f" * is the kernel's cudaFuncGetAttributes on this device, {n['raised']} whether its dynamic shared",
               " * memory limit was raised there.",
               f" * Returns {k} when launched, 0 when it does not fit, PARAKERN_CUDA_ERROR. */"]
    if instances:
        comment[-1:] = [f" * Where the values are {' or '.join(condition(p) for p in instances)}, it launches the",
                        f" * instance compiled for them instead ({n['attr_fixed']}, {n['raised_fixed']}: theirs).",
                        comment[-1]]
    return "\n".join(comment + [signature(f"static int {_try_name(s, k)}", args), "{"]
                     + [INDENT + line for line in unused(args, body) + body] + ["}"])


def _per_instance(instance: "str | None", kernels: list, lines) -> list[str]:
    """lines(kernel, call arguments) for the kernel of the instance chosen (the parametric one,
    last in `kernels`, when there is no instance)."""
    if len(kernels) == 1:
        return lines(*kernels[0])
    out = []
    for i, (name, call) in enumerate(kernels[:-1], 1):
        out.append(f"{'} else if' if i > 1 else 'if'} ({instance} == {i}) {{")
        out += [INDENT + line for line in lines(name, call)]
    out.append("} else {")
    out += [INDENT + line for line in lines(*kernels[-1])]
    return out + ["}"]


def _size(body: list[str], names: Names, stem: str, size) -> str:
    """A launch size: a constant as it is, otherwise a named 64-bit local."""
    size = sympy.sympify(size)
    if size.is_Integer:
        return str(int(size))
    name = names.fresh(stem)
    body.append(f"const long long {name} = {sym_c(size)};")
    return name


def _beyond(bounds, sizes: dict) -> list[str]:
    """The tests of the launch limits; none for a constant within them."""
    tests = []
    for bound in bounds:
        size = sizes[bound.name]
        if size.isdigit() and bound.holds(int(size)):
            continue
        if bound.low is not None:
            tests.append(f"{size} < {bound.low}")
        if bound.high is not None:   # INT_MAX written as a long long, as the sizes are
            tests.append(f"{size} > {bound.high}" + ("LL" if bound.high >= 2**31 - 1 else ""))
    return tests


def _unsigned(size: str) -> str:
    return size if size.isdigit() else f"(unsigned){size}"


def _kernel_argument(p) -> str:
    """A parameter as the kernel takes it (the host carries integers as long long)."""
    return f"({p.ctype}){p.name}" if _host_type(p.ctype) != p.ctype else p.name


def _registers_per_block(registers: str, threads: str) -> str:
    """counters.registers.registers_per_block in C (long long): per warp in units, warps in groups."""
    per_thread_unit = ALLOCATION_UNIT // WARP_SIZE
    group = WARP_SIZE * WARP_GRANULARITY
    return (f"{ALLOCATION_UNIT * WARP_GRANULARITY}LL * (({registers} + {per_thread_unit - 1}) / {per_thread_unit})"
            f" * (({threads} + {group - 1}) / {group})")


def _machine(n: dict, used: set) -> list[str]:
    """The machine parameters the tests read (an unread local is a warning)."""
    prop = n["prop"]
    values = {"T": f"{prop}.maxThreadsPerBlock",
              "Z": f"(long long){prop}.sharedMemPerBlockOptin",
              "R_B": f"{prop}.regsPerBlock"}
    return ["/* the machine parameters */"] + \
        [f"const long long {m} = {v};" for m, v in values.items() if m in used]


def _constraints(rule: dispatch.CaseRule, s: Schedule, by_fit: str) -> list[str]:
    relations = [in_parameters(r, s) for r in rule.relations]
    if any(P_OCC in r.free_symbols for r in relations):
        raise CodegenError("the cases depend on an occupancy target (P_occ), which a dispatcher cannot "
                           "read from the device; analyse without --occupancy to generate it",
                           s.keyword_span)
    if not relations:
        return ["/* no constraint: the case holds everywhere */"]
    return ["/* the tree's preference (the first pass); the second, by the fit, tests none */",
            f"if (!{by_fit} && !({relation_c(relations)}))", INDENT + "return 0;"]


# ------------------------------------------------------------------ the dispatcher

def select_name(schedule: Schedule) -> str:
    """`<function>_<index>_select(bool probe, int only, <the dispatcher's arguments>)`: the
    dispatcher's rule; with probe true it returns the case it would launch (or a status below 1:
    codegen/status.py) and
    launches nothing; only > 0 takes case `only` alone, by the fit of its kernel (its constraints
    aside, as the second pass): 0 where it does not fit (dispatch_auto's choice among the cases)."""
    return f"{schedule.function}_{schedule.index}_select"


def _dispatcher(tree: CaseTree, instances: tuple) -> str:
    s = tree.schedule
    head = signature("int " + tree_name(s), dispatcher_arguments(s))
    if not tree.cases:   # values the facts refuse, or that leave a meta_for empty, say so still
        return "\n".join([head, "{"] + [INDENT + line for line in preconditions(s) + _uncovered(tree)] + ["}"])
    names = Names(used_names(s) | {"R_B", "Z", "T"})
    prop, known, device, launched, attrs, raised = (
        names.fresh(w) for w in ("prop", "prop_device", "device", "launched", "attrs", "raised"))
    probe, only = names.fresh("probe"), names.fresh("only")
    select = signature(f"static int {select_name(s)}", [f"bool {probe}", f"int {only}"] + dispatcher_arguments(s))
    call_select = f"return {select_name(s)}({', '.join(['false', '0'] + forwarded(s))});"
    dispatch_fn = "\n".join([head, "{", INDENT + call_select, "}"])
    count = len(tree.cases)
    kernels = [kernel_name(s, rule.number) for rule in dispatch.case_rules(tree)]
    # the compile-time instances' attributes follow the parametric kernels', case after case
    first, extra = {}, []
    for rule in dispatch.case_rules(tree):
        first[rule.number] = count + len(extra)
        extra += [instance_name(s, rule.number, point) for point in instances[rule.number - 1]]
    call = [p.name for p in s.params] + [a.name for a in s.arrays]
    body = preconditions(s) + [
            "/* read once per device and host thread (a thread per GPU must not read another's): its",
            " * properties, each kernel's attributes (nvcc's registers) */",
            f"static thread_local cudaDeviceProp {prop};",
            f"static thread_local cudaFuncAttributes {attrs}[{count + len(extra)}];",
            f"static thread_local bool {raised}[{count + len(extra)}];",
            f"static thread_local int {known} = -1;",
            f"int {device};",
            f"if (cudaGetDevice(&{device}) != cudaSuccess)",
            INDENT + "return PARAKERN_CUDA_ERROR;",
            f"if ({device} != {known}) {{",
            INDENT + f"if (cudaGetDeviceProperties(&{prop}, {device}) != cudaSuccess)",
            INDENT * 2 + "return PARAKERN_CUDA_ERROR;"]
    for i, kernel in enumerate(kernels + extra):
        body += [INDENT + f"if (cudaFuncGetAttributes(&{attrs}[{i}], {kernel}) != cudaSuccess)",
                 INDENT * 2 + "return PARAKERN_CUDA_ERROR;",
                 INDENT + f"{raised}[{i}] = false;"]
    body += [INDENT + f"{known} = {device};",
             "}",
             f"int {launched};"]
    order = [rule.number for rule in dispatch.case_rules(tree)]

    def attempt(k: int, flag: str) -> str:
        i = order.index(k)
        head_args = [prop, f"{attrs}[{i}]", f"{raised}[{i}]", flag, probe]
        if instances[k - 1]:
            head_args += [f"&{attrs}[{first[k]}]", f"&{raised}[{first[k]}]"]
        return f"{_try_name(s, k)}({', '.join(head_args + call)})"
    body += [f"switch ({only}) {{  /* one case alone, by the fit of its kernel */",
             "case 0:", INDENT + "break;"]
    for k in order:
        body += [f"case {k}:", INDENT + f"return {attempt(k, 'true')};"]
    body += ["default:", INDENT + "return 0;", "}"]
    for one in dispatch.passes(tree):
        if one.by_fit:
            body += ["/* no case both holds and fits: the first case whose kernel really fits (nvcc's",
                     " * kernels need not use the registers counted; a hole of the tree may fit one) */"]
        flag = "true" if one.by_fit else "false"
        for k in order:
            body += [f"if (({launched} = {attempt(k, flag)}) != 0)", INDENT + f"return {launched};"]
    comment = [f"/* {s.id}: the dispatcher's rule; {probe}: return the case it would launch, launch nothing;",
               f" * {only} > 0: case {only} alone, where its kernel fits (its constraints aside) */"]
    return "\n".join(comment + [select, "{"] + [INDENT + line for line in body + _uncovered(tree)] + ["}", "",
                                                                                           dispatch_fn])


# What the values of a call must satisfy (facts on the parameters, model.Fact.origin): a
# divisor, a shift count, an assertion or a host if around the schedule that fails is refused
# (C leaves a division by zero and a shift beyond the type undefined; the kernels rely on the
# assertions: matmul's tiles on n % B0 == 0), a meta_for bound below 1 leaves nothing to run (its
# serial loop runs no iteration). Divisors first: C's && then never divides by zero in an
# assertion's `n % B0`.
REFUSED = ("divisor", "shift", "assert", "host if", "H1")
EMPTY = ("loop bound",)
# The analysis takes every parameter as >= 0 (the paper's H1): a negative value of a signed
# integer parameter is outside what it proved (`y[(s + 1) * i]` races at s = -1), so refused.
H1 = "H1"


def precondition(schedule: Schedule, origins: tuple) -> list:
    """The schedule's facts of these origins (in that order), in its parameters, less those that
    read something the host sets elsewhere (a time step) or an argument the schedule does not
    take (the dispatcher cannot judge them)."""
    params = {p.name for p in schedule.params}
    out = []
    for origin in origins:
        if origin == H1:
            out += [r for r in (sympy.Ge(sym(p.name), 0) for p in schedule.params
                                if p.ctype in syntax.INTEGER_TYPES and not syntax.is_unsigned(p.ctype))
                    if r not in out]
            continue
        for fact in schedule.facts:
            if fact.origin != origin:
                continue
            relation = in_parameters(fact.relation, schedule)
            if relation is sympy.true or relation is True or relation in out:
                continue
            if {x.name for x in relation.free_symbols} <= params:
                out.append(relation)
    return out


def preconditions(schedule: Schedule) -> list[str]:
    """The first lines of the select function and of dispatch_tuned: values refused, then nothing
    to run."""
    lines = []
    refused, empty = precondition(schedule, REFUSED), precondition(schedule, EMPTY)
    if refused:
        lines += ["/* refused, nothing launched: a divisor, a shift or an assertion fails, or a parameter is < 0 */",
                  f"if (!({facts_c(refused)}))", INDENT + "return PARAKERN_INVALID_VALUES;"]
    if empty:
        lines += ["/* an empty meta_for: nothing to run (the serial loops run no iteration) */",
                  f"if (!({facts_c(empty)}))", INDENT + "return PARAKERN_NOTHING_TO_DO;"]
    return lines


def facts_c(relations) -> str:
    """Facts in C, in 64-bit arithmetic (`n % (s*ub1)`'s product must not overflow where Python
    judges it exactly), one after the other (&&: a divisor is tested before a division)."""
    return " && ".join(f"({sym_c(r, cast='long long')})" for r in relations) or "1"


def _uncovered(tree: CaseTree) -> list[str]:
    lines = ["/* No case fits this device for these parameters"]
    if tree.uncovered:
        lines[0] += ": the tree's uncovered regions are"
        lines += [f" *   {relation_c(u.constraints.relations)}   ({u.counter})" for u in tree.uncovered]
        if tree.coverage.status != "proved":
            lines.append(" * (z3 did not prove that the cases and these regions cover everything)")
    elif tree.coverage.status != "proved":
        lines[0] += " (z3 did not prove that the cases cover everything)"
    lines[-1] += " */"
    return lines + ["return PARAKERN_NO_CASE_FITS;"]
