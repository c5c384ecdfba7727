"""Memory traffic of one kernel variant, computed statically at a parameter point.

For every way the kernel reaches memory (an array access of the body, in global or shared
memory, and each copy loop of the shared-memory staging) a `Request`: how many warp
requests one block issues, and what each costs: 32-byte sectors in global memory, wavefronts
in shared memory (warps.py). The cost comes from the access function: the flattened index
as a polynomial, its coefficient on each thread index (the stride across threadIdx.x, .y,
.z) gives the byte offsets of a warp's lanes; where the warp's first element lies within a
sector depends on the other variables (grid indices, serial loops), and the cost is the
mean over the offsets those variables reach (a coefficient of 8 floats keeps the start of
every request on a sector boundary; one of 1 float moves it through all eight places, or
through the first three where a 3-tap loop t < 3 moves it; `(bq % gp) * 32` floats, a
multiple of 8, through none). A loop whose bounds are numbers at the point is taken over
its values, the others over every offset their coefficient allows.

Assumptions, the same as the emulation's measurement is taken under (verify/emulated_traffic.py):
arrays start on a sector boundary (cudaMalloc aligns to 256 bytes); every guard that
depends on the thread holds (bounds checks), its `else` counted in the share of warps where a
lane fails it (16 blocks spread over the grid tell), a
guard on parameters only is evaluated at the point, and one on the variables of the serial
loops between grid and block levels counts in the share of their iterations where it holds
(`t % 2 == 0`: each branch in half); a loop bound that depends on another
loop's variable is taken at the middle of that variable's range; an index that is not
affine in the thread indices is evaluated with the other variables at their first value
(`exact` False). Accesses kept in registers (decision (5)) are not memory requests.

The minimum is what the block cannot avoid moving: each element it reads loaded once (not
those it wrote first, written_first.py; a stencil's box less its unread corners) and each
element it writes stored once (its footprints, analysis/footprint.py, per iteration of
the serial loops between grid and block levels where they move with them), and never more
than the elements its accesses reach (a[(p + 1) % N]: the footprint is the whole array, the
block's threads reach 34 elements).
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from dataclasses import dataclass

import sympy

from parakern import syntax
from parakern.analysis import warps as W
from parakern.symbolic.cinteger import LAMBDIFY_MODULES
from parakern.analysis.dependence import source_text
from parakern.analysis.footprint import footprint
from parakern.analysis.lifted import lifted
from parakern.analysis.loop_ranges import stride_start
from parakern.analysis.point import evaluate
from parakern.analysis.read_boxes import read_boxes
from parakern.analysis.updates import made_atomically
from parakern.analysis.written_first import written_first
from parakern.source.diagnostics import Span
from parakern.kernel import Kernel
from parakern.model import Schedule
from parakern.symbolic.symbols import sym
from parakern.analysis.staging import plan
from parakern.analysis.staging_routes import Routes
from parakern.analysis.point import definitions
from parakern.analysis.staging_routes import holders
from parakern.analysis.staging_phases import phases


MAX_COUNTED = 1 << 18    # elements of a box enumerated to count what its accesses reach
MAX_STARTS = 1 << 12     # values of variables that move a term together, enumerated to place a request
SAMPLED_BLOCKS = 16       # blocks whose warps say how often the else of a guard on the thread runs
MAX_COPY_WARPS = 1 << 12  # warp requests of a copy loop walked one by one; beyond, evenly spaced ones stand for all


@dataclass(frozen=True)
class Request:
    """One kind of warp request of a block: an access (or a copy loop) in one memory space."""
    key: tuple              # ("access", array, span, space) or ("copy", array, choice, region, space)
    kind: str               # "read" or "write"
    array: str
    space: str              # "global" or "shared"
    text: str               # the access as written, or what the copy moves
    span: "Span | None"     # the access in the source (None for copies)
    stride: "sympy.Expr | None"   # elements between lanes next in threadIdx.x (None: not affine)
    per_warp: float         # requests of one warp: the executions by one of its threads
    requests: float         # warp requests per block
    cost: float             # mean sectors (global) or wavefronts (shared) per request
    ideal: float            # the fewest the same lanes' distinct elements could take
    size: int               # bytes per element
    exact: bool
    full_cost: "float | None" = None   # mean over the requests of every lane of their warp (None: all are)
    on_values: bool = False  # under an if on array values: counted in every warp, run where the data says

    @property
    def cost_of_full(self) -> float:
        return self.cost if self.full_cost is None else self.full_cost

    @property
    def conflicts(self) -> float:
        """Shared memory: wavefronts beyond the ideal, per request (bank conflicts)."""
        return max(0.0, self.cost - self.ideal)


@dataclass(frozen=True)
class Traffic:
    point: tuple[tuple[str, int], ...]
    block: tuple[int, int, int]
    requests: tuple[Request, ...]
    minimum_bytes: "float | None"      # per block; None where a footprint is unbounded
    note: str = ""

    def _space(self, space: str):
        return [r for r in self.requests if r.space == space]

    @property
    def global_requests(self) -> float:
        return sum(r.requests for r in self._space("global"))

    @property
    def global_bytes(self) -> float:
        """Bytes moved between global memory and the SMs per block: sectors * 32."""
        return sum(r.requests * r.cost * W.SECTOR for r in self._space("global"))

    @property
    def sectors_per_request(self) -> float:
        n = self.global_requests
        return sum(r.requests * r.cost for r in self._space("global")) / n if n else 0.0

    @property
    def shared_requests(self) -> float:
        return sum(r.requests for r in self._space("shared"))

    @property
    def conflicts_per_request(self) -> float:
        n = self.shared_requests
        return sum(r.requests * r.conflicts for r in self._space("shared")) / n if n else 0.0

    @property
    def ratio(self) -> "float | None":
        """Bytes moved over the minimum."""
        if not self.minimum_bytes:
            return None
        return self.global_bytes / self.minimum_bytes


def access_key(array: str, span: Span, space: str) -> tuple:
    """The reference at its source range; each row of thread coarsening (6) is a reference of
    its own (its own warps and sectors), at the same range."""
    where = (span.line, span.col, span.end_line, span.end_col)
    return ("access", array, where, space) + ((span.copy,) if span.copy else ())


def copy_key(array: str, choice: int, region: int, space: str) -> tuple:
    return ("copy", array, choice, region, space)


def traffic(kernel: Kernel, values: dict) -> Traffic:
    """The kernel's requests per block at `values` (parameter name -> integer)."""
    return _traffic(kernel, tuple(sorted(values.items())))


