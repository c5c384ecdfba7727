"""Are the iterations of the meta_for levels independent?

A meta_for promises that its iterations may run concurrently, so no two
different iterations may touch the same array element with one of them
writing. For every pair of accesses to one array (a write against itself
included) z3 searches two iterations that collide: two copies of every loop
variable within their bounds, the schedule's facts, each access's guards and
equal subscripts. The meta_for vectors must differ; the level that carries
the collision is the outermost one whose variable differs while the outer
ones are equal (block levels also share the serial loops between grid and
block levels, which order them).

z3 "unsat" is a proof of independence; "sat" is a real collision (an error)
when every subscript, bound and fact was translated exactly, a possible one
(a warning) otherwise; "unknown" is a warning, never a proof. A subscript that
reads array values (`a[idx[i]]`) may take any value: its "sat" is an error too
(the data can make the iterations collide), with the values they read in the witness.

Two updates of one kind (analysis/updates.py: `h[k] += v`, a maximum into m[k]) may
meet on an element: their order does not change the result, so the kernels make them
with CUDA's atomics (`examine(...).atomics`) instead of refusing them; any other access
that may meet them is still a collision.
"""
from __future__ import annotations

import functools
import itertools
import math

from dataclasses import dataclass

import sympy
import z3

from parakern.analysis.loop_ranges import corner_range
from parakern.symbolic.printing import to_c
from parakern.process import interrupts
from parakern import syntax
from parakern.analysis.updates import Update, atomic_for, updates
from parakern.symbolic.constraints import DEFAULT_WORK, Env, Untranslatable, to_z3, z3_check
from parakern.source.diagnostics import Diagnostic, Related, Span, error, warning
from parakern.kernel import Kernel
from parakern.model import Access, AtomicUpdate, Schedule
from parakern.symbolic.symbols import sym
from parakern.machine.targets import DEFAULT_TARGET

_FAILURES = (Untranslatable, z3.Z3Exception, TypeError, ValueError)


# ------------------------------------------------------------------ public API

@dataclass(frozen=True)
class Verdict:
    diagnostics: tuple[Diagnostic, ...]
    atomics: tuple[AtomicUpdate, ...]     # the updates iterations may make to one element at once

UNPROVED = "PK021"   # a warning: the independence of a meta_for's iterations could not be proved


def check(schedule: Schedule, work: int = DEFAULT_WORK,
          target: str = DEFAULT_TARGET) -> tuple[Diagnostic, ...]:
    """PK020 (error) where two iterations of a meta_for may collide, PK021 (warning)
    where their independence could not be proved; nothing when it is proved.
    At most one diagnostic per meta_for and array (an error replaces a warning)."""
    return examine(schedule, work, target).diagnostics


def examine(schedule: Schedule, work: int = DEFAULT_WORK, target: str = DEFAULT_TARGET) -> Verdict:
    """The diagnostics of `check`, and the updates the kernels must make atomically (for the
    GPU architecture `target`: atomicAdd on double needs sm_60)."""
    try:
        return _check(schedule, work, target)
    except Exception as exc:  # an analysis bug must not cost the user the other results
        interrupts.reraise()
        return Verdict((warning("PK099", "the independence of the meta_for iterations could not be checked "
                                f"(internal error: {type(exc).__name__}: {exc})", schedule.keyword_span),), ())


@dataclass(frozen=True)
class _Owner:
    """The update statement an access belongs to, and how CUDA makes it (None: it cannot)."""
    update: Update
    atomic: "AtomicUpdate | None"
    why: str


def _owners(schedule: Schedule, target: str) -> dict:
    """{access span: _Owner} for every reference to the element of an update statement."""
    owners = {}
    for u in updates(schedule.body):
        made, why = atomic_for(u, target)
        atomic = AtomicUpdate(u.span, u.target.array, u.op, made.function) if made else None
        for span in u.references:
            owners[span] = _Owner(u, atomic, why)
    return owners


