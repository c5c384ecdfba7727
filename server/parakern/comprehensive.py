"""Comprehensive optimization: the paper's Algorithms 1 and 2 over frozen quintuples.

A quintuple Q(S) = (kernel, λ applied IR strategies, ω remaining strategies,
γ counters still to evaluate, C constraints). `Optimize` takes the next
counter c of γ, evaluates it to v and forks:

  resource r_i (bounded by R_i):   accept  v <= R_i            -> go on with γ
                                   refuse  R_i < v, then the first strategy of ω
                                           in σ(r_i); re-evaluate r_1..r_i
  performance p_i (target P_i):    accept  P_i <= v            -> target met
                                   refuse  v < P_i, then a strategy of σ(p_i)

(For a performance counter P_i is read as the occupancy the user asks for;
the paper's literal `v <= P_i` accept branch would accept exactly the
kernels that miss it.) A resource refuse branch with no strategy left is a *hole* of
the tree: no case is preferred there. A performance refuse branch with no
strategy left stays a case: the kernel runs, below the target.
Systems that z3 proves inconsistent are dropped; `unknown` keeps the branch
and marks it unverified.

The tree is the order of preference (the dispatcher's first pass); what a leaf's
own kernel needs of the machine (`Case.needs`: every resource's requirement within
its machine parameter, and its meta_for extents within CUDA's launch limits) decides
where it can run at all (the dispatcher's second pass; the first also tests them).
So the *uncovered* regions, where the dispatcher must say that no kernel fits, are
the points where no leaf's own kernel fits, computed from the needs, not the holes:
a hole is often covered by a leaf that fits there. z3 proves that every point
allowed by the facts is in a case, or fits some case's kernel, or is in an
uncovered region. The facts include what holds on every device (T <= 1024) and in
every C call (an int within int's range): limits.machine_facts.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field, replace
from typing import Sequence

import sympy

from parakern.symbolic import constraints as cs
from parakern.kernel import Kernel
from parakern.machine.limits import launch_relations, machine_facts
from parakern.model import Schedule
from parakern.strategies.decisions import trail

LAUNCH = "launch"   # what a hole or an uncovered region is labelled by when the launch limits fail
_WORDS = {LAUNCH: "launch limits", "shared_memory": "shared memory"}   # a counter's name, for people


@dataclass(frozen=True)
class Quintuple:
    kernel: Kernel
    applied_ir: tuple[str, ...]        # λ: IR-level strategies applied, by name
    remaining: tuple                   # ω: strategies not applied yet, in order
    to_evaluate: tuple                 # γ: counters still to evaluate, next first
    constraints: cs.System             # C
    evaluated: tuple = ()              # counters evaluated so far on this path (r_1..r_i)
    depth: int = 0


@dataclass(frozen=True)
class Step:
    """One edge of the decision tree, for the trail, the DOT picture and Lemma 1."""
    counter: str
    value: object
    branch: str                        # "accept", "refuse"
    relation: sympy.Basic
    strategy: "str | None" = None      # strategy applied after a refuse


@dataclass(frozen=True)
class Case:
    constraints: cs.System             # simplified
    kernel: Kernel
    decisions: tuple[str, ...]
    counters: tuple[tuple[str, object], ...]   # final value of every counter
    witness: "dict | None"
    verified: bool                     # z3 proved the system consistent
    path: tuple[Step, ...]
    needs: cs.System = cs.System()     # what its own kernel asks of the machine: it runs where these hold
    need_counters: tuple = ()          # the counter (or LAUNCH) of each relation of `needs`

    def counter(self, name: str):
        return dict(self.counters)[name]


@dataclass(frozen=True)
class Uncovered:
    """A region of parameter and machine values: an uncovered one (no leaf's kernel fits
    there) or a hole of the tree (a refuse branch with no strategy left: no case preferred)."""
    constraints: cs.System
    counter: str                       # the counters whose limits fail there, "registers, threads"
    verified: bool
    path: tuple[Step, ...] = ()        # holes only: the branch of the tree

    @property
    def limits(self) -> str:
        """`counter` in words: "launch limits, shared memory" for "launch, shared_memory"."""
        return ", ".join(_WORDS.get(name, name) for name in self.counter.split(", "))


@dataclass(frozen=True)
class CaseTree:
    schedule: Schedule
    cases: tuple[Case, ...]
    uncovered: tuple[Uncovered, ...]   # where no case's kernel fits: the dispatcher refuses
    coverage: "cs.Verdict"
    height: int
    bound: int                         # Lemma 1, corrected: (w + 1)(s + t) + w
    pruned: int                        # branches dropped as inconsistent
    seconds: float
    facts: tuple = ()                  # what holds everywhere: the schedule's facts and the machine's
    # the refuse branches with no strategy left, as found: (constraints, counter, path, what the
    # kernel refused there needs of the machine) each
    _refused: tuple = field(default=(), compare=False, repr=False)
    # what `optimal` is computed from, when asked (the editor never asks: it compiles more kernels)
    _optimality: tuple = field(default=(), compare=False, repr=False)
    # the paths that join another's subtree (a joining strategy's variant, reached again):
    # (the path, the path whose subtree it shares) each, for the DOT picture
    joins: tuple = field(default=(), compare=False, repr=False)

    @property
    def complete(self) -> bool:
        """False for the cases alone (comprehensive_optimization(complete=False)): no no-fit
        regions and no coverage proof yet (`completed` adds them)."""
        return self.coverage.status != PENDING

    @functools.cached_property
    def holes(self) -> tuple[Uncovered, ...]:
        """The refuse branches with no strategy left, simplified and checked, when asked: no
        case diagnostic or dispatcher needs them (the uncovered regions come from the needs),
        and tidying them took transpose's first analysis a fifth of its time."""
        return tuple(Uncovered(cs.simplify(system), counter, cs.consistent(system).status == "sat", path)
                     for system, counter, path, _ in self._refused)

    @property
    def fits(self) -> tuple[cs.System, ...]:
        """What each kernel of the tree's leaves needs of the machine: some kernel runs exactly
        where one of these holds. The cases' kernels; in a tree without a case, the kernels its
        holes refused (a block of 2048 threads: what no GPU gives is what the facts deny)."""
        if self.cases:
            return tuple(c.needs for c in self.cases)
        return tuple(dict.fromkeys(needs for *_, needs in self._refused))

    @functools.cached_property
    def optimal(self) -> tuple[tuple[str, bool], ...]:
        """Definition 2 (iv) per counter: (name, some leaf is optimal for it)."""
        strategies, run = self._optimality
        return tuple((c.name, _optimal_somewhere(c, self.cases, strategies, run)) for c in run.counters)