@functools.lru_cache(maxsize=256)
def _traffic(kernel: Kernel, items: tuple) -> Traffic:
    at = _At(kernel, dict(items))
    requests = at.body_requests() + at.copy_requests()
    point = tuple((k, v) for k, v in items)
    return Traffic(point, at.block, tuple(requests), at.minimum(), "; ".join(dict.fromkeys(at.notes)))


# ------------------------------------------------------------------ the kernel at a point

@dataclass(frozen=True)
class _Var:
    low: int          # first value
    mid: float        # middle of the range (loop bounds that read it are taken there)
    count: float      # number of values (>= 2: it moves where a request starts)
    values: "range | None" = None   # None where its bounds read another loop's variable


class _At:
    def __init__(self, kernel: Kernel, values: dict):
        self.kernel = kernel
        s = self.s = kernel.schedule
        self.subs = evaluate(s, values)
        self._ints: dict = {}
        self.notes: list[str] = []
        self.vars: dict[sympy.Symbol, _Var] = {}
        self.threads: dict[sympy.Symbol, tuple[int, int]] = {}   # symbol -> (axis position, lo)
        dims = {"x": 1, "y": 1, "z": 1}
        for loop in s.loops:
            lo, extent = self._int(loop.lo), self._int(loop.extent)
            if loop.level == "block":
                dims[loop.axis] = extent
                self.threads[sym(loop.var)] = ("xyz".index(loop.axis), lo)
            self.vars[sym(loop.var)] = _Var(lo, lo + (extent - 1) / 2, extent, range(lo, lo + extent))
        self.block = (dims["x"], dims["y"], dims["z"])
        self.warps = W.warps(self.block)
        self.stepped: dict = {}   # grid-stride loop variable -> its start + step * its iteration
        self.between = 1.0
        for loop in s.between:
            var = self._serial(loop.var, loop.lo, loop.hi, loop.step)
            self.between *= var.count
        self.plan = lifted(kernel)

    # ---- values

    def _value(self, expr):
        return sympy.sympify(expr).xreplace(self.subs)

    def _int(self, expr) -> int:
        # asked again for every lane of every warp (a tile's sizes, pitch, offset): once each
        found = self._ints.get(expr)
        if found is None:
            v = self._value(expr)
            if not v.is_Integer:
                raise ValueError(f"'{expr}' is not a number at this point ({v})")
            found = self._ints[expr] = int(v)
        return found

    def _serial(self, var: str, lo, hi, step) -> _Var:
        """A serial loop's variable at the point; its bounds taken where the variables they read
        are at their middle."""
        mids = {v: sympy.Rational(x.mid) if isinstance(x.mid, int) else sympy.nsimplify(x.mid)
                for v, x in self.vars.items()}
        lows = {v: sympy.Integer(x.low) for v, x in self.vars.items()}
        try:
            first = self._value(lo).xreplace(lows)
            a, b, c = (self._value(e).xreplace(mids) for e in (lo, hi, step))
            window = stride_start(lo, step, self.s)
            if window is not None:   # a grid-stride loop: the threads share [window, hi) out
                a = self._value(window)
            count = float(max(0, (b - a) / c))
            if a.is_Integer and b.is_Integer and c.is_Integer:
                count = float(max(0, math.ceil((b - a) / c)))
            low = int(first) if first.is_Integer else int(float(first))
            mid = float(a) + float(c) * (count - 1) / 2 if count else float(a)
            values = self._range(lo, hi, step)
        except (TypeError, ValueError, ZeroDivisionError):
            self.notes.append(f"the bounds of loop {var} are not numbers at this point: counted once")
            low, mid, count, values = 0, 0.0, 1.0, None
        found = _Var(low, mid, count, values)
        self.vars[sym(var)] = found
        return found

    def _range(self, lo, hi, step) -> "range | None":
        """A loop's values where its bounds are numbers at the point, not only how many."""
        a, b, c = (self._value(e) for e in (lo, hi, step))
        if not (a.is_Integer and b.is_Integer and c.is_Integer) or c == 0:
            return None
        return range(int(a), int(b), int(c))

    def _lows(self, expr):
        """expr with every loop variable but the thread indices at its first value."""
        return sympy.sympify(expr).xreplace({v: sympy.Integer(x.low) for v, x in self.vars.items()
                                            if v not in self.threads})

    # ---- the body's accesses

    def body_requests(self) -> list[Request]:
        routes = Routes(self.s, plan(self.kernel)) if self.kernel.cached else None
        self.routes = routes
        found: dict = {}
        walk = _Walk(self, found)
        outside = 1.0 / self.between if self.between else 0.0   # once per thread, not per iteration
        walk.block(syntax.Block(self.plan.before, self.s.body.span), {}, outside)
        walk.block(self.plan.body, {}, 1.0)
        walk.block(syntax.Block(self.plan.after, self.s.body.span), {}, outside)
        return list(found.values())

    def use(self, found: dict, node: syntax.Index, kind: str, weight: float, on_values: bool = False) -> None:
        """One execution pattern of an element reference: its requests, added to `found`."""
        access = self._access(node)
        if access is None:
            return
        per_thread = weight * self.between
        route = self.routes.route(node.array, node.span) if self.routes else None
        if route is None:
            spaces = [("global", kind)]
        elif route.through and kind == "write":   # the store, then the copy read back for global
            spaces = [("shared", "write"), ("shared", "read"), ("global", "write")]
        else:
            spaces = [("shared", kind)]
        for space, kind in spaces:
            key = access_key(node.array, node.span, space)
            if (key, kind) in found:
                old = found[key, kind]
                found[key, kind] = dataclasses.replace(old, per_warp=old.per_warp + per_thread,
                                                       requests=old.requests + per_thread * len(self.warps),
                                                       on_values=old.on_values and on_values)
                continue
            cost, ideal, exact = (self._global(access) if space == "global"
                                  else self._shared(access, route))
            exact = exact and not self._uneven(access)
            found[key, kind] = Request(
                key, kind, node.array, space, source_text(self.s, node.span) or node.array, node.span,
                self._stride(access), per_thread, per_thread * len(self.warps), cost, ideal,
                self.s.array(node.array).element_size, exact, on_values=on_values)

    def _uneven(self, access) -> bool:
        """Whether a serial loop around the access stops where a lane's index says (`k < (p < W ?
        p + 1 : W)`): lanes then leave the warp's requests one by one, which the cost of whole
        warps does not follow (it is an estimate, not checked against the emulation)."""
        threads = {sym(lp.var) for lp in self.s.block}
        return any(isinstance(x, (sympy.Piecewise, sympy.Min, sympy.Max)) for lp in self.s.serial
                   if lp.var in access.loops
                   for bound in (sympy.sympify(lp.lo), sympy.sympify(lp.hi)) if bound.free_symbols & threads
                   for x in sympy.preorder_traversal(bound))

    def _access(self, node: syntax.Index):
        same = [a for a in self.s.accesses if a.array == node.array and a.span == node.span]
        return next((a for a in same if a.exact), same[0] if same else None)

    def _linear(self, access, symbolic: bool = False) -> "sympy.Expr | None":
        """The flattened index of the element (row-major over the declared extents)."""
        array = self.s.array(access.array)
        if not access.exact:
            return None
        if len(access.indices) == 1:
            linear = sympy.sympify(access.indices[0])
        elif len(array.dims) == len(access.indices):
            linear = sympy.S.Zero
            for dim, index in zip(array.dims, access.indices):
                linear = linear * sympy.sympify(dim) + sympy.sympify(index)
        else:
            return None
        linear = linear.xreplace(self.stepped) if self.stepped else linear
        linear = linear if symbolic else self._value(linear)
        # x % n as x - n * (x / n): `(rq / nq) * nq + rq % nq` is rq again, a stride the warp sees
        return sympy.expand(linear.replace(sympy.Mod, lambda a, b: a - b * sympy.floor(a / b)))

    def _stride(self, access) -> "sympy.Expr | None":
        x = next((lp for lp in self.s.block if lp.axis == "x"), None)
        linear = self._linear(access, symbolic=True)
        if x is None or linear is None:
            return None
        stride = sympy.expand(sympy.diff(linear, sym(x.var)).xreplace(definitions(self.s)))
        loops = set(self.vars)
        return None if stride.free_symbols & loops else stride

    def _lane_indices(self, expr) -> "tuple[list[list[int]], bool] | None":
        """Per warp, the value of `expr` at each lane (other loop variables at their first
        value), and whether it is affine in the thread indices with constant coefficients."""
        coefficients, exact = {}, True
        for v in self.threads:
            c = sympy.diff(expr, v)
            if not c.is_Number:
                exact = False
            coefficients[v] = c
        if exact:
            rest = expr - sum((c * v for v, c in coefficients.items()), sympy.S.Zero)
            base = self._lows(rest)
            if not base.is_Integer:
                return None
            by_axis = {self.threads[v][0]: (int(c), self.threads[v][1]) for v, c in coefficients.items()}
            out = []
            for warp in self.warps:
                out.append([int(base) + sum(c * (lo + lane[a]) for a, (c, lo) in by_axis.items())
                            for lane in warp])
            return out, True
        low = self._lows(expr)
        out = []
        for warp in self.warps:
            lanes = []
            for lane in warp:
                v = low.xreplace({s: lo + lane[a] for s, (a, lo) in self.threads.items()})
                if not v.is_Integer:
                    return None
                lanes.append(int(v))
            out.append(lanes)
        return out, False

    def _shifts(self, expr, size: int) -> dict[int, float]:
        """How far, in bytes modulo a sector, the varying non-thread variables move the element
        from where it lies at their first values, each offset with its share of the requests.
        Variables that share a term (bq in `(bq % gp) * Bx + (bq / gp) * By * n`) move it
        together; the others independently, so the parts combine."""
        moving = {v for v, x in self.vars.items()
                  if v not in self.threads and x.count >= 2 and v in expr.free_symbols}
        fixed = {v: sympy.Integer(lo) for v, (_, lo) in self.threads.items()}
        fixed.update({v: sympy.Integer(x.low) for v, x in self.vars.items() if v not in self.threads.keys() | moving})
        parts: list[tuple[set, list]] = []
        for term in sympy.Add.make_args(sympy.expand(sympy.sympify(expr).xreplace(fixed))):
            mine = term.free_symbols & moving
            if not mine:
                continue
            joined = [p for p in parts if p[0] & mine]
            parts = [p for p in parts if not p[0] & mine]
            parts.append((mine.union(*(p[0] for p in joined)), [term] + [t for p in joined for t in p[1]]))
        out = {0: 1.0}
        for variables, terms in parts:
            out = W.combine(out, self._part(sympy.Add(*terms), sorted(variables, key=str), size))
        return out

    def _part(self, expr, variables: list, size: int) -> dict[int, float]:
        """_shifts of the terms `expr` that `variables` move together."""
        found = [self.vars[v] for v in variables]
        if len(variables) == 1 and sympy.diff(expr, variables[0]).is_Integer:
            c = int(sympy.diff(expr, variables[0])) * size
            x = found[0]
            # a loop whose values are known (a 3-tap loop: t = 0, 1, 2) starts where they put it
            return W.spread(c * x.values.step, len(x.values)) if x.values else W.spread(c)
        if all(x.values for x in found) and math.prod(len(x.values) for x in found) <= MAX_STARTS:
            base = expr.xreplace({v: sympy.Integer(x.values[0]) for v, x in zip(variables, found)})
            out: dict[int, float] = {}
            combos = list(itertools.product(*(x.values for x in found)))
            for values in combos:
                moved = expr.xreplace(dict(zip(variables, map(sympy.Integer, values)))) - base
                if not moved.is_Integer:
                    break
                out[int(moved) * size % W.SECTOR] = out.get(int(moved) * size % W.SECTOR, 0.0) + 1 / len(combos)
            else:
                return out
        # every offset the terms' coefficients allow, alike ((bq % gp) * 32 floats: a sector's multiple)
        g = 0
        for term in sympy.Add.make_args(expr):
            c = term.as_coeff_Mul()[0]
            g = math.gcd(g, int(c) * size if c.is_Integer else size)
        return W.spread(g)

    def _global(self, access) -> tuple[float, float, bool]:
        size = self.s.array(access.array).element_size
        linear = self._linear(access)
        lanes = self._lane_indices(linear) if linear is not None else None
        if lanes is None:
            self.notes.append(f"an index of '{access.array}' has no value per lane here: counted as 32 sectors")
            return float(W.WARP * size // W.WORD), float(size), False
        values, exact = lanes
        shifts = self._shifts(linear, size)
        cost = ideal = 0.0
        for warp in values:
            offsets = [(i - warp[0]) * size for i in warp]
            cost += W.mean_sectors(warp[0] * size, offsets, shifts)
            ideal += W.ideal_sectors(offsets, size)
        return cost / len(values), ideal / len(values), exact

    def _shared(self, access, route) -> tuple[float, float, bool]:
        st = route.staged
        c, k = self._placement(route)
        region = st.choices[c].regions[k]
        size = st.array.element_size
        slots, exact = [], True
        for index, d in zip(access.indices, region.dims):
            rel = sympy.expand(self._value(sympy.sympify(index) - d.lower))
            lanes = self._lane_indices(rel)
            if lanes is None:
                return 1.0, 1.0, False
            exact = exact and lanes[1]
            slots.append((lanes[0], d))
        cost = ideal = 0.0
        for w in range(len(self.warps)):
            addresses = []
            for lane in range(len(self.warps[w])):
                linear = 0
                for k, (per_warp, d) in enumerate(slots):
                    pitch = region.pitch_of(k)
                    position = d.position(per_warp[w][lane], self._int, None if pitch is None else self._int(pitch))
                    linear = linear * self._int(region.scale(k)) + position
                linear *= region.lanes   # vector layout (vector_layout.py): positions `lanes` apart
                addresses.append(self._int(st.offset) + (self._int(region.base) + linear) * size)
            cost += W.wavefronts(addresses, size)
            ideal += W.ideal_wavefronts(addresses, size)
        n = len(self.warps)
        # An element that an earlier region may hold is read there (staging_routes.holders): the
        # lanes of one warp may split between two tiles (a[i][j] beside a[j][i]), which the count
        # of region k alone does not follow: an estimate (1 static against 1.375 emulated).
        several = len(holders(st.choices[c], k)) > 1
        return cost / n, ideal / n, exact and not several

    def _placement(self, route) -> tuple[int, int]:
        chosen = self._choice(route.staged.choices)
        for (c, k), choices in route.placements:
            if chosen in choices:
                return c, k
        return route.placements[0][0]

    def _choice(self, choices) -> int:
        """The uniform choice the parameters select at the point."""
        for n, choice in enumerate(choices):
            if all((self._value(cond) is sympy.true) == taken for cond, taken in choice.when):
                return n
        return 0

    # ---- the staging copies

    def copy_requests(self) -> list[Request]:
        if not self.kernel.cached:
            return []
        staged = plan(self.kernel)
        steps = phases(self.s, staged)
        out = []
        for copies, times in ((steps.prologue + steps.epilogue, 1.0),
                              (steps.before_body + steps.after_body, self.between)):
            for copy in copies:
                if not hasattr(copy, "load"):
                    continue   # a barrier
                for st in staged:
                    c = self._choice(st.choices)
                    for k, region in enumerate(st.choices[c].regions):
                        if copy.selects(region):
                            out += self._copy(st, c, k, region, copy.load, times)
        return out

    def _copy(self, st, c: int, k: int, region, load: bool, times: float) -> list[Request]:
        size = st.array.element_size
        array = st.array
        rows = [1] * len(region.dims)
        if len(array.dims) == len(region.dims):
            for d in range(len(region.dims) - 2, -1, -1):
                rows[d] = rows[d + 1] * self._int(array.dims[d + 1])
        sizes = [self._int(d.elements) for d in region.dims]
        total = math.prod(sizes)
        base = sympy.expand(sum((self._value(d.lower) * r for d, r in zip(region.dims, rows)), sympy.S.Zero))
        shifts = self._shifts(base, size)
        first = self._lows(base)
        first = int(first) if first.is_Integer else 0
        nthreads = self.block[0] * self.block[1] * self.block[2]
        reads = self._read_set(region)

        def coordinates(e: int) -> list[int]:
            coords, q = [], e
            for n in reversed(sizes[1:]):
                coords.append(q % n)
                q //= n
            coords.append(q)
            coords.reverse()
            return coords

        def offset(e: int) -> int:
            return sum(_global_position(p, d, self._int) * r
                       for p, d, r in zip(coordinates(e), region.dims, rows))

        scales = [self._int(region.scale(k)) for k in range(len(region.dims))]
        row, pitch = self._int(region.row), None if region.pitch is None else self._int(region.pitch)

        def slot(e: int) -> int:   # where the copy puts element e: e, unless padded or in vector layout
            if region.pitch is None:
                return e * region.lanes
            linear = 0
            for k, (p, n) in enumerate(zip(coordinates(e), scales)):
                if region.pitch_of(k) is not None and region.dims[k].repeats:   # runs `pitch` apart
                    p = p // row * pitch + p % row
                linear = linear * n + p
            return linear

        count = cost = ideal = 0.0
        wave = wave_ideal = 0.0
        full = [0, 0.0, 0.0]     # requests of a whole warp: count, sectors, wavefronts
        # a region no shared memory holds (a % subscript's whole array: 2^30 elements) would
        # take hours one warp after another: every `every`-th round of the block stands for
        # its neighbours (the counts scaled back, the means those of the rounds walked)
        rounds = -(-total // nthreads)
        warps_per_round = -(-min(nthreads, total) // W.WARP)
        every = max(1, -(-rounds * warps_per_round // MAX_COPY_WARPS))
        for start in range(0, total, nthreads * every):
            for w in range(0, min(nthreads, total - start), W.WARP):
                lanes = [e for e in range(start + w, min(start + w + W.WARP, start + nthreads, total))
                         if reads is None or reads(e)]
                if not lanes:
                    continue
                offsets = [offset(e) * size for e in lanes]
                count += 1
                sectors = W.mean_sectors(first * size, offsets, shifts)
                cost += sectors
                ideal += W.ideal_sectors(offsets, size)
                slots = [self._int(st.offset) + (self._int(region.base) + slot(e)) * size for e in lanes]
                waves = W.wavefronts(slots, size)
                wave += waves
                wave_ideal += W.ideal_wavefronts(slots, size)
                if len(lanes) == min(W.WARP, nthreads - w):
                    full[0] += 1
                    full[1] += sectors
                    full[2] += waves
        if not count:
            return []
        what = ("load " if load else "write back ") + _describe(array.name, region, self._int)
        walked = -(-rounds // every)
        requests = count * times * (rounds / walked)
        kinds = (("global", "read" if load else "write"), ("shared", "write" if load else "read"))
        out = []
        for space, kind in kinds:
            mean, best = (cost / count, ideal / count) if space == "global" else (wave / count, wave_ideal / count)
            whole = (full[1] if space == "global" else full[2]) / full[0] if full[0] else None
            out.append(Request(copy_key(array.name, c, k, space), kind, array.name, space, what, None,
                               sympy.S.One, requests / len(self.warps), requests, mean, best, size, every == 1,
                               whole))
        return out

    def _read_set(self, region):
        """Which elements of the region a load copies (None: all of them)."""
        pieces = getattr(region, "reads", None)
        if not pieces:
            return None
        sizes = [self._int(d.elements) for d in region.dims]
        boxes = [[(self._int(lo), self._int(n)) for lo, n in box] for box in pieces]

        def inside(e: int) -> bool:
            coords, q = [], e
            for n in reversed(sizes[1:]):
                coords.append(q % n)
                q //= n
            coords.append(q)
            coords.reverse()
            return any(all(lo <= x < lo + n for x, (lo, n) in zip(coords, box)) for box in boxes)
        return inside

    # ---- the minimum

    def minimum(self) -> "float | None":
        s = self.s
        total = 0.0
        mine = written_first(s)   # reads of what the thread wrote first need no global load
        between = {sym(lp.var) for lp in s.between}
        for array in s.arrays:
            for write in (False, True):
                chosen = tuple(a for i, a in enumerate(s.accesses) if a.array == array.name
                               and (a.is_write if write else a.is_read and i not in mine))
                if not chosen:
                    continue
                only = dataclasses.replace(s, accesses=chosen)
                fp = footprint(only, array.name)
                if not fp.bounded:   # an opaque subscript of an array of unknown size
                    elements = self._reach(chosen, math.inf)
                    if elements == math.inf:
                        return None
                else:
                    elements = 0.0
                    for cluster in fp.regions[self._choice(fp.regions)].clusters:
                        moves = any(sympy.sympify(d.lower).free_symbols & between for d in cluster.dims)
                        counted = self._elements(only, cluster) * (self.between if moves else 1)
                        # no more than its accesses reach: a[(p + 1) % N]'s cluster is the whole array
                        reach = self._reach([chosen[i] for i in cluster.accesses],
                                            counted if cluster.exact else math.inf)
                        elements += min(counted, reach)
                total += elements * array.element_size
        return total

    def _reach(self, accesses, exact: float) -> float:
        """Elements the accesses of one cluster can touch in one block: at most one per
        execution, and where that is fewer than `exact` (the footprint's count where it is
        exact), the distinct elements their indices take (each loop over its values, the grid
        indices at the first block's: a cluster's accesses keep their distances from block to
        block, clusters need not, so each cluster is counted alone)."""
        refs: dict = {}
        for a in accesses:   # a reference's read and write, or its two analyses, touch one element
            if a.span not in refs or a.exact:
                refs[a.span] = a
        executions = sum(self._executions(a) for a in refs.values())
        if executions >= exact:
            return executions
        distinct = self._distinct(refs.values())
        return executions if distinct is None else min(executions, distinct)

    def between_share(self, condition) -> "float | None":
        """The share of the iterations of the serial loops between grid and block levels in
        which a condition that reads only their variables holds (block_smooth's `t % 2 == 0`:
        both branches run in one launch, half the sweeps each); None for another condition."""
        condition = sympy.sympify(condition)
        names = {v.name for v in condition.free_symbols}
        between = [lp.var for lp in self.s.between]
        if condition in (sympy.true, sympy.false) or not names or not names <= set(between):
            return None
        ranges = [self._loop_values(v) for v in between if v in names]
        if any(r is None or len(r) == 0 for r in ranges) or math.prod(len(r) for r in ranges) > MAX_STARTS:
            return None
        variables = [sym(v) for v in between if v in names]
        held = sum(bool(condition.xreplace(dict(zip(variables, values))) is sympy.true)
                   for values in itertools.product(*ranges))
        return held / math.prod(len(r) for r in ranges)

    def warps_failing(self, condition) -> "float | None":
        """The share of warps, over up to SAMPLED_BLOCKS blocks evenly spread over the grid, in
        which some lane fails a condition on the thread and grid indices (serial loops at their
        first value); None where it reads anything else."""
        warps = self._warp_lanes(condition)
        return sum(1 for lanes in warps if not all(lanes)) / len(warps) if warps else None

    def holds_nowhere(self, condition) -> bool:
        """Whether no lane of those sampled holds the condition: the rows (6) adds beyond a block
        level of fewer than 4 (`4*v + 2 < B0` at B0 = 2) never run, and were counted."""
        warps = self._warp_lanes(condition)
        return bool(warps) and not any(any(lanes) for lanes in warps)

    def _warp_lanes(self, condition) -> "list[list[bool]] | None":
        """Per warp of the sampled blocks, the condition at each lane (see warps_failing)."""
        condition = sympy.sympify(condition).xreplace(
            {v: sympy.Integer(x.low) for v, x in self.vars.items() if v not in self.threads
             and v not in {sym(lp.var) for lp in self.s.grid}})
        grid = [(sym(lp.var), self._int(lp.lo), self._int(lp.extent)) for lp in self.s.grid]
        names = list(self.threads) + [g for g, _, _ in grid]
        if condition.free_symbols - set(names):
            return None
        test = sympy.lambdify(names, condition, modules=LAMBDIFY_MODULES)
        total = math.prod(extent for _, _, extent in grid)
        blocks = sorted({k * total // min(total, SAMPLED_BLOCKS) for k in range(min(total, SAMPLED_BLOCKS))})
        bx, by, bz = self.block
        lanes = [(x, y, z) for z in range(bz) for y in range(by) for x in range(bx)]
        out = []
        for b in blocks:
            coords, rest = [], b
            for _, lo, extent in reversed(grid):
                coords.append(lo + rest % extent)
                rest //= extent
            coords.reverse()
            for start in range(0, len(lanes), 32):
                out.append([bool(test(*[lo + lane[axis] for axis, lo in self.threads.values()], *coords))
                            for lane in lanes[start:start + 32]])
        return out

    def _loop_values(self, var: str) -> "range | None":
        """The values of the serial loop `var` (None where its bounds are not numbers here)."""
        found = {self._range(lp.lo, lp.hi, lp.step) for lp in self.s.between + self.s.serial if lp.var == var}
        return found.pop() if len(found) == 1 else None

    def _executions(self, access) -> float:
        """Executions of an access by one block, every guard on the thread taken as holding; a
        loop whose bounds read the thread's indices (`for (i = 1 + j % 2; ...)`) at the average
        thread's trips, as its requests are counted."""
        trips = 1.0
        for var in access.loops:
            values = self._loop_values(var)
            if values is not None:
                trips *= len(values)
            elif sym(var) in self.vars and self.vars[sym(var)].count:   # as the requests count it (a bound
                trips *= self.vars[sym(var)].count                       # read from an array: once)
            else:
                return math.inf
        return float(trips * math.prod(self.block))

    def _distinct(self, accesses) -> "int | None":
        """Distinct elements the accesses' indices take in the first block (None: not countable)."""
        domain = {v: range(lo, lo + self.block[axis]) for v, (axis, lo) in self.threads.items()}
        domain.update({sym(lp.var): range(self._int(lp.lo), self._int(lp.lo) + 1) for lp in self.s.grid})
        seen: set = set()
        for a in accesses:
            linear = self._linear(a)
            domain.update({sym(v): self._loop_values(v) for v in a.loops})
            if linear is None or any(domain.get(v) is None for v in linear.free_symbols):
                return None
            free = sorted(linear.free_symbols, key=str)
            if math.prod(len(domain[v]) for v in free) > MAX_COUNTED:
                return None
            # floats are exact here: the indices at a profile point are far below 2**53
            f = sympy.lambdify(free, linear, LAMBDIFY_MODULES)
            for values in itertools.product(*(domain[v] for v in free)):
                index = f(*values)
                if index != int(index):
                    return None
                seen.add(int(index))
        return len(seen)

    def _elements(self, s: Schedule, cluster) -> int:
        """Elements the cluster's accesses touch: its box, less the corners no access reaches
        (read_boxes.py), counted at the point."""
        box = self._int(cluster.elements)
        boxes = read_boxes(s, cluster, cluster.accesses)
        if not boxes or box > MAX_COUNTED:
            return box
        sizes = [self._int(d.elements) for d in cluster.dims]
        pieces = [[(self._int(lo), self._int(n)) for lo, n in b] for b in boxes]
        return sum(1 for coords in itertools.product(*(range(n) for n in sizes))
                   if any(all(lo <= x < lo + n for x, (lo, n) in zip(coords, p)) for p in pieces))


class _Walk:
    """The per-thread statements, with how often each element reference executes."""

    def __init__(self, at: _At, found: dict):
        self.at = at
        self.found = found
        self.on_values = 0   # depth of ifs on array values around the statement walked

    def block(self, block: syntax.Block, env: dict, weight: float) -> None:
        env = dict(env)
        for stmt in block.stmts:
            self.stmt(stmt, env, weight)

    def stmt(self, stmt, env: dict, weight: float) -> None:
        update = made_atomically(self.at.s, stmt)
        if update is not None:   # one atomic on the element: L2 reads and writes its sectors
            if update.guard is not None:   # a guard on the thread, counted as holding (as an if's)
                self.expr(update.guard, weight, env)
            self.expr(update.value, weight, env)
            for index in update.target.indices:
                self.expr(index, weight, env)
            self.at.use(self.found, update.target, "read", weight, self.on_values > 0)
            self.at.use(self.found, update.target, "write", weight, self.on_values > 0)
        elif isinstance(stmt, syntax.Block):
            self.block(stmt, env, weight)
        elif isinstance(stmt, syntax.Decl):
            if stmt.init is not None:
                self.expr(stmt.init, weight, env)
                value = syntax.to_sympy(stmt.init, env)
                env[stmt.name] = value if value is not None else sym(stmt.name)
        elif isinstance(stmt, syntax.Assign):
            self.expr(stmt.value, weight, env)
            if isinstance(stmt.target, syntax.Index):
                for index in stmt.target.indices:
                    self.expr(index, weight, env)
                if stmt.op != "=":
                    self.at.use(self.found, stmt.target, "read", weight, self.on_values > 0)
                self.at.use(self.found, stmt.target, "write", weight, self.on_values > 0)
            else:
                env[stmt.target.name] = sym(stmt.target.name)
        elif isinstance(stmt, syntax.If):
            self.expr(stmt.cond, weight, env)
            condition = syntax.to_sympy_condition(stmt.cond, env)
            taken = self.at._value(condition) if condition is not None else sympy.true
            share = self.at.between_share(taken) if condition is not None else None
            if share is not None:   # the same for the whole block in each iteration of the between loops
                then, other = share, 1.0 - share
            elif taken is sympy.false:
                then, other = 0.0, 1.0
            elif condition is None and stmt.other is not None:   # it reads the arrays' values:
                # a warp whose lanes disagree runs both branches, and nothing here says how often
                then, other = 1.0, 1.0
                self.at.notes.append(f"the condition at line {stmt.cond.span.line} reads array values: "
                                     "both of its branches are counted in every warp")
            elif taken is not sympy.true and condition is not None and self.at.holds_nowhere(taken):
                then, other = 0.0, 1.0   # no thread takes it (a row (6) adds beyond B0 < 4): only its else
            elif taken is sympy.true or stmt.other is None:
                then, other = 1.0, 0.0
            else:  # a guard on the thread: counted for a thread where it holds; its else in the
                # warps where a lane fails it (i >= 1: the first warp of the first block)
                then = 1.0
                other = (self.at.warps_failing(taken) or 0.0) if stmt.other is not None else 0.0
            self.on_values += condition is None
            if then:
                self.block(stmt.then, env, weight * then)
            if stmt.other is not None and other:
                self.block(stmt.other, env, weight * other)
            self.on_values -= condition is None
        elif isinstance(stmt, syntax.Loop):
            for bound in (stmt.lo, stmt.hi, stmt.step):
                self.expr(bound, weight, env)
            bounds = [syntax.to_sympy(b, env) for b in (stmt.lo, stmt.hi, stmt.step)]
            on_data = any(b is None for b in bounds)   # CSR's rowptr[i + 1]: the data says how often
            if on_data:
                self.at.notes.append(f"the bounds of loop {stmt.var} are not integers: counted once")
                var = self.at._serial(stmt.var, 0, 1, 1)
            else:
                var = self.at._serial(stmt.var, *bounds)
            inner = dict(env)
            inner[stmt.var] = sym(stmt.var)
            if bounds[0] is not None and stride_start(bounds[0], bounds[2], self.at.s) is not None:
                # a grid-stride loop: a warp's lanes run its m-th iteration together at their
                # own starts (i = b*B + t + G*B*m: consecutive), not at one shared i
                m = f"{stmt.var}@m"
                count = int(var.count)
                self.at.vars[sym(m)] = _Var(0, (count - 1) / 2 if count else 0.0, var.count,
                                            range(count) if count == var.count else None)
                self.at.stepped[sym(stmt.var)] = bounds[0] + bounds[2] * sym(m)
            self.on_values += on_data
            self.block(stmt.body, inner, weight * var.count)
            self.on_values -= on_data

    def expr(self, e, weight: float, env: dict, on_values: bool = False) -> None:
        """The element references of an expression; those of a ternary's branches on array values
        (`v[i] > 0 ? a[i] : b[i]`, or through a local holding one) are marked, as the branches of
        such an `if` are (the same test: a condition with no form in the parameters and loop
        variables): the data decides which a thread reads."""
        on_values = on_values or self.on_values > 0
        if isinstance(e, syntax.Ternary):
            self.expr(e.cond, weight, env, on_values)
            branches = on_values or syntax.to_sympy_condition(e.cond, env) is None
            if branches and not on_values:
                self.at.notes.append(f"the condition at line {e.cond.span.line} reads array values: both "
                                     "values of its ?: are counted in every warp")
            self.expr(e.then, weight, env, branches)
            self.expr(e.other, weight, env, branches)
            return
        if isinstance(e, syntax.Index):
            self.at.use(self.found, e, "read", weight, on_values)
        for child in syntax.children(e):
            self.expr(child, weight, env, on_values)


def _global_position(local: int, d, value) -> int:
    """Offset from the region's lower bound of the element at local position `local`."""
    if not d.repeats:
        return local
    extent = value(d.extent)
    run, q = local % extent, local // extent
    index = run
    for n, (stride, count) in enumerate(d.repeats):
        if n + 1 < len(d.repeats):
            m, q = q % value(count), q // value(count)
        else:
            m = q
        index += value(stride) * m
    return index


def _describe(name: str, region, value) -> str:
    sizes = " x ".join(str(value(d.elements)) for d in region.dims)
    return f"{name} tile ({sizes})" if len(region.dims) > 1 else f"{name} run of {sizes}"