def _check(schedule: Schedule, work: int, target: str) -> Verdict:
    prover = _prover(schedule, work)
    owners = _owners(schedule, target)
    found: dict = {}
    atomic: dict = {}
    for a1, a2 in _conflicting_pairs(schedule.accesses, owners):
        pair = prover.pair(a1, a2)
        o1, o2 = owners.get(a1.span), owners.get(a2.span)
        together = o1 is not None and o2 is not None and o1.update.kind == o2.update.kind
        for level, outcome in _carriers(pair):
            key = (level.var, a1.array)
            if together and o1.atomic and o2.atomic:
                atomic[o1.update.span], atomic[o2.update.span] = o1.atomic, o2.atomic
            elif together:   # updates that may meet, and no atomic makes one of them
                if key not in found or found[key].code != "PK020":
                    why = o1.why or o2.why
                    found[key] = _collision(schedule, level, a1, a2, _example(schedule, pair),
                                            f"; they are updates that an atomic would make safe, but {why}")
            elif outcome == "sat" and (pair.exact or _on_data(pair)):
                if key not in found or found[key].code != "PK020":
                    found[key] = _collision(schedule, level, a1, a2, _example(schedule, pair),
                                            _advice(schedule, a1, a2, o1, o2, pair))
            elif key not in found:
                found[key] = _unproved(schedule, level, a1, a2, pair, outcome)
    diagnostics = tuple(sorted(found.values(), key=lambda d: (d.span, d.code)))
    if any(d.code == "PK020" for d in diagnostics):
        return Verdict(diagnostics, ())
    return Verdict(diagnostics, tuple(sorted(atomic.values(), key=lambda a: a.span)))


def _on_data(pair: "_Pair") -> bool:
    """A possible collision that only the values read from arrays decide: an access's subscript
    reads them (`h[in[i] % 16]`) and everything else was translated exactly. Such values may
    be anything, so the collision happens for some data."""
    return not pair.notes and any(a.data and not a.exact for a in pair.accesses)


def _advice(schedule: Schedule, a1: Access, a2: Access, o1, o2, pair: "_Pair") -> str:
    """What to change, where the collision involves an update or a subscript read from an array."""
    data = [a for a in (a1, a2) if a.data and not a.exact]
    if o1 is not None and o2 is not None:
        return (f"; {o1.update.text()} and {o2.update.text()} are updates of different kinds: the result depends "
                "on their order")
    if (o1 is None) != (o2 is None):
        update = (o1 or o2).update
        return (f"; {_name(schedule, update.target)} is updated atomically ({update.text()}) where iterations may "
                "meet, but the other access is not an update of that kind: it may run between the atomic "
                "updates of another iteration")
    if data and not any(a.is_write for a in data):   # a gather from an array others write
        return (f"; the subscript of {_name(schedule, data[0])} reads array values, which may name an element "
                "another iteration writes")
    if data:
        write = next((a for a in data if a.is_write), data[0])
        stmt = _statement_of(schedule, write.span)
        op = stmt.op if isinstance(stmt, syntax.Assign) else "="
        if op == "=":
            return ("; the subscript reads array values, which may repeat: different iterations may store to "
                    "one element (a scatter), and no atomic orders plain stores")
        return (f"; the subscript reads array values, which may repeat, and CUDA has no atomic for `{op}` "
                "(there are for +=, -= and a maximum or minimum of integers)")
    return ""


def _statement_of(schedule: Schedule, span: Span):
    """The assignment whose target is the array reference at `span` (None: none)."""
    for n in syntax.walk(schedule.body):
        if isinstance(n, syntax.Assign) and isinstance(n.target, syntax.Index) and n.target.span == span:
            return n
    return None


def _example(schedule: Schedule, pair: "_Pair") -> str:
    """The pair's colliding iterations, and the values their subscripts read from arrays."""
    example = pair.example()
    values = pair.opaque_values()
    if not example or not values:
        return example
    return example + ", " + "; ".join(values)


def _carriers(pair: "_Pair") -> list:
    """(level, "sat" | "unknown") for the levels that may carry a collision of the pair:
    those z3 could not decide, down to the outermost one with a collision."""
    levels = pair.schedule.loops
    selectors = [pair.level_differs(k) for k in range(len(levels))]
    if pair.solve(z3.Or(selectors)) == "unsat":  # one query settles the usual case
        return []
    carriers = []
    for level, selector in zip(levels, selectors):
        outcome = pair.solve(selector)
        if outcome != "unsat":
            carriers.append((level, outcome))
        if outcome == "sat":
            break  # pair.model is this collision
    return carriers


