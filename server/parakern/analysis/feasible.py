"""Facts that leave nothing to run: assertions a meta_for's bound contradicts (`assert(B0 == 0)`
beside `meta_for (t < B0)`), and values at which no kernel of the tree can launch on any GPU
(`assert(B == 2048)` for a block of B threads). Each is named by the smallest set of the
schedule's facts (and of what holds on every GPU) that z3 finds contradictory, at the assertion
among them, so that the user sees which line to change."""
from __future__ import annotations

import sympy

from parakern.machine.limits import BLOCK_LIMITS, GRID_LIMITS, MAX_THREADS_PER_BLOCK, launch_relations, machine_facts
from parakern.source.diagnostics import Diagnostic, Related, error, warning
from parakern.symbolic import constraints as cs
from parakern.symbolic.printing import to_c
from parakern.symbolic.symbols import T

# where a diagnostic is put, of the facts that contradict: the line that fixes a value first
_PLACE = ("assert", "host if", "definition", "loop bound", "divisor", "shift")


CONTRADICTION = "PK025"   # a warning: the facts cannot hold together
UNLAUNCHABLE = "PK026"    # no kernel can launch at the values the facts allow


def contradiction(schedule) -> "Diagnostic | None":
    """A warning where the schedule's facts cannot all hold (the tree is then empty: there is
    no value at which its kernels would run), at the assertion among them."""
    facts = schedule.facts
    if not facts or _possible(facts, machine_facts(schedule)):
        return None
    core = _core(list(facts), list(machine_facts(schedule)), ())
    if core is None:
        return None
    mine = [f for f in core if hasattr(f, "origin")]
    if not mine:
        return None
    where = _placed(mine)
    named = " and ".join(_named(f) for f in [where, *(f for f in mine if f is not where)])
    if any(f.origin == "loop bound" for f in mine):
        consequence = ("wherever the assertions hold a meta_for is empty and nothing is offloaded "
                       "(the dispatcher returns PARAKERN_NOTHING_TO_DO): change the assertion or the loop's bound")
    else:
        consequence = ("no call passes them (the dispatcher returns PARAKERN_INVALID_VALUES): "
                       "change the assertion")
    return warning(CONTRADICTION, f"these facts cannot hold together: {named}, with every parameter >= 0 (the "
                   f"analysis assumes it of all of them); {consequence}", where.span, *_related(mine, where))


def unlaunchable(schedule, fits, facts: tuple) -> "Diagnostic | None":
    """An error where the facts leave no value at which some kernel of `fits` (what each leaf's
    kernel needs of the machine: CaseTree.fits) runs on any GPU, with the facts and the GPU
    limits that forbid it, at the assertion among them (the schedule itself where none is)."""
    goal = sympy.Or(*(sympy.And(*system.relations) for system in fits)) if fits else sympy.false
    known = {cs.canonical(f.relation): f for f in schedule.facts}
    given = [known.get(cs.canonical(f), f) for f in facts]
    if goal is sympy.true or not given or _possible(given, (), goal) or not _possible(given, ()):
        return None   # some kernel launches, or the facts contradict each other (`contradiction`)
    core = _core(given, [], (goal,))
    if core is None:
        return None
    mine = [f for f in core if hasattr(f, "origin")]
    limits = [f for f in given if not hasattr(f, "origin")]   # what holds on every GPU
    held = [f.relation for f in mine] + limits
    failing = list(dict.fromkeys(r for system in fits for r in system.relations
                                 if r is not sympy.false and not _possible(held, (), r)))
    needs = (f"each needs {' and '.join(to_c(r) for r in failing)}" if failing
             else "each kernel needs more of the machine than that")
    read = {x for r in failing for x in r.free_symbols}
    limit = "".join(f", {_limit(r)}" for r in limits if _limit(r) and r.free_symbols <= read)
    launch = {cs.canonical(r) for r in launch_relations(schedule)}
    if not limit and any(cs.canonical(r) in launch for r in failing):
        limit = (f", and CUDA's launch limits allow no more on any GPU (a grid's y and z extents at most "
                 f"{GRID_LIMITS[1]}, a block's x and y at most {BLOCK_LIMITS[0]}, its z at most {BLOCK_LIMITS[2]})")
    if mine:
        where = _placed(mine)
        cause = f"where {' and '.join(_named(f) for f in [where, *(f for f in mine if f is not where)])}"
        change = {"assert": "change the values the assertion fixes",
                  "host if": "change the values the if around the meta_schedule admits"}.get(where.origin,
                                                                                             "change the loop's bound")
        span, related = where.span, _related(mine, where)
    else:
        cause, change, span, related = "at any value", "change the meta_for's bounds", schedule.keyword_span, ()
    return error(UNLAUNCHABLE,
                 f"no kernel of this meta_schedule can launch on any GPU {cause}: {needs}{limit}; {change}",
                 span, *related)


def _possible(facts, extra, *goal) -> bool:
    """Not proved contradictory by z3 (an `unknown` is never taken for a contradiction)."""
    relations = [getattr(f, "relation", f) for f in facts] + list(extra)
    return cs.consistent(cs.System(tuple(goal), tuple(relations))).status != "unsat"


def _core(items: list, fixed: list, goal: tuple) -> "list | None":
    """A smallest set of `items` (facts, or relations that hold on every GPU) that, with `fixed`
    and the goal, z3 proves contradictory: each one left out in turn and kept only where the rest
    are no longer contradictory. None where z3 cannot prove the whole contradictory."""
    if _possible(items + fixed, (), *goal):
        return None
    core = list(items)
    for item in list(core):
        trial = [f for f in core if f is not item]
        if not _possible(trial + fixed, (), *goal):
            core = trial
    return core


def _placed(facts: list):
    """The fact a diagnostic is put at: an assertion first, then the earliest line."""
    return min(facts, key=lambda f: (_PLACE.index(f.origin) if f.origin in _PLACE else len(_PLACE),
                                     f.span.line, f.span.col))


def _named(fact) -> str:
    """`B0 == 0 (assert, line 7)`, `B0 >= 1 (meta_for bound, line 10)`, in C as the user wrote it."""
    origin = "meta_for bound" if fact.origin == "loop bound" else fact.origin
    return f"{to_c(fact.relation)} ({origin}, line {fact.span.line})"


def _related(facts: list, where) -> tuple:
    return tuple(Related(f.span, f"{to_c(f.relation)} holds here") for f in facts if f is not where)


def _limit(relation) -> str:
    """What holds on every GPU, in words ('' for a C type's range, which says nothing here)."""
    if relation == sympy.Le(T, MAX_THREADS_PER_BLOCK):
        return f"and no GPU allows more than {MAX_THREADS_PER_BLOCK} threads per block (T <= {MAX_THREADS_PER_BLOCK})"
    return ""
