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
kernels that miss it.) A resource refuse branch with no strategy left is an
*uncovered* region: no variant fits there and the dispatcher must say so. A
performance refuse branch with no strategy left stays a case: the kernel
runs, below the target.
Systems that z3 proves inconsistent are dropped; `unknown` keeps the branch
and marks it unverified.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Sequence

import sympy

from parakern import constraints as cs
from parakern.kernel import Kernel
from parakern.model import Schedule
from parakern.strategies.decisions import trail


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

    def counter(self, name: str):
        return dict(self.counters)[name]


@dataclass(frozen=True)
class Uncovered:
    """A refuse branch with no strategy left: no variant fits there."""
    constraints: cs.System
    counter: str
    verified: bool
    path: tuple[Step, ...]


@dataclass(frozen=True)
class CaseTree:
    schedule: Schedule
    cases: tuple[Case, ...]
    uncovered: tuple[Uncovered, ...]
    coverage: "cs.Verdict"
    height: int
    bound: int                         # Lemma 1, corrected: (w + 1)(s + t) + w
    pruned: int                        # branches dropped as inconsistent
    optimal: tuple[tuple[str, bool], ...]   # Definition 2 (iv) per counter
    seconds: float


@dataclass
class _Run:
    """Mutable bookkeeping of one run (kept out of the frozen results)."""
    counters: Sequence
    facts: tuple
    cases: list = field(default_factory=list)
    uncovered: list = field(default_factory=list)
    pruned: int = 0
    height: int = 0
    values: dict = field(default_factory=dict)   # (counter, kernel) -> value

    def value(self, counter, kernel: Kernel):
        key = (counter.name, kernel)
        if key not in self.values:
            self.values[key] = counter.evaluate(kernel)
        return self.values[key]


def comprehensive_optimization(kernel: Kernel, counters: Sequence, strategies: Sequence,
                               facts: tuple = ()) -> CaseTree:
    """Algorithm 1 from the initial quintuple of `kernel`."""
    start = time.perf_counter()
    facts = tuple(facts) or tuple(f.relation for f in kernel.schedule.facts)
    run = _Run(counters, facts)
    root = Quintuple(kernel, (), tuple(strategies), tuple(counters), cs.System((), facts))
    _algorithm(root, run, ())
    cases = tuple(run.cases)
    uncovered = tuple(run.uncovered)
    coverage = cs.covers(facts, [c.constraints for c in cases], [u.constraints for u in uncovered])
    optimal = tuple((c.name, _optimal_somewhere(c, cases, strategies, run)) for c in counters)
    # Lemma 1 says w(s+t); a path has at most w refuse edges and at most s+t accept edges
    # between two of them, so (w+1)(s+t) + w is what the proof gives (w(s+t) fails for w = 0).
    bound = (len(strategies) + 1) * len(counters) + len(strategies)
    return CaseTree(kernel.schedule, cases, uncovered, coverage, run.height, bound, run.pruned,
                    optimal, time.perf_counter() - start)


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
        accept, refuse = sympy.Le(value, bound), sympy.Lt(bound, value)
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
        results.append((child, path + (Step(counter.name, value, "refuse", refuse, strategy.code),)))
        return results
    step = Step(counter.name, value, "refuse", refuse)
    if counter.kind == "performance":
        # Below the occupancy target and nothing left to raise it: the kernel still runs,
        # so this is a case (with `v < P_occ` in its constraints), not a hole.
        results.append((replace(q, to_evaluate=rest, constraints=refused, evaluated=evaluated,
                                depth=q.depth + 1), path + (step,)))
        return results
    verdict = cs.consistent(refused)
    run.height = max(run.height, q.depth + 1)
    run.uncovered.append(Uncovered(cs.simplify(refused), counter.name, verdict.status == "sat",
                                   path + (step,)))
    return results


def _alive(system: cs.System, run: _Run) -> bool:
    """Inconsistent systems are dropped; `unknown` is kept (never taken as a proof)."""
    if cs.consistent(system).status == "unsat":
        run.pruned += 1
        return False
    return True


def _case(q: Quintuple, run: _Run, path: tuple) -> Case:
    verdict = cs.consistent(q.constraints)
    values = tuple((c.name, run.value(c, q.kernel)) for c in run.counters)
    return Case(cs.simplify(q.constraints), q.kernel, trail(q.kernel), values, verdict.witness,
                verdict.status == "sat", path)


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
        before = run.value(counter, case.kernel)
        if not any(_improves(counter, before, run.value(counter, v)) for v in variants):
            return True
    return False


def _improves(counter, before, after) -> bool:
    """Lower for a resource, higher for a performance counter; for expressions, provably
    so for every positive value of the parameters."""
    gain = sympy.expand(sympy.sympify(before) - sympy.sympify(after))
    if counter.kind != "resource":
        gain = -gain
    if gain.is_number:
        return bool(gain > 0)
    positive = {s: sympy.Symbol(s.name, positive=True, integer=True) for s in gain.free_symbols}
    return bool(gain.xreplace(positive).is_positive)