@functools.lru_cache(maxsize=1024)
def iterations_independent(schedule: Schedule, loop_var: str,
                           work: int = DEFAULT_WORK) -> str:
    """"proved" when different iterations of the serial loop(s) named `loop_var`, in one
    thread, never touch one array element with one of them writing, and no local scalar
    declared outside the loop is assigned inside it (a reduction such as `acc +=`);
    "refuted" when they do; "unknown" when z3 cannot tell."""
    instances = _serial_instances(schedule.nest, loop_var)
    if not instances:
        raise ValueError(f"'{loop_var}' is not a serial loop of schedule {schedule.id}")
    prover = _prover(schedule, work)
    same_thread = [v.var for v in schedule.loops]
    verdict = "proved"
    for loop, visible in instances:
        if syntax.assigned_names(loop.body) & visible:
            return "refuted"
        inside = {n.span for n in syntax.walk(loop.body) if isinstance(n, syntax.Index)}
        accesses = [a for a in schedule.accesses if a.span in inside and loop_var in a.loops]
        for a1, a2 in _conflicting_pairs(accesses):
            outer = list(a1.loops[:a1.loops.index(loop_var)])
            pair = prover.pair(a1, a2)
            outcome = pair.solve(z3.And(pair.equal(same_thread + outer), pair.differs(loop_var)))
            if outcome == "sat" and pair.exact:
                return "refuted"
            if outcome != "unsat":
                verdict = "unknown"
    return verdict


@functools.lru_cache(maxsize=1024)
def interchange_legal(schedule: Schedule, outer: str, inner: str,
                      work: int = DEFAULT_WORK) -> str:
    """"proved" when the perfectly nested serial loops `outer` { `inner` { ... } } of one
    thread may be interchanged: no two of their iterations touch one element, one writing,
    with the outer variable increasing and the inner one decreasing between them (the pairs
    whose order the interchange reverses), and no local scalar declared outside is assigned
    inside. "refuted" / "unknown" otherwise."""
    instances = _serial_instances(schedule.nest, outer)
    if len(instances) != 1:
        return "unknown"
    loop, visible = instances[0]
    if syntax.assigned_names(loop.body) & visible:
        return "refuted"
    prover = _prover(schedule, work)
    same_thread = [v.var for v in schedule.loops] + [lp.var for lp in schedule.between]
    inside = {n.span for n in syntax.walk(loop.body) if isinstance(n, syntax.Index)}
    accesses = [a for a in schedule.accesses if a.span in inside and outer in a.loops and inner in a.loops]
    verdict = "proved"
    for a1, a2 in _conflicting_pairs(accesses):
        enclosing = list(a1.loops[:a1.loops.index(outer)])
        for first, second in ((a1, a2), (a2, a1)):   # either access may come first
            pair = prover.pair(first, second)
            e1, e2 = pair.copies
            reversed_order = z3.And(e1.rename[outer] < e2.rename[outer], e1.rename[inner] > e2.rename[inner])
            outcome = pair.solve(z3.And(pair.equal(same_thread + enclosing), reversed_order))
            if outcome == "sat" and pair.exact:
                return "refuted"
            if outcome != "unsat":
                verdict = "unknown"
    return verdict


@functools.lru_cache(maxsize=1024)
def threads_communicate(schedule: Schedule, work: int = DEFAULT_WORK) -> bool:
    """Whether an iteration of the serial loops between grid and block levels may touch an
    element that another thread of the block touched in an earlier one, one of them writing
    (`for k { meta_for u { if (k == 0) y[u] = ...; else x[u] = y[B - 1 - u]; } }`). MetaFork
    joins the meta_for after each iteration; in a kernel the block's threads run the loop
    together, so such a kernel needs a barrier after each iteration. True unless z3 proves
    otherwise (within one iteration a collision is a PK020 error already)."""
    if not schedule.between:
        return False
    prover = _prover(schedule, work)
    grid = [lp.var for lp in schedule.loops if lp.level == "grid"]
    block = [lp.var for lp in schedule.loops if lp.level == "block"]
    if not block:
        return False
    for a1, a2 in _conflicting_pairs(schedule.accesses):
        pair = prover.pair(a1, a2)
        if pair.solve(z3.And(pair.equal(grid), z3.Or([pair.differs(v) for v in block]))) != "unsat":
            return True
    return False


def communicates(kernel: Kernel) -> bool:
    """threads_communicate of a case's kernel. A register tile's thread runs, in each step of
    the serial loops, the iterations of the untiled kernel's thread at its position in TM x TN
    of that kernel's blocks, which are independent (meta_for's promise; PK020 where they are
    not): its threads communicate exactly where the untiled kernel's do, which is asked of the
    untiled schedule (TM·TN times fewer accesses: the tiled body's pairs took z3 a minute)."""
    return threads_communicate(kernel.untiled if kernel.untiled is not None else kernel.schedule)


# ------------------------------------------------------------------ pairs of accesses

