"""The whole analysis of a file: front-end, dependence check, comprehensive optimization.

One function for the CLI and the language server alike. A failure while
optimizing one schedule becomes a diagnostic on that schedule; the others
are still analysed.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from parakern.process import interrupts
from parakern.analysis import dependence
from parakern.analysis.coalescing import coalescing_warnings
from parakern.analysis.feasible import contradiction, unlaunchable
from parakern.analysis.narrow import narrow_blocks
from parakern.analysis.data_blocks import data_sized_blocks
from parakern.analysis.invariance import candidate_parameters, result_warnings
from parakern.analysis.staging import StagingError, plan
from parakern.comprehensive import CaseTree, comprehensive_optimization
from parakern.comprehensive import completed as complete_tree
from parakern.counters import default_counters
from parakern.machine.devices import get_profile
from parakern.source.diagnostics import Diagnostic, Span, error, warning
from parakern.frontend import analyze_source
from parakern.ir import LoweringError
from parakern.kernel import Kernel
from parakern.model import FrontendResult, Schedule
from parakern.strategies import OPT_IN, before_tree, default_strategies
from parakern.strategies.register_tiles import SmallerTiles, without_tile
from parakern.machine.targets import DEFAULT_TARGET


@dataclass(frozen=True)
class Options:
    target: str = DEFAULT_TARGET                       # ptxas architecture for the register counter
    strategies: "tuple[str, ...] | None" = None  # decision codes enabled; None: all but OPT_IN
    occupancy: "str | None" = None              # device profile name: adds the P_occ counter
    staging: tuple[str, ...] = ()               # GPU profiles: adds the staging counter (P_stage)


@dataclass(frozen=True)
class ScheduleResult:
    schedule: Schedule
    tree: "CaseTree | None"
    diagnostics: tuple[Diagnostic, ...]
    # (decision code, why) for each enabled strategy that does not apply to the schedule
    not_applied: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Analysis:
    file: str
    frontend: FrontendResult
    results: tuple[ScheduleResult, ...]
    options: Options

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        found = list(self.frontend.diagnostics)
        for result in self.results:
            found.extend(result.diagnostics)
        return tuple(sorted(dict.fromkeys(found), key=lambda d: (d.span.line, d.span.col, d.code)))


def analyze(text: str, file: str, options: Options = Options()) -> Analysis:
    frontend = analyze_source(text, file)
    results = tuple(optimize_schedule(s, options) for s in frontend.schedules)
    return Analysis(file, frontend, results, options)


def _stageable(kernel: Kernel) -> tuple[Kernel, tuple[Diagnostic, ...]]:
    """Drops from cache(...) the arrays that cannot be staged, with a warning on each:
    the cases then read them from global memory."""
    keep, warnings = [], []
    for name in kernel.cached:
        try:
            plan(dataclasses.replace(kernel, cached=(name,)))
            keep.append(name)
        except StagingError as exc:
            where = next((c.span for c in kernel.schedule.cache if c.name == name), kernel.schedule.keyword_span)
            advice = f"; {exc.advice}" if exc.advice else ""
            warnings.append(warning("PK031", f"{exc.message}; the cases use '{name}' in global memory{advice}",
                                    where))
    return dataclasses.replace(kernel, cached=tuple(keep)), tuple(warnings)


def _enabled(strategy, options: Options) -> bool:
    if options.strategies is None:
        return strategy.code not in OPT_IN
    return strategy.code in options.strategies


def _not_applied(kernel: Kernel, strategies) -> tuple[tuple[str, str], ...]:
    """Why each strategy of the tree cannot apply to the schedule as the tree starts from it
    (what the user would change to get it); one line per decision code. The tree's other
    strategies meet a register tile's kernel without it (its cases end where the tile does):
    they are explained on that kernel."""
    out: dict = {}
    plain = without_tile(kernel)
    for strategy in strategies:   # a code applies when one of its instances (levels) does
        why = strategy.explain(kernel if isinstance(strategy, SmallerTiles) else plain)
        if not why:
            out[strategy.code] = ""
        else:
            out.setdefault(strategy.code, why)
    return tuple((code, why) for code, why in out.items() if why)


def optimize_schedule(schedule: Schedule, options: Options = Options(), complete: bool = True) -> ScheduleResult:
    """Dependence check, then the case tree; never raises on user input. complete=False stops
    at the cases (the editor shows them first): `completed` adds the no-fit regions, the
    coverage proof and the coalescing warnings."""
    try:
        verdict = dependence.examine(schedule, target=options.target)
        found = verdict.diagnostics + dependence.outside(schedule) + narrow_blocks(schedule) + \
            data_sized_blocks(schedule) + \
            result_warnings(schedule, candidate_parameters(schedule))
        if any(d.severity.value == "error" for d in found):
            return ScheduleResult(schedule, None, found)
        # the updates iterations may make to one element at once: every kernel makes them atomically
        schedule = dataclasses.replace(schedule, atomics=verdict.atomics)
        device = get_profile(options.occupancy) if options.occupancy else None
        counters = default_counters(options.target, device, options.staging)
        strategies = tuple(s for s in default_strategies() if _enabled(s, options))
        kernel = Kernel.initial(schedule, options.target)
        not_applied = []
        for strategy in before_tree():   # every case has them
            if _enabled(strategy, options):
                applied = strategy.apply(kernel)
                if applied is None:
                    not_applied.append((strategy.code, strategy.why_not(kernel)))
                kernel = applied or kernel
        kernel, warnings = _stageable(kernel)
        # (8b) only where (8) gave the schedule a tile: elsewhere it has nothing to make smaller
        strategies = tuple(s for s in strategies if kernel.tile or not isinstance(s, SmallerTiles))
        # the facts of the schedule as written: a tiled root's own (its grid of whole tiles) hold
        # only where its kernel runs
        facts = tuple(f.relation for f in without_tile(kernel).schedule.facts)
        tree = comprehensive_optimization(kernel, counters, strategies, facts, complete=False)
        # the tree's schedule is the one written (its grid, what an empty meta_for is): each
        # case's kernel has its own, a register tile's grid of whole tiles
        tree = dataclasses.replace(tree, schedule=without_tile(kernel).schedule)
        contradicted = contradiction(tree.schedule)
        partial = ScheduleResult(schedule, tree, found + warnings + ((contradicted,) if contradicted else ()),
                                 tuple(not_applied) + _not_applied(kernel, strategies))
        return completed(partial) if complete else partial
    except Exception as exc:
        return _failed(schedule, exc)


def completed(result: ScheduleResult) -> ScheduleResult:
    """A result of optimize_schedule(complete=False) made whole (the same result otherwise)."""
    if result.tree is None or result.tree.complete:
        return result
    try:
        tree = complete_tree(result.tree)
        impossible = unlaunchable(tree.schedule, tree.fits, tree.facts)
        return dataclasses.replace(result, tree=tree,
                                   diagnostics=result.diagnostics + ((impossible,) if impossible else ())
                                   + coalescing_warnings(result.schedule, tree))
    except Exception as exc:
        return _failed(result.schedule, exc)


def _failed(schedule: Schedule, exc: Exception) -> ScheduleResult:
    if isinstance(exc, LoweringError):
        where = exc.span if isinstance(exc.span, Span) else schedule.keyword_span
        return ScheduleResult(schedule, None, (error(
            "PK030", f"no GPU kernel can be built for this meta_schedule: {exc.message}", where),))
    interrupts.reraise()   # a Ctrl-C a library turned into an error of its own is no bug of ours
    # reported on the schedule, never a dead editor session
    return ScheduleResult(schedule, None, (error(
        "PK099", f"internal error while optimizing this meta_schedule ({type(exc).__name__}: "
        f"{exc}); please report it with this file", schedule.keyword_span),))
