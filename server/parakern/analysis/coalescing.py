"""PK040: a warning on each global access a warp does not coalesce, in some case of the tree.

At the schedule's profile point (point.py: 32 threads along threadIdx.x, data sizes of about
a thousand) each case's requests are costed (traffic.py); an access whose warp request
touches more sectors than its elements need, beyond the one a misaligned start costs
(warps.uncoalesced), is reported once, at the access, with the stride across threadIdx.x,
each case's sectors per request (or where the case keeps the element instead: shared
memory, registers) and what would coalesce it: swapping the two innermost meta_for levels
when threadIdx.y runs along the array's last subscript (and no other access then loses),
cache(A) to stage it through shared memory with coalesced copies, or, where threadIdx.x
already runs along the last subscript but the x level is narrower than a warp (16 x 16
blocks: each warp spans two rows, each its own run of sectors), an x level of 32 threads.
"""
from __future__ import annotations

import sympy

from parakern.analysis import warps as W
from parakern.analysis.point import describe, evaluate, profile_point
from parakern.analysis.staging import plan, stageable, unpadded
from parakern.analysis.traffic import traffic
from parakern.source.diagnostics import Diagnostic, Span, warning
from parakern.kernel import Kernel
from parakern.model import Schedule
from parakern.symbolic.printing import to_c
from parakern.symbolic.symbols import sym
from parakern.analysis.dependence import source_text

CODE = "PK040"


def coalescing_warnings(schedule: Schedule, tree) -> tuple[Diagnostic, ...]:
    point = profile_point(schedule)
    if point is None or tree is None or not tree.cases:
        return ()
    try:
        per_case = [traffic(case.kernel, point) for case in tree.cases]
    except Exception:   # noqa: BLE001 - no figures at this point: nothing to warn about, and the tree stays
        return ()
    flagged = uncoalesced_accesses(per_case)
    # the staged kernel's traffic, once per array however many of its accesses are flagged
    staging = {array: _staging_coalesces(schedule, array, point) for array, _ in flagged
               if array not in {c.name for c in schedule.cache}}
    out = []
    for (array, where), found in flagged.items():
        span = Span(schedule.keyword_span.file, *where)
        cached = [case.kernel for case, t in zip(tree.cases, per_case) if _copies(t, array)]
        message = _message(schedule, array, where, found, per_case, point, staging)
        padding = _padding(cached or [Kernel(schedule, (array,))], array, where, point) \
            if cached or staging.get(array) else ""
        out.append(warning(CODE, message + padding, span))
    return tuple(sorted(out, key=lambda d: (d.span.line, d.span.col)))


def _padding(kernels, array: str, where, point: dict) -> str:
    """What padding does for the access once staged: `; the tile's rows are padded (9 elements
    apart where 8 hold them), so that c[j][i], whose lanes are in different rows, takes 1
    wavefront per request where unpadded rows take 8` ('' where no kernel pads its tile)."""
    for kernel in kernels:
        twin = unpadded(kernel)
        if twin is None:
            continue
        try:
            after, before = (_shared_cost(traffic(k, point), array, where) for k in (kernel, twin))
        except Exception:   # noqa: BLE001 - no figures for the staged kernel: no advice
            continue
        if after is None or before is None or after >= before - 1e-9:
            continue
        subs = evaluate(kernel.schedule, point)
        rows = next(((sympy.sympify(r.pitch).xreplace(subs), sympy.sympify(r.row).xreplace(subs))
                     for st in plan(kernel) if st.array.name == array
                     for c in st.choices for r in c.regions if r.pitch is not None), None)
        if rows is None:
            continue
        access = _access(kernel.schedule, array, where)
        text = (source_text(kernel.schedule, access.span) if access is not None else "") or array
        pitch, row = rows
        return (f"; staged, its tile's rows are padded ({pitch} elements apart where {row} hold them), so that "
                f"{text}, whose lanes are in different rows, takes {after:.3g} wavefront{'s' * (after != 1)} "
                f"per request of shared memory where unpadded rows take {before:.3g}")
    return ""


def _of_access(t, array: str, where) -> list:
    """A case's requests of the access to `array` at the source range `where`."""
    return [r for r in t.requests if r.key[0] == "access" and r.array == array and r.key[2] == where]


def _copies(t, array: str) -> bool:
    """Whether the case moves `array` with staging copies (it keeps cache(array))."""
    return any(r.key[0] == "copy" and r.array == array for r in t.requests)