def _conflicting_pairs(accesses, owners: "dict | None" = None) -> list[tuple[Access, Access]]:
    """Pairs of accesses to one array, one of them writing, that a uniform guard does
    not put on exclusive paths (`if (t % 2) a[p1] = …; else a[np1] = …;`), one pair per
    distinct collision problem (an update's references apart from plain ones: `owners`)."""
    owners = owners or {}
    pairs, seen = [], set()
    for k, a1 in enumerate(accesses):
        for a2 in accesses[k:]:
            if a1.array != a2.array or not (a1.is_write or a2.is_write):
                continue
            if len(a1.indices) != len(a2.indices) or _exclusive(a1, a2):
                continue
            # `c[p] = c[p] + 1` reads and writes one place: one question for both pairs
            shape = frozenset((_shape(a1, owners), _shape(a2, owners)))
            if shape not in seen:
                seen.add(shape)
                pairs.append((a1, a2) if a1.is_write or not a2.is_write else (a2, a1))  # the write first
    return pairs


def _shape(access: Access, owners: "dict | None" = None) -> tuple:
    """What the collision problem of an access depends on (not its span or direction; the kind
    of update it belongs to)."""
    owner = (owners or {}).get(access.span)
    return (access.array, access.indices, access.exact, access.data, access.loops,
            tuple((g.condition, g.taken, g.uniform) for g in access.guards),
            None if owner is None else (owner.update.kind, owner.atomic is not None))


def _exclusive(a1: Access, a2: Access) -> bool:
    # A uniform condition reads parameters only: it has one value in the whole block.
    taken = {g.condition: g.taken for g in a1.guards if g.uniform and g.condition is not None}
    return any(taken.get(g.condition, g.taken) != g.taken
               for g in a2.guards if g.uniform and g.condition is not None)


@dataclass(frozen=True)
class _Loop:
    lo: sympy.Expr
    hi: sympy.Expr
    step: sympy.Expr


class _Prover:
    """Builds the collision problem of a pair of accesses over one schedule."""

    def __init__(self, schedule: Schedule, work: int):
        self.schedule = schedule
        self.work = work
        self.shared = {p.name for p in schedule.params} | {d.name for d in schedule.derived}
        self.bounds: dict[str, list[_Loop]] = {}
        for lp in schedule.loops:
            self.bounds.setdefault(lp.var, []).append(_Loop(lp.lo, lp.hi, sympy.S.One))
        for lp in schedule.between + schedule.serial:
            self.bounds.setdefault(lp.var, []).append(_Loop(lp.lo, lp.hi, lp.step))
        self.always = [lp.var for lp in schedule.loops + schedule.between]
        self._pairs: dict = {}
        self._facts: "tuple | None" = None

    def facts(self) -> tuple:
        """(the environment, constraints, notes) of the schedule's facts in z3, the same for
        every pair: translated once (each pair translated them again, a third of its making)."""
        if self._facts is None:
            env, constraints, notes = Env(), [], []
            for fact in self.schedule.facts:
                for relation in (fact.relation, *_floor_bounds(fact.relation)):   # v = floor(X / Y): v*Y <= X < v*Y + Y
                    try:
                        constraints.append(to_z3(relation, env))
                    except _FAILURES:
                        notes.append(f"the fact {to_c(relation)} could not be used")
            self._facts = (env, tuple(constraints), tuple(notes))
        return self._facts

    def pair(self, a1: Access, a2: Access) -> "_Pair":
        key = (a1, a2)
        if key not in self._pairs:
            self._pairs[key] = _Pair(self, a1, a2)
        return self._pairs[key]


@functools.lru_cache(maxsize=64)
def _prover(schedule: Schedule, work: int) -> _Prover:
    """One prover per schedule, its pairs built once for every question asked of them (the
    meta_for check, then each strategy's: a third of jacobi's first analysis was building
    the same pairs again)."""
    return _Prover(schedule, work)