@dataclass
class _Run:
    """Mutable bookkeeping of one run (kept out of the frozen results)."""
    counters: Sequence
    facts: tuple
    cases: list = field(default_factory=list)
    refused: list = field(default_factory=list)   # holes: (constraints, counter, path)
    pruned: int = 0
    height: int = 0
    values: dict = field(default_factory=dict)   # (counter, kernel) -> value
    witnesses: cs.Witnesses = field(default_factory=cs.Witnesses)   # the cases', in a z3 context of their own
    # a joining strategy's children not grown yet, by what decides their subtree: [(quintuple, path), ...]
    waiting: dict = field(default_factory=dict)
    joins: list = field(default_factory=list)

    def value(self, counter, kernel: Kernel):
        key = (counter.name, kernel)
        if key not in self.values:
            self.values[key] = counter.evaluate(kernel)
        return self.values[key]


def comprehensive_optimization(kernel: Kernel, counters: Sequence, strategies: Sequence,
                               facts: tuple = (), complete: bool = True) -> CaseTree:
    """Algorithm 1 from the initial quintuple of `kernel`. complete=False stops at the cases
    (what the editor shows first); `completed` adds the no-fit regions and the coverage proof."""
    start = time.perf_counter()
    facts = (tuple(facts) or tuple(f.relation for f in kernel.schedule.facts)) + machine_facts(kernel.schedule)
    run = _Run(counters, facts)
    root = Quintuple(kernel, (), tuple(strategies), tuple(counters), cs.System((), facts))
    _algorithm(root, run, ())
    while run.waiting:
        joined, path = _joined(run)
        _algorithm(joined, run, path)
    # Lemma 1 says w(s+t); a path has at most w refuse edges and at most s+t accept edges
    # between two of them, so (w+1)(s+t) + w is what the proof gives (w(s+t) fails for w = 0).
    bound = (len(strategies) + 1) * len(counters) + len(strategies)
    tree = CaseTree(kernel.schedule, tuple(run.cases), (), cs.Verdict(PENDING), run.height, bound, run.pruned,
                    time.perf_counter() - start, facts, tuple(run.refused), (tuple(strategies), run),
                    tuple(run.joins))
    return completed(tree) if complete else tree


PENDING = "pending"      # the coverage of a tree of cases alone


