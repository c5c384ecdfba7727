"""The data footprint of one thread block: which elements of an array it touches.

Used by the shared-memory counter (how many bytes a block stages) and by the
code generator (which regions to copy in and out), so the regions are exposed,
not just their size.

Within one block the grid-level variables and the serial loops between grid
and block levels are fixed; the block-level variables and the serial loops of
the body range over their bounds. Every subscript is split as

    index = key + offset + sum(coef * m),   m in [0, count),  coef > 0

where `key` + integer `offset` is the fixed part (grid/between variables and
parameters) and the sum is the varying part. Accesses whose keys agree in
every dimension form one *cluster*; per dimension a cluster is a run of
`extent` consecutive elements from `lower`, repeated `count` times every
`stride` for the strided parts of a linearized subscript (A[i*n + j]).

Counting rules (each a sound upper bound; `exact` says when it is the count):
- Clusters with a symbolic key difference (a[p] and a[N + p]) are counted
  separately: exact when provably disjoint.
- A multi-dimensional cluster is a box: the 5-point stencil counts the
  corners of its (By+2)*(Bx+2) tile.
- A strided dimension counts extent * product(counts): exact when the runs
  provably do not overlap (row stride >= run length).
- Guards that read parameters only (`t % 2`) are the same for a whole launch:
  the footprint is the MAX over their choices, and the regions of each choice
  are kept. Other guards (bounds checks) are ignored: the count is for a
  block whose bounds checks all hold.
- Opaque subscripts (a[b[i]], a[j*j]) make the whole array the footprint, or
  an unbounded one (sympy.oo) when its size is not visible.

Assumptions (paper hypothesis H1): parameters are non-negative, every loop of
the block runs at least once, and a symbolic coefficient whose sign cannot be
decided is positive. Comparisons use the schedule's facts through z3.
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import sympy
import z3

from parakern import syntax
from parakern.model import Access, Array, Schedule

MAX_UNIFORM_CONDITIONS = 6   # beyond 2**6 choices, take the union of all paths
_Z3_TIMEOUT_MS = 500


# ------------------------------------------------------------------ results

@dataclass(frozen=True)
class DimRegion:
    """Values lower + r + sum(stride_i * m_i), r in [0, extent), m_i in [0, count_i)."""
    lower: sympy.Expr        # in grid/between variables and parameters
    extent: sympy.Expr       # length of one contiguous run, parameters only
    repeats: tuple[tuple[sympy.Expr, sympy.Expr], ...] = ()  # (stride, count), inner first

    @property
    def elements(self) -> sympy.Expr:
        return sympy.expand(sympy.Mul(self.extent, *(c for _, c in self.repeats)))

    @property
    def span(self) -> sympy.Expr:
        """Length of the interval [lower, last element]."""
        return sympy.expand(self.extent + sum((s * (c - 1) for s, c in self.repeats), sympy.S.Zero))


@dataclass(frozen=True)
class Cluster:
    dims: tuple[DimRegion, ...]
    accesses: tuple[int, ...]   # positions in schedule.accesses
    exact: bool

    @property
    def elements(self) -> sympy.Expr:
        return sympy.expand(sympy.Mul(*(d.elements for d in self.dims)))


@dataclass(frozen=True)
class Choice:
    """One outcome of the uniform guards and the clusters accessed on it."""
    when: tuple[tuple[sympy.Basic, bool], ...]  # (condition, branch taken)
    clusters: tuple[Cluster, ...]
    elements: sympy.Expr
    exact: bool


@dataclass(frozen=True)
class Footprint:
    array: str
    elements: sympy.Expr               # max over regions; sympy.oo when unbounded
    regions: tuple[Choice, ...]        # one per choice of the uniform guards
    exact: bool
    note: str

    @property
    def bounded(self) -> bool:
        return self.elements.is_finite is not False


def footprint(schedule: Schedule, array: str) -> Footprint:
    return footprints(schedule, (array,))[0]


def footprints(schedule: Schedule, arrays=None) -> tuple[Footprint, ...]:
    """Footprints of the named arrays (default: every array), sharing one prover."""
    names = tuple(a.name for a in schedule.arrays) if arrays is None else tuple(arrays)
    return _cached(Shape(schedule), names)


class Shape:
    """A schedule seen only through what footprints read: loops, accesses, arrays,
    parameters and facts. Variants that differ elsewhere (CSE temporaries in the
    body, the register level) share one analysis. `extra` adds what another
    memoised consumer also reads."""

    def __init__(self, schedule: Schedule, extra: tuple = ()):
        self.schedule = schedule
        s = schedule
        self.key = (s.grid, s.block, s.between, s.serial, s.accesses, s.arrays, s.params,
                    s.derived, s.facts) + extra

    def __eq__(self, other) -> bool:
        return isinstance(other, Shape) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


@functools.lru_cache(maxsize=512)
def _cached(shape: Shape, names: tuple[str, ...]) -> tuple[Footprint, ...]:
    # The counters, the staging and the strategies ask for the same footprints many
    # times while a case tree is built.
    analysis = _Analysis(shape.schedule)
    return tuple(analysis.footprint(n) for n in names)


# ------------------------------------------------------------------ prover

class _Untranslatable(Exception):
    pass


class _ToZ3:
    """sympy integer terms -> z3; floor, ceiling and Mod through defined quotients."""

    def __init__(self):
        self.side: list = []
        self._quotients: dict = {}

    def expr(self, e):
        e = sympy.sympify(e)
        if e.is_Integer:
            return z3.IntVal(int(e))
        if e.is_Symbol:
            if "?" in e.name:
                raise _Untranslatable(e)
            return z3.Int(e.name)
        if e.is_Add:
            return z3.Sum([self.expr(a) for a in e.args])
        if e.is_Mul:
            return functools.reduce(lambda x, y: x * y, [self.expr(a) for a in e.args])
        if e.is_Pow and e.exp.is_Integer and e.exp > 0:
            base = self.expr(e.base)
            return functools.reduce(lambda x, y: x * y, [base] * int(e.exp))
        if isinstance(e, sympy.floor):
            return self._floor(e.args[0])
        if isinstance(e, sympy.ceiling):
            return -self._floor(-e.args[0])
        if isinstance(e, sympy.Mod):
            a, b = e.args
            return self.expr(a) - self.expr(b) * self._floor(a / b)
        raise _Untranslatable(e)

    def _floor(self, x):
        num, den = sympy.together(x).as_numer_denom()
        if den == 1:
            return self.expr(num)
        key = (num, den)
        if key not in self._quotients:
            q = z3.Int(f"?q{len(self._quotients)}")
            n, d = self.expr(num), self.expr(den)
            self.side.append(z3.Implies(d > 0, z3.And(q * d <= n, n < q * d + d)))
            self.side.append(z3.Implies(d < 0, z3.And(q * d >= n, n > q * d + d)))
            self._quotients[key] = q
        return self._quotients[key]

    def rel(self, r):
        if r is sympy.true:
            return z3.BoolVal(True)
        if r is sympy.false:
            return z3.BoolVal(False)
        ops = {sympy.Eq: lambda a, b: a == b, sympy.Ne: lambda a, b: a != b,
               sympy.Ge: lambda a, b: a >= b, sympy.Gt: lambda a, b: a > b,
               sympy.Le: lambda a, b: a <= b, sympy.Lt: lambda a, b: a < b}
        for kind, op in ops.items():
            if isinstance(r, kind):
                return op(self.expr(r.lhs), self.expr(r.rhs))
        if isinstance(r, sympy.And):
            return z3.And([self.rel(a) for a in r.args])
        if isinstance(r, sympy.Or):
            return z3.Or([self.rel(a) for a in r.args])
        if isinstance(r, sympy.Not):
            return z3.Not(self.rel(r.args[0]))
        raise _Untranslatable(r)


class _Prover:
    """Decides `expr >= 0` under the schedule's facts and the H1 assumptions.

    A fast syntactic test first (a polynomial in parameters with non-negative
    coefficients), then z3. If the hypotheses are not satisfiable (or z3
    cannot tell), only the fast test is trusted: nothing false is ever proved.
    """

    def __init__(self, schedule: Schedule):
        self._params = {p.name for p in schedule.params if syntax.is_integer(p.ctype)}
        self._tr = _ToZ3()
        self._memo: dict = {}
        hyps = []

        def add(relation):
            try:
                hyps.append(self._tr.rel(relation))
            except (_Untranslatable, TypeError, z3.Z3Exception):
                pass  # dropping a hypothesis only weakens what can be proved

        for fact in schedule.facts:
            add(fact.relation)
        for name in self._params:
            add(sympy.Ge(syntax.sym(name), 0))
        # Loops run at least once (else they touch nothing); only bounds that are the
        # same for every thread, so that no hypothesis mentions a varying variable.
        varying = {lp.var for lp in schedule.block + schedule.serial}
        for loop in schedule.grid + schedule.block + schedule.between + schedule.serial:
            bounds = [loop.lo, loop.hi, getattr(loop, "step", sympy.S.One)]
            if not any(s.name in varying for b in bounds for s in b.free_symbols):
                add(sympy.Ge(loop.hi - loop.lo, 1))
                add(sympy.Ge(bounds[2], 1))
        # Fixed variables appear in lower bounds: give them their ranges.
        for loop in schedule.grid + schedule.between:
            v = syntax.sym(loop.var)
            add(sympy.And(sympy.Ge(v, loop.lo), sympy.Lt(v, loop.hi)))
        self._hyps = hyps
        self._usable = self._check([]) == z3.sat

    def _check(self, extra):
        solver = z3.Solver()
        solver.set("timeout", _Z3_TIMEOUT_MS)
        solver.add(*self._hyps, *self._tr.side, *extra)
        return solver.check()

    def nonneg(self, e) -> bool:
        e = sympy.expand(e)
        if e.is_number:
            return bool(e >= 0)
        if e in self._memo:
            return self._memo[e]
        result = self._fast(e)
        if not result and self._usable:
            try:
                goal = self._tr.expr(e) >= 0
                result = self._check([z3.Not(goal)]) == z3.unsat
            except (_Untranslatable, z3.Z3Exception):
                result = False
        self._memo[e] = result
        return result

    def le(self, a, b) -> bool:
        return self.nonneg(b - a)

    def _fast(self, e) -> bool:
        if not {s.name for s in e.free_symbols} <= self._params:
            return False
        try:
            return all(c >= 0 for c in sympy.Poly(e, *sorted(e.free_symbols, key=str)).coeffs())
        except (sympy.PolynomialError, TypeError):
            return False


# ------------------------------------------------------------------ analysis

@dataclass(frozen=True)
class _Range:
    """A varying variable: start + stride*m, m in [0, count)."""
    start: sympy.Expr
    stride: sympy.Expr
    count: sympy.Expr
    exact: bool


@dataclass(frozen=True)
class _Dim:
    """One subscript: key + offset + sum(coef*m), m in [0, count), coef > 0."""
    key: sympy.Expr
    offset: sympy.Integer
    terms: tuple[tuple[sympy.Expr, sympy.Expr], ...]  # sorted by str: comparable between accesses
    exact: bool


class _Analysis:
    def __init__(self, schedule: Schedule):
        self.s = schedule
        self.prover = _Prover(schedule)
        self.params = {p.name for p in schedule.params} | {d.name for d in schedule.derived}
        self.between = {lp.var for lp in schedule.between}
        self.fixed = {lp.var for lp in schedule.grid} | self.between
        self.block_vars = tuple(lp.var for lp in schedule.block)
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    # ---- per array

    def footprint(self, name: str) -> Footprint:
        self.notes = []
        array = next((a for a in self.s.arrays if a.name == name), None)
        if array is None:
            return Footprint(name, sympy.S.Zero, (), False, f"'{name}' is not an array of this schedule")
        accesses = [(i, a) for i, a in enumerate(self.s.accesses) if a.array == name]
        try:
            return self._footprint(array, accesses)
        except Exception as exc:  # an analysis bug must not cost the user a result: over-approximate
            self.notes = [f"internal error in the footprint analysis ({type(exc).__name__}: {exc})"]
            choice = self._whole_choice(array, (), accesses)
            return self._result(array, (choice,))

    def _footprint(self, array: Array, accesses) -> Footprint:
        conditions = list(dict.fromkeys(g.condition for _, a in accesses for g in a.guards if g.uniform))
        if any(not g.uniform for _, a in accesses for g in a.guards):
            self.note("guards that depend on the thread (bounds checks) are ignored: "
                      "counted for a block where they all hold")
        if len(conditions) > MAX_UNIFORM_CONDITIONS:
            self.note(f"more than {MAX_UNIFORM_CONDITIONS} uniform conditions: all paths counted together")
            return self._result(array, (self._choice(array, (), accesses),))
        choices = []
        for taken in itertools.product((True, False), repeat=len(conditions)):
            when = tuple(zip(conditions, taken))
            chosen = dict(when)
            on_path = [(i, a) for i, a in accesses
                       if all(chosen[g.condition] == g.taken for g in a.guards if g.uniform)]
            choices.append(self._choice(array, when, on_path))
        return self._result(array, tuple(choices))

    def _result(self, array: Array, choices: tuple[Choice, ...]) -> Footprint:
        values = [c.elements for c in choices]
        elements = sympy.oo if any(v is sympy.oo for v in values) else self._max(values)
        exact = all(c.exact for c in choices) and elements is not sympy.oo
        return Footprint(array.name, elements, choices, exact, "; ".join(self.notes))

    def _choice(self, array: Array, when, accesses) -> Choice:
        analysed = []
        for i, a in accesses:
            dims = self._access(a, array)
            if dims is None:
                return self._whole_choice(array, when, accesses)
            analysed.append((i, dims))
        groups: dict = {}
        for i, dims in analysed:
            groups.setdefault(tuple(d.key for d in dims), []).append((i, dims))
        clusters = tuple(self._cluster(members) for members in groups.values())
        exact = all(c.exact for c in clusters)
        for a, b in itertools.combinations(clusters, 2):
            if not self._disjoint(a, b):
                exact = False
                self.note("clusters with a symbolic distance are assumed disjoint "
                          "(exact when they do not overlap)")
        elements = sympy.expand(sum((c.elements for c in clusters), sympy.S.Zero))
        return Choice(when, clusters, elements, exact)

    def _whole_choice(self, array: Array, when, accesses) -> Choice:
        """Over-approximation for subscripts that are not affine in the block's variables."""
        ids = tuple(i for i, _ in accesses)
        if array.dims and len(array.dims) == array.rank:
            self.note(f"a subscript of '{array.name}' is not affine in the block's loop variables "
                      "with parameter coefficients: the whole array is counted")
            dims = tuple(DimRegion(sympy.S.Zero, sympy.sympify(d)) for d in array.dims)
            cluster = Cluster(dims, ids, False)
            return Choice(when, (cluster,), cluster.elements, False)
        self.note(f"a subscript of '{array.name}' is not affine in the block's loop variables and its size "
                  "is not visible: the footprint is unbounded (declare it with its size, "
                  "e.g. `float a[N]`, or do not cache it)")
        return Choice(when, (), sympy.oo, False)

    # ---- per access

    def _access(self, access: Access, array: Array) -> "tuple[_Dim, ...] | None":
        if not access.exact or len(access.indices) != array.rank:
            return None
        varying = self.block_vars + tuple(v for v in access.loops if v not in self.between)
        dims = []
        for index in access.indices:
            dim = self._dim(sympy.sympify(index), varying)
            if dim is None:
                return None
            dims.append(dim)
        return tuple(dims)

    def _dim(self, index: sympy.Expr, varying: tuple[str, ...]) -> "_Dim | None":
        names = {s.name for s in index.free_symbols}
        if any("?" in n for n in names) or not names <= self.params | self.fixed | set(varying):
            return None
        gens = sorted((s for s in index.free_symbols if s.name in varying), key=str)
        base, terms, exact = sympy.expand(index), [], True
        if gens:
            try:
                poly = sympy.Poly(base, *gens)
            except sympy.PolynomialError:
                return None
            if poly.total_degree() > 1:
                return None
            base = poly.as_expr() - sum(poly.coeff_monomial(g) * g for g in gens)
            for g in gens:
                c = sympy.expand(poly.coeff_monomial(g))
                if c == 0:
                    continue
                if not {s.name for s in c.free_symbols} <= self.params:
                    return None  # the stride depends on where the block is
                r = self._range(g.name)
                if r is None:
                    return None
                coef, count = sympy.expand(c * r.stride), r.count
                base += c * r.start
                if self._negative(coef):
                    base += coef * (count - 1)
                    coef = -coef
                terms.append((coef, count))
                exact = exact and r.exact
        offset, key = sympy.expand(base).as_coeff_Add()
        if not offset.is_Integer:
            offset, key = sympy.S.Zero, sympy.expand(base)
        return _Dim(key, offset, tuple(sorted(terms, key=str)), exact)

    def _negative(self, c) -> bool:
        if c.is_number:
            return bool(c < 0)
        if self.prover.nonneg(c):
            return False
        if self.prover.nonneg(-c):
            return True
        self.note(f"the coefficient {c} is assumed positive")
        return False

    # ---- variable ranges

    def _range(self, var: str, active: tuple[str, ...] = ()) -> "_Range | None":
        loops = {(lp.lo, lp.hi, sympy.S.One) for lp in self.s.block if lp.var == var}
        loops |= {(lp.lo, lp.hi, lp.step) for lp in self.s.serial if lp.var == var}
        if len(loops) > 1:
            self.note(f"loops named '{var}' have different bounds: the accesses in them are not told apart")
        if len(loops) != 1 or var in active:
            return None
        lo, hi, step = loops.pop()
        names = {s.name for s in (lo.free_symbols | hi.free_symbols)}
        unknown = {s.name for s in step.free_symbols} - self.params
        unknown |= names - self.params - self.fixed - {lp.var for lp in self.s.block + self.s.serial}
        if unknown:
            self.note(f"the bounds of loop '{var}' read {', '.join(sorted(unknown))}, "
                      "which is neither a parameter nor a loop variable")
            return None
        if names <= self.params | self.fixed:
            start, exact = lo, True
            count = hi - lo if step == 1 else sympy.ceiling((hi - lo) / step)
        else:  # bounds depend on other varying variables: their hull, step ignored
            start = self._bound(lo, False, active + (var,))
            last = self._bound(hi - 1, True, active + (var,))
            if start is None or last is None:
                return None
            step, count, exact = sympy.S.One, last - start + 1, False
            self.note(f"the bounds of loop '{var}' depend on other loops: their hull is counted")
        count = sympy.expand(count)
        if {s.name for s in count.free_symbols} & self.fixed:
            count = self._fixed_max(count)
            if count is None:
                return None
            exact = False
            self.note(f"the trip count of '{var}' depends on the block: its maximum is counted")
        if not {s.name for s in count.free_symbols} <= self.params:
            return None
        return _Range(sympy.expand(start), sympy.expand(step), count, exact)

    def _bound(self, expr, upper: bool, active) -> "sympy.Expr | None":
        """Min (max) of an affine expression over the varying variables it reads."""
        expr = sympy.expand(expr)
        for s in sorted(expr.free_symbols, key=str):
            if s.name in self.params or s.name in self.fixed:
                continue
            c = sympy.expand(expr.coeff(s))
            if s in c.free_symbols or not {t.name for t in c.free_symbols} <= self.params:
                return None
            r = self._range(s.name, active)
            if r is None:
                return None
            low, high = r.start, r.start + r.stride * (r.count - 1)
            expr = sympy.expand(expr - c * s + c * (high if upper != self._negative(c) else low))
        return expr

    def _fixed_max(self, expr) -> "sympy.Expr | None":
        """Max of an affine expression over the fixed (grid, between) variables."""
        fixed = {lp.var: lp for lp in self.s.grid + self.s.between}
        for _ in range(len(fixed) + 1):
            present = [s for s in expr.free_symbols if s.name in fixed]
            if not present:
                return expr
            for s in present:
                c = sympy.expand(expr.coeff(s))
                if s in c.free_symbols or not {t.name for t in c.free_symbols} <= self.params:
                    return None
                loop = fixed[s.name]
                expr = sympy.expand(expr - c * s + c * (loop.lo if self._negative(c) else loop.hi - 1))
        return None

    # ---- clusters

    def _cluster(self, members) -> Cluster:
        ids = tuple(i for i, _ in members)
        rank = len(members[0][1])
        regions, exact = [], all(d.exact for _, dims in members for d in dims)
        for k in range(rank):
            col = [dims[k] for _, dims in members]
            offsets = sorted(set(d.offset for d in col))
            lower = col[0].key + offsets[0]
            if all(d.terms == col[0].terms for d in col):
                run, repeats = self._radix(col[0].terms)
                extent = sympy.expand(run + offsets[-1] - offsets[0])
                if not all(self.prover.le(b - a, run) for a, b in zip(offsets, offsets[1:])):
                    exact = False  # gaps between the runs of different offsets
                exact = self._no_overlap(extent, repeats) and exact
            else:  # differently shaped accesses in one place: their hull
                last = self._max([d.offset + sum((c * (n - 1) for c, n in d.terms), sympy.S.Zero)
                                  for d in col])
                extent, repeats, exact = sympy.expand(last - offsets[0] + 1), (), False
            regions.append(DimRegion(sympy.expand(lower), extent, tuple(repeats)))
        if rank > 1:
            tuples = {tuple(d.offset for d in dims) for _, dims in members}
            per_dim = [len({t[k] for t in tuples}) for k in range(rank)]
            if len(tuples) != sympy.prod(per_dim):
                exact = False
                self.note("accesses at different offsets in several dimensions are counted "
                          "as their bounding box")
        return Cluster(tuple(regions), ids, exact)

    def _radix(self, terms):
        """The set {sum coef*m} as a run [0, run) repeated at strides (mixed radix)."""
        run, repeats = sympy.S.One, []
        for coef, count in self._ascending(terms):
            if not repeats and self.prover.le(coef, run):
                run = sympy.expand(run + coef * (count - 1))  # contiguous: the runs touch or overlap
            elif repeats and sympy.expand(coef - repeats[-1][0] * repeats[-1][1]) == 0:
                stride, n = repeats[-1]
                repeats[-1] = (stride, sympy.expand(n * count))
            else:
                repeats.append((coef, count))
        return run, repeats

    def _ascending(self, terms):
        def cmp(a, b):
            if sympy.expand(a[0] - b[0]) == 0:
                return 0
            if self.prover.le(a[0], b[0]):
                return -1
            if self.prover.le(b[0], a[0]):
                return 1
            return 0
        return sorted(terms, key=functools.cmp_to_key(cmp))

    def _no_overlap(self, extent, repeats) -> bool:
        inner = extent
        for stride, count in repeats:
            if not self.prover.le(inner, stride):
                self.note(f"strided runs counted as disjoint: exact when {stride} >= {inner}")
                return False
            inner = sympy.expand(inner + stride * (count - 1))
        return True

    def _disjoint(self, a: Cluster, b: Cluster) -> bool:
        for ra, rb in zip(a.dims, b.dims):
            if self.prover.le(ra.lower + ra.span, rb.lower) or self.prover.le(rb.lower + rb.span, ra.lower):
                return True
        return False

    def _max(self, values):
        values = list(dict.fromkeys(sympy.expand(v) for v in values))
        if not values:
            return sympy.S.Zero
        for v in values:
            if all(self.prover.le(w, v) for w in values if w is not v):
                return v
        self.note("the larger of " + ", ".join(map(str, values)) + " cannot be decided: Max is kept")
        return sympy.Max(*values)