class _Pair:
    """Two iterations, each running one of the accesses: copy 1 runs a1, copy 2 runs a2."""

    def __init__(self, prover: _Prover, a1: Access, a2: Access):
        self.prover = prover
        self.schedule = prover.schedule
        self.accesses = (a1, a2)
        self.exact = a1.exact and a2.exact
        self.notes: list[str] = []
        names = set(prover.bounds)
        for loop in (lp for loops in prover.bounds.values() for lp in loops):
            names |= {s.name for e in (loop.lo, loop.hi, loop.step) for s in e.free_symbols}
        for a in (a1, a2):
            for e in a.indices + tuple(g.condition for g in a.guards if g.condition is not None):
                names |= {s.name for s in e.free_symbols}
        # loop variables and opaque values: one per copy; parameters are shared
        private = sorted((names - prover.shared) | set(prover.bounds))
        renames = [{n: z3.Int(f"{n}@{c}") for n in private} for c in (1, 2)]
        facts, constraints, notes = prover.facts()
        # the facts' environment as they left it, this pair's own from here on
        self.env = Env({}, dict(facts.symbols), list(facts.side), dict(facts.quotients), list(facts.fresh_names))
        self.copies = tuple(self.env.renamed(r) for r in renames)
        self.constraints: list = list(constraints)
        self.notes += notes
        self.exact = self.exact and not notes
        self.model = None
        self._residues = None
        self._steps: dict = {}     # stepped loop -> (multiple of its step, step) per copy
        for access, env in zip(self.accesses, self.copies):
            self._iteration(access, env)
        self._same_element()
        self._step_lemmas()

    # ---- building

    def _add(self, relation, env: Env, what: str) -> None:
        """Adds a relation; one that cannot be translated is left out (a weaker problem:
        its "sat" is no longer a proof of a collision)."""
        try:
            self.constraints.append(to_z3(relation, env))
        except _FAILURES:
            self.exact = False
            self.notes.append(f"{what} {to_c(relation)} could not be used")

    def _iteration(self, access: Access, env: Env) -> None:
        for var in dict.fromkeys(self.prover.always + list(access.loops)):
            options = []
            for loop in self.prover.bounds.get(var, []):
                v = sym(var)
                within = sympy.And(loop.lo <= v, v < loop.hi)
                try:
                    option = to_z3(within, env)
                    if loop.step != 1:  # v = lo + step*m
                        m = env.fresh(z3.Int, f"{var}_step")
                        option = z3.And(option, m >= 0,
                                        env.rename[var] == to_z3(loop.lo, env) + to_z3(loop.step, env) * m,
                                        *[to_z3(r, env) for r in corner_range(loop.lo, self.prover.bounds)])
                        self._steps.setdefault(var, []).append((m, to_z3(loop.step, env)))
                    options.append(option)
                except _FAILURES:
                    self.exact = False
                    self.notes.append(f"the bounds of loop '{var}' could not be used")
                    options = []
                    break
            if options:
                self.constraints.append(z3.Or(options))
        for guard in access.guards:
            if guard.condition is None:
                continue  # a data-dependent test: the collision may happen for some data
            condition = guard.condition if guard.taken else sympy.Not(guard.condition)
            self._add(condition, env, "the condition")
        for bound in _subscript_ranges(access, self.prover.bounds):
            self._add(bound, env, "the range of")

    def _same_element(self) -> None:
        (a1, a2), (e1, e2) = self.accesses, self.copies
        for i1, i2 in zip(a1.indices, a2.indices):
            try:
                self.constraints.append(to_z3(i1, e1) == to_z3(i2, e2))
            except _FAILURES:
                self.exact = False
                self.notes.append(f"the subscript {i1} could not be used")

    def _step_lemmas(self) -> None:
        """A grid-stride loop `for (i = b*B + t; i < n; i += G*B)` in both copies: where the
        copies' multiples of the step differ, their products with it differ by a step at least
        (S*m1 - S*m2 >= S for m1 > m2, S >= 1: true of all integers). With the start's range
        [0, S - 1] (corner_range), z3 then needs no nonlinear reasoning to find that two iterations
        reach one element only from one start: the same thread."""
        for stepped in self._steps.values():
            for (m1, step1), (m2, step2) in itertools.combinations(stepped, 2):
                if not step1.eq(step2):
                    continue
                for hi, lo in ((m1, m2), (m2, m1)):
                    self.constraints.append(z3.Implies(z3.And(step1 >= 1, hi >= lo + 1),
                                                       step1 * hi - step1 * lo >= step1))

    # ---- selectors

    def equal(self, names) -> z3.BoolRef:
        e1, e2 = self.copies
        return z3.And([e1.rename[n] == e2.rename[n] for n in names])

    def differs(self, name: str) -> z3.BoolRef:
        e1, e2 = self.copies
        return e1.rename[name] != e2.rename[name]

    def level_differs(self, k: int) -> z3.BoolRef:
        """Level k differs, the outer levels agree; a block level also runs within one
        iteration of the serial loops between grid and block levels."""
        loops = self.schedule.loops
        outer = [lp.var for lp in loops[:k]]
        if loops[k].level == "block":
            outer += [lp.var for lp in self.schedule.between]
        return z3.And(self.equal(outer), self.differs(loops[k].var))

    # ---- solving

    def solve(self, selector: z3.BoolRef) -> str:
        """One query, or one per residue of the parameters taken modulo a small constant
        (`src = (t % 2) * N`): z3 decides each quickly where it gives up on the products
        N * (t % 2) that the whole question holds. unsat only if every one is."""
        outcome = "unsat"
        for case in self._residue_cases():
            answer, model, _, _ = z3_check(self.constraints + case + [selector] + self.env.hypotheses(),
                                        self.prover.work)
            if answer == z3.sat:
                self.model = model
                return "sat"
            if answer != z3.unsat:
                outcome = "unknown"
        return outcome

    def _residue_cases(self) -> list:
        """[[t == 2*m + 0], [t == 2*m + 1]] for the shared parameters some fact or subscript of
        the pair reads modulo a small constant; [[]] when none (at most 16 cases)."""
        if self._residues is None:
            moduli: dict = {}
            texts = [f.relation for f in self.schedule.facts] + [e for a in self.accesses for e in a.indices]
            for e in texts:
                for mod in sympy.sympify(e).atoms(sympy.Mod):
                    arg, m = mod.args
                    if not (m.is_Integer and 2 <= int(m) <= 8) or len(arg.free_symbols) != 1:
                        continue
                    (v,) = arg.free_symbols
                    if v.name in self.prover.shared and sympy.Poly(arg, v).degree() == 1:
                        moduli[v] = math.lcm(moduli.get(v, 1), int(m))
            cases = [[]]
            for v, m in sorted(moduli.items(), key=lambda item: item[0].name):
                if len(cases) * m > 16:
                    break
                term = self.env.variable(v) if hasattr(self.env, "variable") else to_z3(v, self.env)
                quotient = self.env.fresh(z3.Int, f"{v.name}_div{m}")
                cases = [c + [term == m * quotient + r] for c in cases for r in range(m)]
            self._residues = cases
        return self._residues

    def example(self) -> str:
        """The colliding iterations of the last model: `B = 2: (i = 0, j = 1) and (i = 1, j = 0)`."""
        if self.model is None:
            return ""
        value = self.value
        loops = [lp.var for lp in self.schedule.loops]
        shown = [", ".join(f"{v} = {value(env.rename[v])}" for v in loops) for env in self.copies]
        params = sorted({s.name for a in self.accesses for e in a.indices for s in e.free_symbols}
                        & self.prover.shared)
        given = ", ".join(f"{p} = {value(self.env.variable(sym(p)))}"
                          for p in params)
        return (f"with {given}: " if given else "") + f"({shown[0]}) and ({shown[1]})"

    def value(self, term):
        """A term's value in the last model (any value where the model leaves it free)."""
        return self.model.eval(term, model_completion=True)

    def opaque_values(self) -> list[str]:
        """`in[i] % NBINS = 3 in both`: the values of the last model for the subscripts read
        from arrays (and the locals they go through), as written in the source."""
        if self.model is None:
            return []
        texts = _opaque_texts(self.schedule)
        known = self.prover.shared | set(self.prover.bounds)
        seen: dict = {}   # symbol -> its value in each copy that reads it
        for access, env in zip(self.accesses, self.copies):
            for e in access.indices if not access.exact else ():
                for s in sorted(e.free_symbols, key=lambda x: x.name):
                    if s.name not in known and s.name in env.rename:
                        values = seen.setdefault(s.name, [])
                        value = self.value(env.rename[s.name])
                        if len(values) < 2:
                            values.append(value)
        shown = []
        for name, values in seen.items():
            text = texts.get(name, name)
            if len(values) == 2 and values[0].eq(values[1]):
                shown.append(f"{text} = {values[0]} in both")
            else:
                shown.append(f"{text} = " + " and ".join(str(v) for v in values))
        return shown


