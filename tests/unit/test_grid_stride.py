"""Grid-stride loops (`for (i = b*B + t; i < n; i += G*B)`, the CUDA idiom): two threads reach
one element only if their starts collide, which z3 could not see through the products G*B*m
(a PK021, then atomics on a plain update, and verify refused to say "verified"); and the
average thread's trips, which the mean start counted as none where the grid outgrows n."""
from __future__ import annotations

import pytest
import sympy

from parakern.analysis.dependence import check
from parakern.analysis.loop_ranges import start_window
from parakern.frontend import analyze_file
from parakern.source.diagnostics import Severity
from parakern.tuning.counting import trip_count


def grid_stride(tmp_path, start: str, step: str, statement: str = "y[i] = 2.0f * x[i];"):
    path = tmp_path / "gs.c"
    path.write_text(f"""#include "metafork.h"
void f(int n, int G, int B, float x[n], float y[n])
{{
    meta_schedule {{
        meta_for (int b = 0; b < G; b++)
            meta_for (int t = 0; t < B; t++)
                for (int i = {start}; i < n; i += {step})
                    {statement}
    }}
}}
""")
    result = analyze_file(path)
    assert [d.format() for d in result.diagnostics if d.severity == Severity.ERROR] == []
    return result.schedules[0]


@pytest.mark.parametrize("start, step", [
    ("b * B + t", "G * B"),
    ("t * G + b", "G * B"),          # the block's threads G apart
    ("b * B + t", "2 * G * B"),      # every other stride: still one start each
    ("b * B + t", "G * B + 1"),      # the starts span less than a step
])
def test_grid_stride_starts_that_never_meet_are_independent(tmp_path, start, step):
    for statement in ("y[i] = 2.0f * x[i];", "y[i] = 2.0f * x[i] + y[i];"):
        assert check(grid_stride(tmp_path, start, step, statement)) == (), (start, step, statement)


@pytest.mark.parametrize("start, step", [
    ("b * B + t", "B"),              # the blocks walk the same elements
    ("b * B + t", "G"),
    ("b * B + t", "G * B - 1"),      # the last start is the first one's next element
    ("2 * (b * B + t)", "G * B"),    # starts spread over two strides
])
def test_grid_stride_starts_that_meet_are_races_with_a_witness(tmp_path, start, step):
    (d,) = check(grid_stride(tmp_path, start, step))
    assert d.code == "PK020" and " and (" in d.message, d.message


def test_the_average_thread_of_a_grid_stride_loop_shares_the_elements_out(tmp_path):
    s = grid_stride(tmp_path, "b * B + t", "G * B")
    (loop,) = s.serial
    assert sympy.expand(start_window(loop.lo, loop.step, s)) == 0
    trips = trip_count(loop, s)

    def at(**values) -> int:
        return int(trips.subs({x: values[x.name] for x in trips.free_symbols}))
    assert at(n=1024, G=1024, B=32) == 1    # more threads than elements: one trip at most, not none
    assert at(n=1024, G=4, B=32) == 8       # 128 threads over 1024 elements
    # a start whose range is not one stride has no window (its mean start counts it)
    s = grid_stride(tmp_path, "2 * (b * B + t)", "G * B")
    assert start_window(s.serial[0].lo, s.serial[0].step, s) is None
