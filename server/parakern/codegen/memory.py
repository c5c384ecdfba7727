"""Where the CUDA kernel reads and writes array elements: global memory, or the
shared-memory staging of analysis/staging.py, printed as CUDA source.

Global arrays are flattened row-major from their declared extents, in 64-bit
arithmetic as the IR computes it (`c[(long long)i * n + j]`): an N x N matrix
may have more than 2^31 elements.

The plan, its routes and its phases come from analysis/ as they come to the
IR (ir/staged_copies.py, which the registers were counted on), so the two agree;
this module only prints them: one dynamic buffer `parakern_shared`, each
cached array's part at its byte offset; cooperative copy loops (thread `tid`
copies elements tid, tid + nthreads, ...) that skip elements outside the
array, not unrolled where they run in an instance's serial loops (`looped`);
`__syncthreads()` for the phases' barriers; an access reads or writes its
region's copy at (index - region lower bound); write-through routes store
to both copies; uniform choices (`t % 2`) select the regions with the same
parameter-only conditions.
"""
from __future__ import annotations

import sympy

from parakern import syntax
from parakern.analysis.read_boxes import whole
from parakern.analysis.staging import BUFFER, Region, Staged, StagingError, plan, shared_bytes, stepped
from parakern.analysis.staging_phases import Barrier, Copy, phases, thread_axes
from parakern.analysis.staging_routes import Route, Routes, holders
from parakern.analysis.traffic import copy_key
from parakern.analysis.vector_layout import vector_index
from parakern.codegen.cprint import (BINARY, INDENT, POSTFIX, TERNARY, UNARY, CodegenError, Names, Raw,
                                     binop, sym_c, sym_raw, wrap)
from parakern.codegen.trace import Sites, traced
from parakern.kernel import Kernel
from parakern.model import Array

_SUM = BINARY["+"]
VECTOR_TYPES = {"float": "float4"}   # the CUDA vector of analysis/vector_layout.py's LANES elements


def global_element(array: Array, subscripts: list[Raw], site: "int | None" = None, instance: str = "0",
                   atomic: bool = False) -> str:
    """array[s0][s1]... as one subscript of the flattened array (traced: trace.py; `atomic`: the
    element an atomic function updates)."""
    if len(subscripts) == 1:
        return traced(site, False, array.name, subscripts[0].text, instance, atomic)
    if len(array.dims) != len(subscripts):
        raise CodegenError(f"the extents of '{array.name}' are not known, so it cannot be flattened",
                           array.span)
    first = subscripts[0]
    offset = Raw(f"(long long){wrap(first, UNARY)}", UNARY)
    for dim, sub in zip(array.dims[1:], subscripts[1:]):
        offset = binop(binop(offset, "*", sym_raw(dim)), "+", sub)
    return traced(site, False, array.name, offset.text, instance, atomic)