@functools.lru_cache(maxsize=64)
def _opaque_texts(schedule: Schedule) -> dict:
    """{opaque subscript symbol (frontend/nest.py's `?a0_line_col`): the subscript as written}."""
    texts = {}
    for node in syntax.walk(schedule.nest):
        if isinstance(node, syntax.Index):
            for k, idx in enumerate(node.indices):
                texts[f"?{node.array}{k}_{idx.span.line}_{idx.span.col}"] = source_text(schedule, idx.span) or "it"
    return texts


# ------------------------------------------------------------------ hints z3 needs

def _floor_bounds(relation) -> list:
    """Eq(v, floor(X/Y)) -> [v*Y <= X, X < v*Y + Y] for a positive divisor Y: the product v*Y is
    then the same term here as in a subscript's range (z3 alone relates them badly)."""
    if not isinstance(relation, sympy.Eq):
        return []
    v, value = relation.lhs, relation.rhs
    if not (v.is_Symbol and isinstance(value, sympy.floor)):
        return []
    num, den = sympy.fraction(sympy.together(value.args[0]))
    if den.is_number and den <= 0:
        return []
    low, high = sympy.expand(v * den), sympy.expand(num)
    return [sympy.Le(low, high), sympy.Lt(high, sympy.expand(low + den))]