def _shared_cost(t, array: str, where) -> "float | None":
    """The most wavefronts a request of the access at `where` takes in shared memory."""
    costs = [r.cost for r in _of_access(t, array, where) if r.space == "shared"]
    return max(costs) if costs else None


def uncoalesced_accesses(per_case) -> dict:
    """(array, source range as (line, col, end line, end col)) -> [(case, its Request), ...] for
    each global access some case's warps do not coalesce (per_case: a Traffic per case)."""
    flagged: dict = {}
    for k, t in enumerate(per_case, 1):
        for r in t.requests:
            # an index with no value per lane (a[idx[i]]) is unknown, not uncoalesced: no warning
            if r.key[0] == "access" and r.space == "global" and r.exact and W.uncoalesced(r.cost, r.ideal):
                flagged.setdefault((r.array, r.key[2]), []).append((k, r))
    return flagged


def _message(schedule: Schedule, array: str, where, found, per_case, point, staging: dict) -> str:
    first = found[0][1]
    verb = "written" if first.kind == "write" else "read"
    stride = first.stride
    if stride is None:
        how = "threads next in threadIdx.x do not touch elements next to each other"
    elif stride == 0:
        how = "its threads next in threadIdx.x touch the same element, and a warp spans several rows of the block"
    else:
        how = f"threads next in threadIdx.x are {to_c(stride)} element{'s' * (stride != 1)} apart"
    cases = []
    for k, t in enumerate(per_case, 1):
        mine = _of_access(t, array, where)
        glob = [r for r in mine if r.space == "global"]
        if glob:
            cases.append(f"case {k}: {max(r.cost for r in glob):.3g}")
        elif mine:
            cases.append(f"case {k}: shared memory")
        else:
            cases.append(f"case {k}: registers")
    cost = max(r.cost for _, r in found)
    return (f"uncoalesced access: {first.text} is {verb} where {how}, so a warp request touches "
            f"{cost:.3g} sectors of 32 bytes where {first.ideal:.3g} would hold its elements "
            f"(at {describe(point)}: {', '.join(cases)}); {_advice(schedule, array, where, per_case, staging, point)}")


def _staging_coalesces(schedule: Schedule, array: str, point: dict) -> bool:
    """Whether cache(array) would move it through global memory coalesced at the point: a column
    (a tile of 32 x 1) is copied as uncoalesced as it is read, and the advice was no help."""
    kernel = Kernel(schedule, (array,))
    if not stageable(kernel):   # advice PK031 would then refuse is no advice
        return False
    try:
        requests = traffic(kernel, point).requests
    except Exception:   # noqa: BLE001 - no figures for the staged kernel: no advice
        return False
    return not any(r.array == array and r.space == "global" and W.uncoalesced(r.cost, r.ideal) for r in requests)


def _advice(schedule: Schedule, array: str, where, per_case, staging: dict, point: dict) -> str:
    """staging: array -> whether cache(array) would coalesce it (_staging_coalesces), for the
    arrays no cache(...) names."""
    x = next((lp for lp in schedule.block if lp.axis == "x"), None)
    y = next((lp for lp in schedule.block if lp.axis == "y"), None)
    tips = []
    narrow = _narrow_rows(schedule, _access(schedule, array, where), x, point)
    if narrow:
        tips.append(narrow)
    elif x is not None and y is not None:
        swap = _swap_helps(schedule, array, where, x, y, per_case)
        if swap is True:
            tips.append(f"swap the two innermost meta_for levels ({y.var} and {x.var}) so that threadIdx.x "
                        "runs along its last subscript")
        elif swap:
            tips.append(f"swapping the two innermost meta_for levels would uncoalesce {swap} instead")
    cached = {c.name for c in schedule.cache}
    if array in cached:
        tips.extend(_staged_cases(array, where, per_case))
    elif staging.get(array):
        tips.append(f"or cache({array}) to stage it through shared memory with coalesced copies"
                    if tips else f"cache({array}) stages it through shared memory with coalesced copies")
    return "; ".join(tips) if tips else "make threadIdx.x run along the array's last subscript"


