"""The tuning space of a schedule: which program parameters tune and dispatch_auto choose
(those that size a block or divide a grid extent), the candidate values of each, and which
parameters a configuration must be given (those its facts, cases or launches read). One home for
tune's search, the generated dispatch_auto, the bench's sweeps and the editor's bench request."""
from __future__ import annotations

import sympy

from parakern.analysis.facts import definitions
from parakern.analysis.invariance import block_parameters, candidate_parameters, result_changing
from parakern.launch import launch_of

BLOCK_CANDIDATES = tuple(2 ** i for i in range(11))    # 1 .. 1024 threads along an axis
OTHER_CANDIDATES = tuple(2 ** i for i in range(7))     # 1 .. 64 iterations per thread

# What a bench runs where it is not told (the editor's parakern.bench settings, complete_sweep):
# the typical size the editor and `optimize` say what runs at.
DEFAULT_DATA = 1024          # every data parameter: a quick first look; set parakern.bench.data for more
DEFAULT_BLOCK_1D = [32, 64, 128, 256]
DEFAULT_BLOCK_2D = [8, 16, 32]
DEFAULT_OTHER = [1, 2, 4]    # granularity and the other program parameters


def needed_parameters(schedule, tree) -> list:
    """Integer parameters that the facts, the cases or the launches read (polydiv's P, which only
    the fact P != 0 of its `% P` reads: tune took it as 0 and called every configuration infeasible)."""
    defs = definitions(schedule)
    names = {s.name for f in schedule.facts for s in sympy.sympify(f.relation).xreplace(defs).free_symbols}
    for case in tree.cases:
        for rel in case.constraints.relations:
            names |= {s.name for s in sympy.sympify(rel).xreplace(defs).free_symbols}
        launch = launch_of(case)
        for e in (*launch.grid, *launch.block, launch.shared_bytes):
            names |= {s.name for s in sympy.sympify(e).free_symbols}
    names -= {"R_B", "Z", "T"}
    names -= set(schedule.host_loops)   # the host sets them at each execution (0 in the plan: the first)
    return [p.name for p in schedule.params if p.name in names]


def tuned_parameters(schedule) -> tuple:
    """Program parameters that size a block or divide a grid extent, in the schedule's order,
    but those whose value changes what the schedule computes (analysis/invariance.py: a partial
    sum per block of B elements): the caller gives those."""
    candidates = candidate_parameters(schedule)
    changing = {c.parameter for c in result_changing(schedule, candidates)}
    return tuple(n for n in candidates if n not in changing)


def candidate_values(schedule, name: str) -> tuple:
    return BLOCK_CANDIDATES if name in block_parameters(schedule) else OTHER_CANDIDATES


def space(schedule, fixed: dict) -> tuple:
    """(names, value lists) of the parameters tuned here: tuned_parameters less those given."""
    names = tuple(n for n in tuned_parameters(schedule) if n not in fixed)
    return names, tuple(candidate_values(schedule, n) for n in names)


def complete_sweep(schedule, tree, data: dict, sweep: dict) -> tuple[dict, dict, list]:
    """Defaults for the parameters the bench needs and was not given: (data, sweep, defaulted)."""
    data, sweep, defaulted = dict(data), dict(sweep), []
    block = block_parameters(schedule)
    # a program parameter in a case's constraints is a tuning knob (granularity s in 8·s·B+8 ≤ Z), as
    # is one that divides a grid extent (matmul's s in n / (s*ub1)); one that only sizes the grid is
    # a problem size (saxpy's n, whose array size is not visible)
    # (a granularity whose value changes the result, PK043, is still one: the caller gives it, the
    # bench's default tries it as the others)
    tuning = {x.name for case in tree.cases for rel in case.constraints.relations
              for x in sympy.sympify(rel).free_symbols} | set(candidate_parameters(schedule))
    kinds = {p.name: p.kind for p in schedule.params}
    for name in needed_parameters(schedule, tree):
        if name in data or name in sweep:
            continue
        if name in block:
            sweep[name] = DEFAULT_BLOCK_2D if len(block) > 1 else DEFAULT_BLOCK_1D
        elif kinds.get(name) == "data" or name not in tuning:
            data[name] = [DEFAULT_DATA]
        else:
            sweep[name] = DEFAULT_OTHER
        defaulted.append(name)
    return data, sweep, defaulted