def _subscript_ranges(access: Access, bounds: dict) -> list:
    """lo <= L <= hi for the part L of each subscript that reads loop variables, where L grows
    with each of them (every term's coefficient is positive for non-negative parameters, H1):
    its least and greatest values at the loops' first and last iterations. A mixed-radix
    index such as B*(b*s + k) + q then lies in [0, B*dim*s - 1], and with the definition of
    dim in [0, N - 3]: linear facts where z3 gives up on the products."""
    return [r for index in access.indices for r in corner_range(index, bounds)]


# ------------------------------------------------------------------ messages

def source_text(schedule: Schedule, span: Span) -> str:
    """The text of a span inside the schedule, from the schedule's own source text."""
    lines = schedule.text.split("\n")
    row = span.line - schedule.span.line
    if span.line != span.end_line or not 0 <= row < len(lines):
        return ""
    start = span.col - (schedule.span.col if row == 0 else 1)
    return lines[row][start:start + span.end_col - span.col]


def _name(schedule: Schedule, access: Access) -> str:
    text = source_text(schedule, access.span)
    if text.startswith(access.array):
        return text
    return access.array + "".join(f"[{i}]" for i in access.indices)


def _verb(access: Access) -> str:
    if access.is_read and access.is_write:
        return "read and written"
    return "written" if access.is_write else "read"


def _both(schedule: Schedule, a1: Access, a2: Access) -> str:
    n1, n2 = _name(schedule, a1), _name(schedule, a2)
    if a1 is a2:
        return f"{n1} {_verb(a1)} at line {a1.span.line} by two different iterations"
    return f"{n1} {_verb(a1)} at line {a1.span.line} and {n2} {_verb(a2)} at line {a2.span.line}"


def _related(schedule: Schedule, a1: Access, a2: Access) -> tuple[Related, Related]:
    n1, n2 = _name(schedule, a1), _name(schedule, a2)
    return (Related(a1.span, f"{n1} {_verb(a1)} by one iteration"),
            Related(a2.span, f"{n2} {_verb(a2)} by another iteration"))


def _collision(schedule, level, a1, a2, example: str, advice: str = "") -> Diagnostic:
    message = (f"iterations of this meta_for may both access an element of {a1.array}: "
               f"{_both(schedule, a1, a2)}"
               + (f" ({example})" if example else "")
               + advice
               + "; make the writes disjoint or make this loop serial")
    return error("PK020", message, level.keyword_span, *_related(schedule, a1, a2))


def _unproved(schedule, level, a1, a2, pair: _Pair, outcome: str) -> Diagnostic:
    if outcome == "sat":
        why = "; ".join(pair.notes) or "a subscript is not a polynomial in loop variables and parameters"
    else:
        why = "the solver gave up (nonlinear subscripts, or its limit of work)"
    message = (f"independence of this meta_for could not be proved: {_both(schedule, a1, a2)} "
               f"may touch the same element ({why}); check that different iterations "
               "touch different elements")
    return warning(UNPROVED, message, level.keyword_span, *_related(schedule, a1, a2))


# ------------------------------------------------------------------ local scalars

def _serial_instances(node, var: str, visible: frozenset = frozenset()) -> list:
    """The serial loops named `var` in a syntax tree, each with the names of the local
    scalars declared before it in the blocks around it."""
    found = []
    if isinstance(node, syntax.Block):
        for stmt in node.stmts:
            found += _serial_instances(stmt, var, visible)
            if isinstance(stmt, syntax.Decl):
                visible = visible | {stmt.name}
        return found
    if isinstance(node, syntax.Loop):
        if node.var == var and not node.parallel:
            found.append((node, visible))
        return found + _serial_instances(node.body, var, visible)
    if isinstance(node, syntax.If):
        found += _serial_instances(node.then, var, visible)
        if node.other is not None:
            found += _serial_instances(node.other, var, visible)
    return found




# ------------------------------------------------------------------ accesses outside their arrays

OUTSIDE = "PK027"   # a warning: an access may fall outside its array's declared extents


def outside(schedule: Schedule, work: int = DEFAULT_WORK) -> tuple[Diagnostic, ...]:
    """PK027 at each access that z3 shows reaching outside its array's declared extents for some
    values the facts allow (`x[i + 1]` of `float x[n]` at i = n - 1): the serial C reads the same
    element, so running both does not show it (verify compares their results). Arrays whose
    extents are not declared (pointers) and subscripts read from arrays are not judged; an
    answer z3 cannot give says nothing."""
    try:
        return _outside(schedule, work)
    except Exception:   # noqa: BLE001 - a check that could not be made must not cost the other results
        interrupts.reraise()
        return ()


