"""The waits on one thread's path, counted in the parameters: what a launch takes at least
where too few warps run at once to hide them (time_model's `path` and `t_latency`).

A warp issues its instructions in order and stops at the first one that needs a load's value
until the load returns, and at a barrier until its block's other warps arrive. The other warps
resident on its SM issue meanwhile: where enough run, that hides the waits and a throughput
term of the model limits; where each warp's path is a long chain of waits, the path does.
matmul without shared memory waits for b from L2 at every iteration of its z loop: its cases
measured 2.9-4.6 times what the model predicted without this (docs/bench/model-vs-h200.md).

Per thread, each a count of waits (the FORMULA gives each its latency):

  misses    rounds of global loads that L1 does not hold: served by L2, or by DRAM
  hits      rounds of global loads that L1 holds
  shared    rounds of shared-memory loads
  barriers  the __syncthreads it passes

A round is the reads of one iteration of the innermost serial loop they move with, issued
together (nvcc interleaves a loop's loads with the arithmetic that uses them: the SASS of
matmul's z loop waits on each iteration's b). A read that does not move with a loop is hoisted
out of it. L1 holds what a read's walk along its loop reads again: one that moves by less than
a 32-byte sector per iteration misses once per sector (a[p][z] of floats: once in 8
iterations), one that moves farther at every iteration (b[z][q]: a new row each time; c[p][q +
w * ub1]: the next tile). An accumulator kept in a register across the between loops
(analysis/lifted.py) is read once.

A staging copy loop (copies.py) waits for its loads before storing them. nvcc unrolls the
loop of a linear region by COPY_BATCH (the SASS of jacobi1d's: 4 loads, then 4 stores), so a
thread that copies m elements waits ceil(m / 4) times per execution; the loop of a box, whose
coordinates step with a carry or are divided out, stores each element before it loads the
next (the SASS of matmul's tiles: a wait per element), as does every loop the IR keeps rolled
(`#pragma unroll 1`). A write-back waits for its shared loads as often. The barriers are the staging phases'
(analysis/staging_phases.py), per iteration of the between loops where the body's copies are
refilled, and one per iteration where threads communicate (analysis/dependence.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from parakern.analysis.dependence import communicates
from parakern.analysis.lifted import lifted
from parakern.analysis.staging import StagingError, plan
from parakern.analysis.staging_phases import Barrier, phases
from parakern.launch import in_parameters
from parakern.tuning.copies import CopyLoop
from parakern.tuning.counting import between_trips, flat_index, threads_of, trip_counts, issued

SECTOR_BYTES = 32   # what L1 fetches from L2 for a miss (NOTES.md)
COPY_BATCH = 4      # loads of an unrolled copy loop issued before the first store waits


@dataclass(frozen=True)
class Path:
    """One thread's waits, in the parameters (the module's docstring)."""
    misses: sympy.Expr
    hits: sympy.Expr
    shared: sympy.Expr
    barriers: sympy.Expr


def path(case, copies: tuple[CopyLoop, ...]) -> Path:
    """The waits of one thread of the case; `copies`: its staging copy loops (copies.py)."""
    s = case.kernel.schedule
    staged = set(case.kernel.cached)
    rounds = _rounds(case, staged)
    misses = sum((n * rate for (kind, _), (n, rate) in rounds.items() if kind == "global"), sympy.S.Zero)
    hits = sum((n * (1 - rate) for (kind, _), (n, rate) in rounds.items() if kind == "global"), sympy.S.Zero)
    shared = sum((n for (kind, _), (n, _) in rounds.items() if kind == "shared"), sympy.S.Zero)
    for c in copies:
        batch = COPY_BATCH if c.linear and case.kernel.ir_level < 1 else 1
        waits = c.executions * sympy.ceiling(sympy.ceiling(c.elements / threads_of(case)) / batch)
        if c.load:
            misses += waits
        else:
            shared += waits
    return Path(*(sympy.expand(in_parameters(x, s)) for x in (misses, hits, shared, _barriers(case, s, staged))))


def _rounds(case, staged: set) -> dict:
    """(kind, loops) -> (rounds per thread, the share of them that miss L1): the reads of each
    group of loops, global or shared."""
    s = case.kernel.schedule
    trips = trip_counts(s)
    between = {lp.var for lp in s.between}
    kept = set(lifted(case.kernel).arrays) - staged    # read once, before the between loops
    found: dict = {}
    for a in issued(s.accesses, s):
        if not a.is_read:
            continue
        kind = "shared" if a.array in staged else "global"
        if a.array in kept and set(a.loops) <= between:
            key, count, rate = (kind, ("once",)), sympy.S.One, sympy.S.One
        else:
            loops, rate = _moving(a, s)
            count = sympy.Mul(*(trips.get(v, sympy.S.One) for v in loops))
            count *= sympy.Mul(*(trips[lp.var] for lp in s.between if lp.var not in loops))
            key = (kind, loops)
        if kind == "shared":
            rate = sympy.S.One
        found[key] = (count, max(rate, found.get(key, (count, sympy.S.Zero))[1]))
    return found


def _moving(a, s) -> tuple:
    """(the access's loops up to the innermost one it moves with, the share of its
    executions whose 32-byte sector L1 does not hold from the iteration before)."""
    array = s.array(a.array)
    loops = tuple(a.loops)
    flat = flat_index(a, array, s)
    while loops:
        var = sympy.Symbol(loops[-1], integer=True)
        if not flat.has(var):
            loops = loops[:-1]   # the same element at every iteration: hoisted
            continue
        step = flat.coeff(var) if flat.is_polynomial(var) and sympy.degree(flat, var) == 1 else None
        if step is not None and step.is_number and abs(step) * array.element_size < SECTOR_BYTES:
            return loops, sympy.Rational(abs(step) * array.element_size, SECTOR_BYTES)
        return loops, sympy.S.One
    return loops, sympy.S.One


def _barriers(case, s, staged: set) -> sympy.Expr:
    """The __syncthreads one thread passes: the staging phases', else one per iteration of the
    between loops where threads communicate."""
    between = between_trips(s)
    if staged:
        try:
            steps = phases(s, plan(case.kernel))
        except StagingError:
            return sympy.S.Zero
        count = lambda seq: sum(1 for x in seq if isinstance(x, Barrier))   # noqa: E731
        return count(steps.prologue) + count(steps.epilogue) + (count(steps.before_body)
                                                                + count(steps.after_body)) * between
    return between if communicates(case.kernel) else sympy.S.Zero
