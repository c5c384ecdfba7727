"""What a thread of a case runs, counted in the parameters: the trip counts of its serial
loops, how often it executes an access, the accesses it issues. The time model's quantities
(time_model.py) and the latency of a thread's path (latency.py) both count with these."""
from __future__ import annotations

import sympy

from parakern.analysis.loop_ranges import stride_start
from parakern.launch import in_parameters, launch_of
from parakern.symbolic.extrema import maximum
from parakern.symbolic.symbols import opaque, sym


def trip_counts(s) -> dict:
    """Serial loop variable -> its trip count (in parameters)."""
    return {lp.var: trip_count(lp, s) for lp in (*s.between, *s.serial)}


def between_trips(s):
    return sympy.Mul(*(trip_count(lp, s) for lp in s.between))


def trip_count(loop, s) -> sympy.Expr:
    """A serial loop's trip count in parameters. Where a bound reads a loop variable (a
    triangle: `for (k = 0; k < i; k++)` with i = bi*B + t), each loop variable stands at the
    mean of its range: the trips of the average thread, whose sum over the threads is the
    loop's true work where the bound is linear in the variables. The model is one formula in
    the parameters (dispatch_auto prints it in C, where no loop variable exists), rounded up."""
    window = stride_start(loop.lo, loop.step, s)
    if window is not None:   # a grid-stride loop: the threads share [window, hi) out
        return maximum(sympy.S.Zero, sympy.ceiling(in_parameters((loop.hi - window) / loop.step, s)))
    count = in_parameters(loop.trip_count, s)
    if opaque(count):   # a bound read from an array (CSR's rowptr[r + 1]): counted once, as the
        return sympy.S.One   # traffic table does; the model ranks configurations, not the data
    variables = {sym(lp.var) for lp in (*s.loops, *s.between, *s.serial)}
    if not count.free_symbols & variables:   # the usual loop: its count reads parameters only
        return count
    means = _loop_means(s)
    for _ in range(len(means)):   # a mean may read an outer loop's variable: at most one per level
        count = count.xreplace(means)
        if not count.free_symbols & set(means):
            break
    # whole trips (the operation counts are integers in Python and in dispatch_auto's C), and
    # none where the average thread's bound is below its start (`for (k = i; k < m; k++)` with
    # n > 2m threads: m - mean(i) < 0 made tune print negative bytes and rank by them)
    return maximum(sympy.S.Zero, sympy.ceiling(count))


def counted_once(s) -> tuple:
    """The serial loops whose trip count the model cannot know (a bound read from an array):
    each counts one iteration (`trip_count`)."""
    return tuple(lp for lp in (*s.between, *s.serial) if opaque(in_parameters(lp.trip_count, s)))


def _loop_means(s) -> dict:
    """Loop variable symbol -> the mean of the values it takes (in parameters and outer loop
    variables): lo + step * (trips - 1) / 2."""
    out = {}
    for lp in s.loops:
        out[sym(lp.var)] = in_parameters((lp.lo + lp.hi - 1) / 2, s)
    for lp in (*s.between, *s.serial):
        out[sym(lp.var)] = in_parameters(lp.lo + lp.step * (lp.trip_count - 1) / 2, s)
    return out


def flat_index(a, array, s) -> sympy.Expr:
    dims = tuple(array.dims) if len(array.dims) == len(a.indices) else (sympy.S.One,) * len(a.indices)
    flat = sum((i * sympy.Mul(*dims[k + 1:]) for k, i in enumerate(a.indices)), sympy.S.Zero)
    return sympy.expand(in_parameters(flat, s))


def threads_of(case):
    return launch_of(case).threads


def issued(accesses, s) -> tuple:
    """The accesses a thread issues: a read of an array the kernel does not write is not issued
    again where an earlier read of the same element under the same loops runs whenever it does
    (its guards are some of this one's): the compiler loads it once. The 4 rows of a coarsened
    thread, decision (6), share their load of matmul's b (rows 2 to 4 under their guard `4*v + c
    < B0`); counted 4 times, they made the model rank (6) below the cases it outran on an H200."""
    kept, out = {}, []
    for a in accesses:
        if a.is_read and not a.is_write and not s.array(a.array).written:
            key = (a.array, tuple(a.indices), tuple(a.loops))
            if any(set(guards) <= set(a.guards) for guards in kept.get(key, ())):
                continue
            kept.setdefault(key, []).append(tuple(a.guards))
        out.append(a)
    return tuple(out)


def executions(access, s) -> sympy.Expr:
    """How often one thread executes an access: the trip counts of its enclosing serial loops
    (and of the loops between grid and block levels)."""
    trips = trip_counts(s)
    count = sympy.Mul(*(trips.get(v, sympy.S.One) for v in access.loops))
    missing = [lp for lp in s.between if lp.var not in access.loops]
    return count * sympy.Mul(*(trips[lp.var] for lp in missing))
