"""Whether values of a schedule's parameters satisfy its facts (assertions, loop bounds,
divisors, the C types of its parameters), and which fact they violate, in C as the user
wrote it. One home for the bench's plans, tune's search, emit --fix and profile --at."""
from __future__ import annotations

import sympy

from parakern import exact
from parakern.limits import out_of_range
from parakern.printing import to_c


def check_facts(schedule, subs: dict) -> str:
    """'' when every fact that can be evaluated holds, else why the point is skipped."""
    given = exact.numbers(subs)
    beyond = out_of_range(schedule.params, {n.name: v for n, v in given.items() if isinstance(v, int)})
    if beyond:   # n = 10**12 for an int n: C would wrap it
        return beyond
    undecided = ""
    for fact in schedule.facts:
        try:
            rel = exact.substituted(fact.relation, subs, given)
        except (TypeError, ZeroDivisionError):   # sympy compares the zoo of a division by zero
            rel = sympy.nan
        if rel.free_symbols:
            continue  # reads a value the host sets (a time step): cannot be judged here
        truth = exact.truth(rel)
        if truth is None:   # said only where no fact is plainly violated (B >= 1 says more than n/B)
            undecided = undecided or f"{to_c(fact.relation)} cannot be evaluated (division by zero?)"
        elif not truth:   # in C, as the user wrote it: B == 32, n % B == 0; and where it is written
            where = f", line {fact.span.line}" if getattr(fact, "span", None) is not None else ""
            return f"violates {to_c(fact.relation)} ({fact.origin}{where})"
    return undecided