def _outside(schedule: Schedule, work: int) -> tuple[Diagnostic, ...]:
    if schedule.host_guarded:   # `while (N >= M)`, `if (n > 1)` around it: what they ensure is no fact
        return ()
    prover = _prover(schedule, work)
    found: dict = {}   # array -> its first warning: one per array
    seen = set()
    unsure = _unsure(schedule.body)
    for a in schedule.accesses:
        array = schedule.array(a.array)
        if not a.exact or not array.dims or len(array.dims) != len(a.indices) or any(d is None for d in array.dims):
            continue
        if any(g.condition is None for g in a.guards) or any(_within(a.span, u) for u in unsure):
            continue   # `if (a[i] > 0)`: its test is no fact; see _unsure
        shape = _shape(a)
        if shape in seen or a.array in found:
            continue
        seen.add(shape)
        pair = prover.pair(a, a)   # copy 1 alone is asked about; copy 2 may be the same iteration
        e1 = pair.copies[0]
        try:
            terms = [(to_z3(i, e1), to_z3(d, e1)) for i, d in zip(a.indices, array.dims)]
            # C gives every declared extent at least one element (a VLA of 0 is undefined)
            sizes = [to_z3(d, e1) >= 1 for x in schedule.arrays for d in x.dims if d is not None]
        except _FAILURES:
            continue
        if pair.solve(z3.And(*sizes, z3.Or([z3.Or(i < 0, i >= d) for i, d in terms]))) != "sat" or not pair.exact:
            continue
        value = pair.value
        params = sorted({s.name for e in (*a.indices, *array.dims) for s in sympy.sympify(e).free_symbols}
                        & prover.shared)
        given = ", ".join(f"{p} = {value(pair.env.variable(sym(p)))}" for p in params)
        loops = ", ".join(f"{lp.var} = {value(e1.rename[lp.var])}" for lp in schedule.loops)
        element = "".join(f"[{value(i)}]" for i, _ in terms)
        extents = "".join(f"[{d}]" for d in array.dims)
        message = (f"{_name(schedule, a)} may {'write' if a.is_write else 'read'} outside '{a.array}' (declared "
                   f"{a.array}{extents}): {'with ' + given + ', ' if given else ''}iteration ({loops}) "
                   f"{'writes' if a.is_write else 'reads'} {a.array}{element}; the serial C does the same, so "
                   "verify's comparison cannot show it: guard the access or declare the extent it needs")
        found[a.array] = warning(OUTSIDE, message, a.span)
    return tuple(found.values())


def _unsure(body: syntax.Block) -> list[Span]:
    """Where an access's guards say less than C does: the operands of an if's condition that C
    evaluates only where those before them decided nothing (`i < n && a[i] > 0` reads a[i] only
    where i < n; `a[i] > 0 && i < n` reads it first, unguarded: judged), the branches of one that
    casts to unsigned (`(unsigned)(i - 1) < n`, read as signed), a loop whose bounds read an array
    (`k < rowptr[i + 1]`)."""
    def any_of(kinds, *exprs) -> bool:
        return any(isinstance(n, kinds) for e in exprs for n in syntax.walk(e))

    def short_circuited(e, fallback: Span) -> list[Span]:
        if isinstance(e, syntax.Binary) and e.op in ("&&", "||"):
            return short_circuited(e.left, fallback) + [_span_of(e.right, fallback)]
        if isinstance(e, syntax.Unary) and e.op == "!":   # `!(i >= n || mask[i] == 0)`
            return short_circuited(e.operand, fallback)
        return []

    out: list[Span] = []
    for node in syntax.walk(body):
        if isinstance(node, syntax.If):
            out += short_circuited(node.cond, node.span)
            if any(isinstance(n, syntax.Cast) and "unsigned" in n.ctype for n in syntax.walk(node.cond)):
                out.append(node.span)
        elif isinstance(node, syntax.Loop) and any_of((syntax.Index, syntax.Call), node.lo, node.hi, node.step):
            out.append(node.span)
    return out


def _span_of(expr, fallback: Span) -> Span:
    """An expression's extent: from its first node's span to its last one's."""
    spans = [n.span for n in syntax.walk(expr) if getattr(n, "span", None) is not None]
    if not spans:
        return fallback
    return min(spans, key=lambda x: (x.line, x.col)).to(max(spans, key=lambda x: (x.end_line, x.end_col)))


def _within(inner: Span, outer: Span) -> bool:
    return (outer.line, outer.col) <= (inner.line, inner.col) and \
        (inner.end_line, inner.end_col) <= (outer.end_line, outer.end_col)