def completed(tree: CaseTree) -> CaseTree:
    """The tree with where no case's kernel fits and the proof that every point is covered:
    preferred by a case, or fitting some case's kernel, or in a no-fit region."""
    if tree.complete:
        return tree
    start = time.perf_counter()
    cases, facts = tree.cases, tree.facts
    uncovered = _no_fit(cases, facts) if cases else _everywhere(tree)
    coverage = cs.covers(facts, [c.constraints for c in cases] + [c.needs for c in cases],
                         [u.constraints for u in uncovered])
    return replace(tree, uncovered=uncovered, coverage=coverage,
                   seconds=tree.seconds + time.perf_counter() - start)


def _algorithm(q: Quintuple, run: _Run, path: tuple) -> None:
    """Algorithm 1: a processed quintuple is a case; otherwise recurse on Optimize."""
    if not q.to_evaluate:
        run.height = max(run.height, q.depth)
        run.cases.append(_case(q, run, path))
        return
    for child, child_path in _optimize(q, run, path):
        _algorithm(child, run, child_path)


def _optimize(q: Quintuple, run: _Run, path: tuple):
    """Algorithm 2: evaluate the next counter and fork into accept / refuse branches."""
    counter, rest = q.to_evaluate[0], q.to_evaluate[1:]
    value = run.value(counter, q.kernel)
    bound = counter.symbol
    if counter.kind == "resource":
        need = counter.requirement(q.kernel, value)
        accept, refuse = sympy.Le(need, bound), sympy.Lt(bound, need)
    else:
        accept, refuse = sympy.Le(bound, value), sympy.Lt(value, bound)
    evaluated = q.evaluated + ((counter,) if counter not in q.evaluated else ())
    results = []

    accepted = replace(q, to_evaluate=rest, constraints=q.constraints.add(accept),
                       evaluated=evaluated, depth=q.depth + 1)
    step = Step(counter.name, value, "accept", accept)
    if _alive(accepted.constraints, run):
        results.append((accepted, path + (step,)))

    refused = q.constraints.add(refuse)
    if not _alive(refused, run):
        return results
    for strategy in q.remaining:
        if counter.name not in strategy.improves:
            continue
        improved = strategy.apply(q.kernel)
        if improved is None:
            continue
        remaining = tuple(s for s in q.remaining if s is not strategy)
        applied_ir = q.applied_ir + ((strategy.name,) if strategy.applies_to == "ir" else ())
        # Re-evaluate the counters seen so far (r_1..r_i): the strategy may change them.
        again = tuple(c for c in run.counters if c in evaluated)
        child = Quintuple(improved, applied_ir, remaining, again + rest, refused, evaluated,
                          q.depth + 1)
        child_path = path + (Step(counter.name, value, "refuse", refuse, strategy.code),)
        if strategy.joins:
            # grown once the tree has no other path left to reach it (`_joined`)
            run.waiting.setdefault(_subtree_key(child), []).append((child, child_path))
            return results
        # measured after the accept branch's subtree: what can run meanwhile starts now
        for c in child.to_evaluate:
            c.prefetch(improved)
        results.append((child, child_path))
        return results
    step = Step(counter.name, value, "refuse", refuse)
    if counter.kind == "performance":
        # Below the occupancy target and nothing left to raise it: the kernel still runs,
        # so this is a case (with `v < P_occ` in its constraints), not a hole.
        results.append((replace(q, to_evaluate=rest, constraints=refused, evaluated=evaluated,
                                depth=q.depth + 1), path + (step,)))
        return results
    run.height = max(run.height, q.depth + 1)
    run.refused.append((refused, counter.name, path + (step,), cs.System(tuple(_asked(q.kernel, run)[0]), run.facts)))
    return results


def _subtree_key(q: Quintuple) -> tuple:
    """What decides the subtree of a quintuple beside its constraints: the variant, the
    strategies applied and left, the counters to evaluate, each once (a counter evaluated
    twice in a row, with nothing applied between, adds nothing; which were evaluated before
    only repeats some of them: they are re-evaluated first anyway)."""
    return (q.kernel, q.applied_ir, tuple(id(s) for s in q.remaining), tuple(c.name for c in _once(q.to_evaluate)))


def _once(counters: tuple) -> tuple:
    return tuple(dict.fromkeys(counters))


