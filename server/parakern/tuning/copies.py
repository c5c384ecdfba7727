"""The staging copy loops a case runs, as codegen/memory.py prints them from the plan of
analysis/staging.py: a region's load where some read needs it, its write-back where the block
writes it whole; once per block where the plan hoists it out of the `between` loops, else once
per iteration of them. The time model reads them three ways: the operations a thread spends on
them (time_model.arithmetic), the bytes they move through L1 and shared memory
(time_model.l1_traffic), the waits they put on a thread's path (latency.py).

What a copy costs in 32-bit arithmetic operations (the fp32 rate; integer instructions issue
at half of it, so an integer instruction counts 2), by the loop codegen/memory.py prints:

  per element  a linear region adds nthreads to an index and checks its bounds (about 8
               integer instructions: 16); a stepped box carries its coordinates (about 15: 30);
               another box divides each element's index by the run-time sizes of its rows, a
               division and a remainder per dimension but the first (16 + 2 x 40 each,
               INT_DIVISION_OPS)
  per loop     what a thread pays whatever it copies: its region's bounds in 64 bits, the
               loop's first test and its exit (about 25 integer instructions: 50,
               COPY_LOOP_OPS); a stepped box first divides tid and nthreads by the box's rows
               (a division and a remainder of each per dimension but the first: 4 x 40 in
               2-D), every time the loop runs: matmul's b tile is stepped at every k

A loop runs `executions` times per block (the between loops' trips where it is not hoisted);
where uniform guards choose between regions, each choice's loops count for their share (a
launch runs one choice): 1 / choices.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from parakern.analysis.staging import StagingError, plan, stepped
from parakern.launch import in_parameters
from parakern.tuning.counting import between_trips

# One integer division or remainder by a run-time value: the CUDA C++ Programming Guide
# ('Arithmetic Instructions': integer division and modulo "compile to up to 20 instructions"),
# integer instructions at half the fp32 rate: 40. A 2-D box's element index divided by its row
# length is a division and a remainder: 16 + 80 = 96 operations per element, where the H100
# run had placed the copy at 100 (docs/bench/model-vs-h100.md).
INT_DIVISION_OPS = 40
COPY_OPS_PER_ELEMENT = {"linear": 16, "stepped": 30, "divided": 16}   # "divided": plus its divisions
COPY_LOOP_OPS = 50


@dataclass(frozen=True)
class CopyLoop:
    array: str
    load: bool                # global -> shared (else the write-back, shared -> global)
    elements: sympy.Expr      # what one execution copies, the whole block's threads together
    executions: sympy.Expr    # per block, the choice's share included
    per_element: int          # operations per element copied (the module's docstring)
    per_loop: int             # operations per execution and thread
    linear: bool              # a region of one dimension (else a box of rows)

    @property
    def copied(self) -> sympy.Expr:
        """Elements the block copies in all of this loop's executions."""
        return self.elements * self.executions


def copy_loops(case) -> tuple[CopyLoop, ...]:
    """The copy loops of a case's kernel (none where nothing is staged or the plan fails)."""
    s = case.kernel.schedule
    try:
        staged = plan(case.kernel) if case.kernel.cached else ()
    except StagingError:
        return ()
    between = between_trips(s)
    out = []
    for st in staged:
        share = sympy.Rational(1, len(st.choices))
        for choice in st.choices:
            for region in choice.regions:
                times = (1 if region.hoisted else between) * share
                per_element, per_loop = _ops(s, region)
                for load in [True] * region.load + [False] * region.write_back:
                    out.append(CopyLoop(st.array.name, load, in_parameters(region.elements, s),
                                        in_parameters(times, s), per_element, per_loop, len(region.dims) < 2))
    return tuple(out)


def _ops(s, region) -> tuple[int, int]:
    """(operations per element, per execution and thread) of the loop copying `region`."""
    divisions = len(region.dims) - 1
    if divisions < 1:
        return COPY_OPS_PER_ELEMENT["linear"], COPY_LOOP_OPS
    if stepped(s, region):   # tid and nthreads divided once per execution
        return COPY_OPS_PER_ELEMENT["stepped"], COPY_LOOP_OPS + 2 * 2 * divisions * INT_DIVISION_OPS
    return COPY_OPS_PER_ELEMENT["divided"] + 2 * divisions * INT_DIVISION_OPS, COPY_LOOP_OPS