class Staging:
    """The staging code of one kernel variant, as lines of CUDA."""

    def __init__(self, kernel: Kernel, names: Names, no_unroll: bool = False, sites: "Sites | None" = None,
                 looped: bool = False):
        self.schedule = kernel.schedule
        self.sites = sites                 # traced printing (trace.py), else None
        self.no_unroll = no_unroll  # `#pragma unroll 1` on the copy loops, as on every loop of the IR
        # The body's copies run in an instance's serial loops (`looped`): `#pragma unroll 1` on those
        # of boxes too. nvcc unrolls a copy loop of a run-time trip count by 4 and keeps each
        # unrolled element's row, column and 64-bit index (from tid and nthreads: the same in every
        # iteration of the kernel's loop) live across that loop: 16 of the 80 registers of matmul's
        # 4 x 4 tile (docs/bench/register-tiles.md). A box's copy waits for each element anyway
        # (tuning/latency.py); a linear region's, whose loads nvcc batches by 4, and copies run
        # once (prologue, epilogue) keep nvcc's unrolling.
        self.looped = looped
        try:
            self.staged = plan(kernel)
        except StagingError as exc:
            raise CodegenError(exc.message, exc.span) from None
        self.routes = Routes(self.schedule, self.staged)
        self.phases = phases(self.schedule, self.staged)
        self.names = names
        self.part = {st.array.name: names.fresh(st.array.name + "_shared") for st in self.staged}
        self.tid, self.nthreads = names.fresh("tid"), names.fresh("nthreads")
        self.element = names.fresh("e")
        self._coords: dict[int, tuple[str, ...]] = {}
        self._stepping: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        s = self.schedule
        declared = {n.name for n in syntax.walk(s.body) if isinstance(n, syntax.Decl)} | \
            {n.var for n in syntax.walk(s.body) if isinstance(n, syntax.Loop)}
        # Names whose value is the same in the whole block (a subscript in them has a known slot).
        self._fixed = ({p.name for p in s.params} | {d.name for d in s.derived}
                       | {lp.var for lp in s.grid + s.between}) - declared
        self.bytes = shared_bytes(kernel)

    # ---- declarations (the kernel keeps those its code uses)

    def declarations(self) -> list[tuple[str, str]]:
        """(name, line) pairs, in order: the buffer, each array's part, the linear thread id."""
        out = [(BUFFER, f"PARAKERN_DYNAMIC_SHARED({BUFFER});")]
        for st in self.staged:
            t = st.array.ctype
            where = BUFFER if st.offset == 0 else f"({BUFFER} + {sym_c(st.offset)})"
            out.append((self.part[st.array.name], f"{t} *{self.part[st.array.name]} = ({t} *){where};"))
        axes = thread_axes(self.schedule)
        tid, scale = f"threadIdx.{axes[0]}", f"blockDim.{axes[0]}"
        for axis in axes[1:]:
            factor = scale if "*" not in scale else f"({scale})"
            tid += f" + threadIdx.{axis} * {factor}"
            scale += f" * blockDim.{axis}"
        out.append((self.tid, f"const int {self.tid} = {tid};"))
        out.append((self.nthreads, f"const int {self.nthreads} = {scale};"))
        return out

    def summary(self) -> list[str]:
        """Comment lines: where each array's part lies in the buffer."""
        lines = []
        for st in self.staged:
            end = sympy.expand(st.offset + st.elements * st.array.element_size)
            regions = [r for c in st.choices for r in c.regions]
            rows = [sym_c(r.pitch) for r in regions if r.pitch is not None and r.lanes == 1]
            vectors = [r for r in regions if r.lanes > 1]
            lines.append(f"{st.array.name}: bytes [{sym_c(st.offset)}, {sym_c(end)}) "
                         f"of {BUFFER}, {sym_c(st.elements)} elements"
                         + (f", rows {' and '.join(dict.fromkeys(rows))} apart (padded: no bank conflicts "
                            "across rows)" if rows else "")
                         + (f", {len(vectors)} tiles interleaved by {vectors[0].lanes}: a thread's elements of "
                            f"{vectors[0].lanes} tiles side by side, read as one {VECTOR_TYPES[st.array.ctype]}"
                            if vectors else ""))
        return lines

    # ---- the phases around the body

    def prologue(self, depth: int) -> list[str]:
        return self._steps(self.phases.prologue, depth)

    def before_body(self, depth: int) -> list[str]:
        return self._steps(self.phases.before_body, depth, self.looped)

    def after_body(self, depth: int) -> list[str]:
        return self._steps(self.phases.after_body, depth, self.looped)

    def epilogue(self, depth: int) -> list[str]:
        return self._steps(self.phases.epilogue, depth)

    # ---- accesses

    def route(self, node: syntax.Index) -> "Route | None":
        """How the body reaches this element; None: global memory."""
        try:
            return self.routes.route(node.array, node.span)
        except StagingError as exc:
            raise CodegenError(exc.message, exc.span) from None

    def shared_element(self, route: Route, subscripts: list[tuple[Raw, str, syntax.Expr]],
                       site: "int | None" = None, node: "syntax.Index | None" = None) -> str:
        """The element's copy in shared memory; subscripts are (text, C type, syntax); `node`:
        the reference, where it is a read (a vector layout's reads are vector loads)."""
        st = route.staged
        if len(route.placements) == 1 and node is not None:
            (c, k), _ = route.placements[0]
            region = st.choices[c].regions[k]
            access = next((a for a in self.schedule.accesses if a.array == node.array and a.span == node.span
                           and a.exact), None)
            if region.lanes > 1 and holders(st.choices[c], k) == (k,) and access is not None:
                return self._vector_read(st, region, access, site)
        slots = [(self._slot(st, c, k, subscripts), choices) for (c, k), choices in route.placements]
        text = slots[-1][0]
        for slot, choices in reversed(slots[:-1]):
            text = Raw(f"{self._flag(st, choices)} ? {slot.text} : {wrap(text, TERNARY)}", TERNARY)
        return traced(site, True, self.part[st.array.name], text.text,
                      self.sites.instance() if self.sites else "0")

    # ---- copies between global and shared memory

    def _steps(self, steps, depth: int, looped: bool = False) -> list[str]:
        lines = []
        for step in steps:
            if isinstance(step, Barrier):
                lines.append(INDENT * depth + "__syncthreads();" + (f"  /* {step.why} */" if step.why else ""))
            else:
                lines += self._copy_all(step, depth, looped)
        return lines

    def _copy_all(self, copy: Copy, depth: int, looped: bool) -> list[str]:
        lines = []
        for st in self.staged:
            todo = [c for c, choice in enumerate(st.choices) if any(map(copy.selects, choice.regions))]
            if not todo:
                continue
            if len(st.choices) == 1:
                for k, region in enumerate(st.choices[0].regions):
                    if copy.selects(region):
                        lines += self._copy(st, (0, k), region, copy.load, depth, looped)
                continue
            pad = INDENT * depth
            for n, c in enumerate(todo):  # the uniform choice the parameters select
                lines.append(f"{pad}{'} else if' if n else 'if'} ({self._flag(st, (c,))}) {{")
                for k, region in enumerate(st.choices[c].regions):
                    if copy.selects(region):
                        lines += self._copy(st, (c, k), region, copy.load, depth + 1, looped)
            lines.append(pad + "}")
        return lines

    def _copy(self, st: Staged, where: tuple[int, int], region: Region, load: bool, depth: int,
              looped: bool) -> list[str]:
        """Threads copy the region's elements nthreads apart, skipping those off the array
        (`looped`: in the kernel's serial loops)."""
        pad, inner = INDENT * depth, INDENT * (depth + 1)
        array, e = st.array, self.element
        cast = "long" if st.index_type == "long" else None
        sizes = [sym_raw(d.elements) for d in region.dims]
        names = self._coordinate_names(len(region.dims))
        lines = [pad + "/* " + ("load " if load else "write back ") + _describe(st, region) + " */"]
        total = wrap(sym_raw(region.elements), BINARY['<'], True)
        stepping = []
        if stepped(self.schedule, region):
            # The coordinates of e in the box advance by those of nthreads, with a carry, instead
            # of a division and a remainder by run-time sizes per element (the copy loops were
            # bound by integer instructions on an H100). Inside `tid < total`: no size is 0 there.
            at, by = self._stepping_names(len(sizes))
            lines += [f"{pad}if ({self.tid} < {total}) {{"]
            pad, inner = inner, INDENT * (depth + 2)
            lines += [f"{pad}int {_declared(at, self.tid, sizes)};",
                      f"{pad}const int {_declared(by, self.nthreads, sizes)};"]
            stepping = [f"{inner}{' '.join(f'{a} += {b};' for a, b in zip(reversed(at), reversed(by)))}"]
            for k in reversed(range(1, len(sizes))):
                size = wrap(sizes[k], BINARY['<'], True)
                stepping.append(f"{inner}if ({at[k]} >= {size}) {{ {at[k]} -= {size}; {at[k - 1]}++; }}")
            coords = [Raw(n, POSTFIX) for n in at]
        else:
            coords = _coordinates(Raw(e, POSTFIX), sizes)
        if self.no_unroll or (looped and len(region.dims) > 1):
            lines.append(pad + "#pragma unroll 1")
        lines += [f"{pad}for (int {e} = {self.tid}; {e} < {total}; {e} += {self.nthreads}) {{"]
        checks = []
        for name, d, c, dim in zip(names, region.dims, coords, list(array.dims) + [None] * len(names)):
            value = _global_index(d, c, cast)
            lines.append(f"{inner}const {st.index_type} {name} = {value.text};")
            if len(array.dims) == array.rank:
                checks.append(f"0 <= {name} && {name} < {wrap(sym_raw(dim, cast), BINARY['<'], True)}")
        if load and region.reads:  # only what some read needs (analysis/read_boxes.py)
            checks.append(_wanted(region, coords))
        local = Raw(e, POSTFIX)
        if region.pitch is not None:   # padded rows: the slot from the coordinates (analysis/padding.py)
            local = None
            for k, c in enumerate(coords):
                if region.pitch_of(k) is not None and region.dims[k].repeats:   # runs `pitch` apart
                    row = sym_raw(region.row)
                    c = binop(binop(binop(c, "/", row), "*", sym_raw(region.pitch)), "+", binop(c, "%", row))
                local = c if local is None else binop(binop(local, "*", sym_raw(region.scale(k))), "+", c)
        if region.lanes > 1:   # vector layout: positions `lanes` slots apart (analysis/vector_layout.py)
            local = binop(local, "*", Raw(str(region.lanes), POSTFIX))
        slot = local if region.base == 0 else binop(sym_raw(region.base), "+", local)
        instance = self.sites.instance((f"{e} - {self.tid}",)) if self.sites else "0"
        shared = traced(self._site(st, where, "shared"), True, self.part[array.name], slot.text, instance)
        glob = global_element(array, [Raw(n, POSTFIX) for n in names], self._site(st, where, "global"), instance)
        copy = f"{shared} = {glob};" if load else f"{glob} = {shared};"
        if checks:  # a block at the edge of the array stops at it; and at what no read needs
            test = f"{inner}if ({' && '.join(checks)})"
            if len(test) > 100 and len(checks) > 1:
                test = f"{inner}if ({' && '.join(checks[:-1])}\n{inner}    && {checks[-1]})"
            lines += [test, f"{inner}{INDENT}{copy}"]
        else:
            lines.append(inner + copy)
        lines += stepping + [pad + "}"]
        return lines + ([INDENT * depth + "}"] if stepping else [])

    def _site(self, st: Staged, where: tuple[int, int], space: str) -> "int | None":
        return None if self.sites is None else self.sites.site(copy_key(st.array.name, *where, space))

    def _stepping_names(self, rank: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Names of the copy loop's coordinates of e in the box and of nthreads's (one set per kernel)."""
        if rank not in self._stepping:
            self._stepping[rank] = (tuple(self.names.fresh(f"e{k}") for k in range(rank)),
                                    tuple(self.names.fresh(f"de{k}") for k in range(rank)))
        return self._stepping[rank]

    def _coordinate_names(self, rank: int) -> tuple[str, ...]:
        if rank not in self._coords:
            stems = ["g"] if rank == 1 else [f"g{k}" for k in range(rank)]
            self._coords[rank] = tuple(self.names.fresh(s) for s in stems)
        return self._coords[rank]

    # ---- where an access goes (ir/staged_copies.py's _slot, _locate, _unstride, in C)

    def _flag(self, st: Staged, choices) -> str:
        """C condition: the parameters select one of these choices."""
        terms = [sympy.And(*(cond if taken else sympy.Not(cond) for cond, taken in st.choices[c].when))
                 for c in choices]
        return sym_c(sympy.Or(*terms))

    def _slot(self, st: Staged, c: int, k: int, subscripts) -> Raw:
        """Position in the part: the first region of the choice that holds the element."""
        choice = st.choices[c]
        result = None
        for j in holders(choice, k):
            region = choice.regions[j]
            local, inside = self._locate(st, region, subscripts, need_inside=j != k)
            here = local if region.base == 0 else binop(sym_raw(region.base), "+", local)
            result = here if result is None else \
                Raw(f"{inside} ? {here.text} : {wrap(result, TERNARY)}", TERNARY)
        return result

    def _vector_read(self, st: Staged, region: Region, access, site: "int | None") -> str:
        """`reinterpret_cast<const float4 *>(b_shared)[v].y`: the element as its lane of the
        aligned vector that holds it (analysis/vector_layout.py), its index printed from the
        access's position in the region, the same text for the reads of the vector's other
        lanes: one load (traced: the element read is noted, verify/parakern_cpu.h's
        PARAKERN_AT_SHARED4)."""
        index = sym_c(vector_index(region, access.indices))
        part, lane = self.part[st.array.name], "xyzw"[region.lane]
        if site is None:
            return f"reinterpret_cast<const {VECTOR_TYPES[st.array.ctype]} *>({part})[{index}].{lane}"
        instance = self.sites.instance() if self.sites else "0"
        return f"PARAKERN_AT_SHARED4({site}, {instance}, {part}, {index}, {region.lane}).{lane}"

    def _locate(self, st: Staged, region: Region, subscripts, need_inside: bool):
        """Row-major position in the region and (need_inside) the C test that the region holds it."""
        cast = "long" if st.index_type == "long" else None
        linear, inside = None, []
        for k, (d, (g, gtype, node)) in enumerate(zip(region.dims, subscripts)):
            known = syntax.to_sympy(node) if syntax.variables(node) <= self._fixed else None
            lower = sym_raw(d.lower, cast)
            if need_inside and d.span == 1 and not d.repeats:  # a single element: the IR's test is g == lower
                g64 = g if gtype in ("int", "long", "long long") else Raw(f"(long long){wrap(g, UNARY)}", UNARY)
                inside.append(binop(g64, "==", lower).text)
                position = Raw("0", POSTFIX)
            elif need_inside:  # in 64 bits: an element far away must not wrap into the region
                relative = binop(Raw(f"(long long){wrap(g, UNARY)}", UNARY), "-", lower)
                span = wrap(sym_raw(d.span), UNARY)
                inside.append(f"(unsigned long long)({relative.text}) < (unsigned long long){span}")
                position = Raw(f"(int)({relative.text})", UNARY)
            elif known is not None and sympy.expand(known - d.lower).is_Integer:  # a[N - 1] -> slot 0
                position = sym_raw(sympy.expand(known - d.lower))
            elif st.index_type == "int":
                as_int = g if gtype == "int" else Raw(f"(int){wrap(g, UNARY)}", UNARY)
                position = as_int if d.lower == 0 else binop(as_int, "-", lower)
            else:
                position = Raw(f"(int)({binop(Raw(f'(long){wrap(g, UNARY)}', UNARY), '-', lower).text})", UNARY)
            if d.repeats:
                position, holds = _unstride(d, position, region.pitch_of(k))
                if need_inside:
                    inside.extend(holds)
            size = sym_raw(region.scale(k))
            linear = position if linear is None else binop(binop(linear, "*", size), "+", position)
        if region.lanes > 1:   # vector layout: positions `lanes` slots apart
            linear = binop(linear, "*", Raw(str(region.lanes), POSTFIX))
        return linear, " && ".join(inside)


def _coordinates(e: Raw, sizes: list[Raw]) -> list[Raw]:
    """Row-major coordinates of local element e in a box of the given sizes."""
    coords, q = [], e
    for k in reversed(range(len(sizes))):
        if k == 0:
            coords.append(q)
        else:
            coords.append(binop(q, "%", sizes[k]))
            q = binop(q, "/", sizes[k])
    return coords[::-1]


def _declared(names, linear: str, sizes: list[Raw]) -> str:
    """`n0 = linear / S1, n1 = linear % S1`: names set to the coordinates of `linear` in a box."""
    return ", ".join(f"{n} = {c.text}" for n, c in zip(names, _coordinates(Raw(linear, POSTFIX), sizes)))


def _wanted(region: Region, coords: list[Raw]) -> str:
    """C test: some box of the region's reads holds the element at these local coordinates."""
    terms = []
    for box in region.reads:
        tests = []
        for c, (lo, size), covers in zip(coords, box, whole(box, region)):
            if covers:
                continue
            relative = c if lo == 0 else binop(c, "-", sym_raw(lo))
            tests.append(f"(unsigned)({relative.text}) < (unsigned){wrap(sym_raw(size), UNARY)}")
        terms.append(" && ".join(tests) or "1")
    return "(" + " || ".join(f"({t})" if " && " in t else t for t in terms) + ")"


def _global_index(d, local: Raw, cast) -> Raw:
    """lower + r + sum(stride * m) for a local position in one dimension of a region."""
    run, q = local, None
    if d.repeats:
        extent = sym_raw(d.extent)
        run, q = binop(local, "%", extent), binop(local, "/", extent)
    index = run if d.lower == 0 else binop(sym_raw(d.lower, cast), "+", run)
    for n, (stride, count) in enumerate(d.repeats):
        if n + 1 < len(d.repeats):
            m, q = binop(q, "%", sym_raw(count)), binop(q, "/", sym_raw(count))
        else:
            m = q
        index = binop(index, "+", binop(sym_raw(stride, cast), "*", m))
    return index


def _unstride(d, relative: Raw, pitch=None):
    """relative = r + sum(stride * m) -> r + extent * (m1 + count1 * (m2 + ...)) (the runs `pitch`
    apart where padded), and its range tests."""
    ms, rest = [], relative
    for stride, _ in reversed(d.repeats):  # outermost stride first: the runs do not overlap
        s = sym_raw(stride)
        ms.insert(0, binop(rest, "/", s))
        rest = binop(rest, "%", s)  # C's % is rest - (rest / s) * s, as the IR computes it
    extent = sym_raw(d.extent)
    holds = [f"(unsigned){wrap(rest, UNARY)} < (unsigned){wrap(extent, UNARY)}"]
    position = None
    for m, (_, count) in zip(reversed(ms), reversed(d.repeats)):
        holds.append(f"(unsigned){wrap(m, UNARY)} < (unsigned){wrap(sym_raw(count), UNARY)}")
        position = m if position is None else binop(binop(position, "*", sym_raw(count)), "+", m)
    run = extent if pitch is None else sym_raw(pitch)
    return binop(binop(position, "*", run), "+", rest), holds


def _describe(st: Staged, region: Region) -> str:
    """`the B*s + 2 elements of a from B*i*s + N`, `the (By + 2) x (Bx + 2) tile of in from (...)`."""
    def size(d):
        text = sym_c(d.extent)
        for stride, count in d.repeats:
            text = f"{sym_c(count)} runs of {text} every {sym_c(stride)}"
        return text
    name = st.array.name
    if len(region.dims) == 1:
        d = region.dims[0]
        if d.elements == 1:
            return f"the element {name}[{sym_c(d.lower)}]"
        what = f"{size(d)} elements" if not d.repeats else size(d)
        return f"the {what} of {name} from {sym_c(d.lower)}"
    sizes = " x ".join(f"({size(d)})" if not sympy.sympify(d.extent).is_Atom or d.repeats else size(d)
                       for d in region.dims)
    return f"the {sizes} tile of {name} from ({', '.join(sym_c(d.lower) for d in region.dims)})"