def _joined(run: _Run) -> tuple[Quintuple, tuple]:
    """The waiting quintuple that no other can reach any more, with every path that reached it
    joined: its constraints the union of theirs, so that its subtree is grown once. A strategy
    applied leaves fewer remaining, so the one with the most remaining is reached by no other
    waiting one; of those, the first to wait (the tree's order)."""
    key = max(run.waiting, key=lambda k: len(k[2]))
    arrivals = run.waiting.pop(key)
    (first, path), others = arrivals[0], arrivals[1:]
    if not others:
        quintuple = first
    else:
        evaluated = tuple(c for c in run.counters if any(c in q.evaluated for q, _ in arrivals))
        quintuple = replace(first, to_evaluate=_once(first.to_evaluate),
                            constraints=cs.union([q.constraints for q, _ in arrivals]),
                            evaluated=evaluated, depth=max(q.depth for q, _ in arrivals))
        run.joins.extend((other, path) for _, other in others)
    for c in quintuple.to_evaluate:
        c.prefetch(quintuple.kernel)
    return quintuple, path


def _alive(system: cs.System, run: _Run) -> bool:
    """Inconsistent systems are dropped; `unknown` is kept (never taken as a proof)."""
    if not cs.possible(system):
        run.pruned += 1
        return False
    return True


def _case(q: Quintuple, run: _Run, path: tuple) -> Case:
    launchable = launch_relations(q.kernel.schedule) + tuple(q.kernel.requires)
    verdict = None
    if launchable:   # a witness the launch limits allow, where there is one
        within = run.witnesses.find(cs.System(q.constraints.relations + launchable, q.constraints.facts))
        verdict = within if within.status == "sat" else None
    if verdict is None:
        verdict = run.witnesses.find(q.constraints)
    values = tuple((c.name, run.value(c, q.kernel)) for c in run.counters)
    needs, labels = _needs(q.kernel, run)
    return Case(cs.simplify(q.constraints), q.kernel, trail(q.kernel), values, verdict.witness,
                verdict.status == "sat", path, needs, labels)


def _needs(kernel: Kernel, run: _Run) -> tuple[cs.System, tuple]:
    """What the kernel asks of the machine, with the counter of each, less what the others and
    the facts imply (B0 <= 1024 beside B0*B1 <= T <= 1024)."""
    needs, labels = _asked(kernel, run)
    simple = cs.simplify(cs.System(tuple(r for r in needs if r is not sympy.true), run.facts))
    label = {cs.canonical(r): n for r, n in zip(needs, labels)}
    kept = [(r, label.get(cs.canonical(r), LAUNCH)) for r in simple.relations]
    return cs.System(tuple(r for r, _ in kept), run.facts), tuple(n for _, n in kept)


def _asked(kernel: Kernel, run: _Run) -> tuple[list, list]:
    """Each resource's requirement within its machine parameter and the kernel's meta_for
    extents within the launch limits, as written (`2048 <= T` stays, though no GPU meets it)."""
    needs, labels = [], []
    for c in run.counters:
        if c.kind == "resource":
            needs.append(sympy.Le(c.requirement(kernel, run.value(c, kernel)), c.symbol))
            labels.append(c.name)
    for relation in launch_relations(kernel.schedule) + tuple(kernel.requires):
        needs.append(relation)     # the launch limits, and what the variant needs (Kernel.requires)
        labels.append(LAUNCH)
    return needs, labels


def _everywhere(tree: CaseTree) -> tuple[Uncovered, ...]:
    """The no-fit regions of a tree without a case: its holes, which the facts leave no other
    branch beside, each as its branch reads (`T < B` stays where the facts already imply it:
    it says which limit fails)."""
    return tuple(Uncovered(replace(cs.simplify(cs.System(system.relations)), facts=system.facts), counter,
                           cs.consistent(system).status == "sat")
                 for system, counter, _, _ in tree._refused)


