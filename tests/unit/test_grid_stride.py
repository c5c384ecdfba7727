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


def test_a_warp_reads_a_grid_stride_loop_coalesced_as_many_times_as_its_threads_trip():
    from parakern.analysis.traffic import traffic
    from parakern.pipeline import analyze
    result = analyze(GRID_STRIDE_AXPY, "gs.c").results[0]
    t = traffic(result.tree.cases[0].kernel, {"n": 4096, "G": 4, "B": 64})
    for r in t.requests:
        # lanes at b*B + t + G*B*m: one 128-byte line per warp, 16 iterations of 2 warps
        assert (str(r.stride), r.cost, r.requests) == ("1", 4, 32), r
    assert t.minimum_bytes == t.global_bytes == 3 * 4096


GRID_STRIDE_AXPY = """#include "metafork.h"
void axpy(int n, int G, int B, float alpha, float x[n], float y[n])
{
    meta_schedule {
        meta_for (int b = 0; b < G; b++)
            meta_for (int t = 0; t < B; t++)
                for (int i = b * B + t; i < n; i += G * B)
                    y[i] = alpha * x[i] + y[i];
    }
}
"""


def _pk043(tmp_path, start: str, step: str, statement: str, bound: str = "i < n") -> list:
    from parakern.analysis.invariance import candidate_parameters, result_changing
    path = tmp_path / "gs.c"
    path.write_text(f"""#include "metafork.h"
void f(int n, int G, int B, int off, float x[n + off + 1], float y[n + off + 1])
{{
    meta_schedule {{
        meta_for (int b = 0; b < G; b++)
            meta_for (int t = 0; t < B; t++)
                for (int i = {start}; {bound}; i += {step})
                    {statement}
    }}
}}
""")
    (s,) = analyze_file(path).schedules
    return [(c.parameter, c.why) for c in result_changing(s, candidate_parameters(s))]


def test_a_grid_stride_loop_computes_the_same_whatever_its_block(tmp_path):
    # the threads together run [off, n + off] whatever B and G: B is tuned
    assert _pk043(tmp_path, "off + t * G + b", "B * G", "y[i] = x[i];", "i <= n + off") == []
    assert _pk043(tmp_path, "b * B + t", "G * B", "y[i] += x[i];") == []


def test_a_stride_loop_that_steps_by_the_block_adds_as_often_as_the_block_lets(tmp_path):
    # step B, not G*B: y[i] gets x[i] min(G, i/B + 1) times, which B changes
    (found,) = _pk043(tmp_path, "b * B + t", "B", "y[i] += x[i];")
    assert found == ("B", "its loop steps by B, so the values it runs over depend on B")


def test_an_unrolled_grid_stride_loop_has_starts_within_a_step_but_no_window(tmp_path):
    from parakern.analysis.loop_ranges import stride_start
    s = grid_stride(tmp_path, "b * B + t", "2 * G * B", "y[i] = x[i];")
    (loop,) = s.serial
    assert start_window(loop.lo, loop.step, s) is None            # the threads skip every other stride
    assert sympy.expand(stride_start(loop.lo, loop.step, s)) == 0
    trips = trip_count(loop, s)
    assert int(trips.subs({x: {"n": 4096, "G": 4, "B": 64}[x.name] for x in trips.free_symbols})) == 8
    # starts that may be a step apart have neither
    s = grid_stride(tmp_path, "2 * (b * B + t)", "G * B")
    assert stride_start(s.serial[0].lo, s.serial[0].step, s) is None


def test_tune_says_why_it_asks_for_the_number_of_blocks():
    from parakern import search
    from parakern.machine.devices import get_profile
    from parakern.pipeline import analyze
    from parakern.tuning import time_model
    result = analyze(GRID_STRIDE_AXPY, "gs.c").results[0]
    with pytest.raises(search.TuneError) as error:
        search.tune(result, {"n": 4096}, time_model.modelled(get_profile("h100")))
    assert "no value for G (G is the number of blocks of a grid level: tune chooses block sizes, not it)" \
        in str(error.value)