def _staged_cases(array: str, where, per_case) -> list[str]:
    """What the cases that keep cache(array) do with the access at `where`, as their requests
    say: move it with coalesced copies, or still touch global memory at the access's stride (a
    write staging does not take: z[2*i] written through, 8 sectors a request)."""
    coalesced, through = [], {}
    for k, t in enumerate(per_case, 1):
        if not _copies(t, array):
            continue
        direct = [r for r in _of_access(t, array, where) if r.space == "global" and W.uncoalesced(r.cost, r.ideal)]
        if direct:
            through[k] = max(r.cost for r in direct)
        else:
            coalesced.append(k)
    tips = []
    if coalesced:
        tips.append(f"the cases that keep cache({array}) ({_numbers(coalesced)}) move it with coalesced copies")
    if through:
        kind = next(r.kind for t in per_case for r in _of_access(t, array, where))
        verb = "write it straight to" if kind == "write" else "read it from"
        tips.append(f"the cases that keep cache({array}) ({_numbers(through)}) still {verb} global memory at this "
                    f"stride ({_costs(through)} sectors per request): staging does not take this "
                    f"{'write' if kind == 'write' else 'read'}")
    return tips


def _numbers(cases) -> str:
    return ", ".join(str(k) for k in cases)


def _costs(by_case: dict) -> str:
    """`8`, or `case 1: 8, case 3: 9` where the cases differ."""
    values = set(by_case.values())
    if len(values) == 1:
        return f"{values.pop():.3g}"
    return ", ".join(f"case {k}: {v:.3g}" for k, v in by_case.items())


def _access(schedule: Schedule, array: str, where):
    """The access of `array` at the source range `where` ((line, col, end line, end col))."""
    return next((a for a in schedule.accesses if a.array == array
                 and (a.span.line, a.span.col, a.span.end_line, a.span.end_col) == where), None)


def _runs_along(access, var: str) -> bool:
    """Whether consecutive values of `var` take the access to consecutive elements: the last
    subscript moves by 1 and no other one moves."""
    if access is None or not access.exact or not access.indices:
        return False
    c = sympy.expand(sympy.diff(sympy.sympify(access.indices[-1]), sym(var)))
    return abs(c) == 1 and all(sympy.diff(sympy.sympify(i), sym(var)) == 0 for i in access.indices[:-1])


def _narrow_rows(schedule: Schedule, access, x, point: dict) -> str:
    """The advice where threadIdx.x already runs along the access's last subscript and the x
    level is narrower than a warp at the point: a warp then spans several rows of the block,
    each a run of sectors of its own (a stencil's misaligned rows of 16 floats: 3 sectors each,
    6 a request where 4 hold them). An x level of 32 threads gives each warp one row of 32
    consecutive elements, which `uncoalesced` never flags; '' otherwise."""
    if x is None or not _runs_along(access, x.var):
        return ""
    subs = evaluate(schedule, point)
    width = sympy.sympify(x.extent).xreplace(subs)
    if not width.is_Integer or not 0 < width < W.WARP:
        return ""
    width = int(width)
    threads = sympy.Mul(*(sympy.sympify(lp.extent).xreplace(subs) for lp in schedule.block))
    rows = -(-W.WARP // width)
    named = "" if sympy.sympify(x.extent).is_Integer else f"{to_c(x.extent)} = "   # Bx = 8, where a fact fixes it
    text = (f"threadIdx.x already runs along its last subscript: the cause is the x level, meta_for {x.var} "
            f"(line {x.span.line}), {named}{width} thread{'s' * (width != 1)} wide, narrower than a warp of "
            f"{W.WARP}, so each warp spans {rows} rows of the block, each its own run of sectors; make it {W.WARP} "
            "threads wide "
            f"(or a multiple of {W.WARP})")
    if threads.is_Integer and threads % W.WARP == 0 and len(schedule.block) == 2:
        text += f": {W.WARP} x {int(threads) // W.WARP} blocks keep the {int(threads)} threads"
    return text


def _swap_helps(schedule: Schedule, array: str, where, x, y, per_case):
    """True when threadIdx.y runs along the access's last subscript and the swap coalesces
    it without uncoalescing another access; the other access's text when it would; None."""
    runs_along = _runs_along
    mine = _access(schedule, array, where)
    if mine is None or not runs_along(mine, y.var):
        return None
    for other in schedule.accesses:
        if other.array == array and other.span == mine.span:
            continue
        if runs_along(other, x.var) and not runs_along(other, y.var):
            return source_text(schedule, other.span) or other.array
    return True