def _no_fit(cases, facts) -> tuple[Uncovered, ...]:
    """Where no case's own kernel fits: ∧_k ¬needs_k, in disjunctive form, each term a
    conjunction of failed needs that z3 finds consistent with the facts, none implied by
    another (subsumed terms dropped); labelled by the counters whose limits fail."""
    terms: list = [()]                  # each: ((relation, counter), ...), the negated needs
    for case in cases:
        needs = [(cs.canonical(sympy.Not(r)), c) for r, c in zip(case.needs.relations, case.need_counters)]
        if not needs:
            return ()                   # a kernel that needs nothing fits everywhere
        grown = []
        for term in terms:
            if any(need in term for need in needs):
                grown.append(term)      # already outside this case's needs
                continue
            for need in needs:
                candidate = term + (need,)
                if cs.possible(cs.System(tuple(r for r, _ in candidate), facts)):
                    grown.append(candidate)
        terms = _most_general(grown)
    systems = [(cs.System(tuple(r for r, _ in t), facts), t) for t in terms if t]
    # a point of each region; one that lies in a region and outside another shows, without z3,
    # that the first is not inside the second (register tiles' regions are many, and nonlinear)
    verdicts = [cs.consistent(s) for s, _ in systems]
    points = [v.witness for v in verdicts if v.witness]
    # a region inside another says nothing more (1025 <= B0 inside T < B0*B1 when T <= 1024)
    kept = [(s, t, v) for i, ((s, t), v) in enumerate(zip(systems, verdicts))
            if not any(j != i and _inside(s, other, j < i, points) for j, (other, _) in enumerate(systems))]
    out = []
    for system, term, verdict in kept:
        counters = ", ".join(dict.fromkeys(c for _, c in term))
        out.append(Uncovered(_shown(system), counters, verdict.status == "sat"))
    return tuple(out)


def _shown(system: cs.System) -> cs.System:
    """The region simplified under the facts; where the facts imply all of it (every value they
    allow: `assert(G == 100000)` beside gridDim.y's 65535), its relations as the needs failed, so
    that it still says which limit fails (`65536 <= G`), never an empty condition."""
    simple = cs.simplify(system)
    if simple.relations or not system.relations:
        return simple
    return replace(cs.simplify(cs.System(system.relations)), facts=system.facts)


def _inside(a: cs.System, b: cs.System, tie: bool, points: list) -> bool:
    """a's region within b's (of two equal regions, the first one stays: `tie`). `points`:
    models under the same facts, which z3's counterexamples join; one of a outside b answers
    no without z3, one of b outside a that a is not b."""
    if any(cs.separates(p, a.relations, b.relations) for p in points):
        return False
    if not _implied(a, b, points):
        return False
    return tie or any(cs.separates(p, b.relations, a.relations) for p in points) or not _implied(b, a, points)


def _implied(a: cs.System, b: cs.System, points: list) -> bool:
    verdict = cs.implication(a, sympy.And(*b.relations))
    if verdict.witness:
        points.append(verdict.witness)
    return verdict.status == "proved"


def _most_general(terms: list) -> list:
    """Distinct terms, without those that contain another (a smaller conjunction covers them)."""
    unique = list(dict.fromkeys(tuple(sorted(set(t), key=str)) for t in terms))
    sets = [set(t) for t in unique]
    return [t for i, t in enumerate(unique)
            if not any(j != i and sets[j] < sets[i] for j in range(len(unique)))]


def _optimal_somewhere(counter, cases, strategies, run: _Run) -> bool:
    """Definition 2 (iv): some leaf where no strategy of σ(counter) improves the counter.

    The paper states it as f(O(S)) = f(S), assuming f(O(S)) <= f(S); measured
    strategies can also make a counter worse (register level 2 on matmul), which
    does not make the leaf improvable, so "improves" is tested directly. Leaves
    where fewer strategies still apply go first: one where none applies is optimal
    without evaluating anything (the path of the paper's Lemma 3)."""
    sigma = [s for s in strategies if counter.name in s.improves]
    candidates = []
    for case in cases:
        variants = [v for v in (s.apply(case.kernel) for s in sigma) if v is not None]
        candidates.append((len(variants), case, variants))
    for _, case, variants in sorted(candidates, key=lambda c: c[0]):
        # what the machine sees: registers 16 -> 12 a thread is no gain where both take 2048 per 128 threads
        before = _need(counter, case.kernel, run)
        if not any(_improves(counter, before, _need(counter, v, run)) for v in variants):
            return True
    return False


def _need(counter, kernel: Kernel, run: _Run):
    value = run.value(counter, kernel)
    return counter.requirement(kernel, value) if counter.kind == "resource" else value


def _improves(counter, before, after) -> bool:
    """Lower for a resource, higher for a performance counter; for expressions, provably
    so for every positive value of the parameters."""
    gain = sympy.expand(sympy.sympify(before) - sympy.sympify(after))
    if counter.kind != "resource":
        gain = -gain
    if gain.is_number:
        return bool(gain > 0)
    positive = {s: sympy.Symbol(s.name, positive=True, integer=True) for s in gain.free_symbols}
    gain = gain.xreplace(positive)
    if gain.is_positive:
        return True
    # c1·⌈x/128⌉ - c2·⌈x/128⌉ (registers per block): positive when c1 > c2, whatever x
    factored = sympy.factor(gain)
    return bool(factored.is_positive) if factored is not gain else False
