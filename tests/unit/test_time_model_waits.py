"""The time model's waits and reuse (issue 37, point 2), in process: a thread's chain of waits
(tuning/latency.py), integer divisions by run-time values, what the resident blocks need of L2
at once (window_bytes), and bench/model_vs_measured.py's fit on one GPU's runs."""
import sys

import pytest
import sympy

from conftest import ROOT, SAMPLES
from parakern.analysis.facts import substitutions
from parakern.machine.devices import get_profile
from parakern.pipeline import analyze
from parakern.tuning import copies, time_model

H100 = time_model.modelled(get_profile("h100"))
KERNEL = """
#include "metafork.h"

void mod(int n, int B, int p, int *x, int *y)
{
    int blocks = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < blocks; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n)
                    y[i] = x[i] % DIVISOR;
            }
    }
}
"""


def _first_case(text: str, name: str):
    (result,) = analyze(text, name).results
    return result, result.tree.cases[0]


def test_a_division_by_a_run_time_value_costs_what_it_compiles_to():
    """`x % p` with p known only at run time is a sequence of integer instructions; `x % 7` the
    compiler turns into a multiply and a shift: one operation, as any other operator."""
    _, by_value = _first_case(KERNEL.replace("DIVISOR", "p"), "v.c")
    _, by_constant = _first_case(KERNEL.replace("DIVISOR", "7"), "c.c")
    ops_value = time_model.quantities(by_value).ops32
    ops_constant = time_model.quantities(by_constant).ops32
    assert sympy.expand(ops_value - ops_constant) == copies.INT_DIVISION_OPS - 1


def test_what_the_resident_blocks_read_at_once_decides_where_l2_holds_it():
    """matmul's unstaged case reads, at each k, its tiles of a and b beside its tile of c: what
    blocks read again comes from L2 (DRAM moves the arrays once) where the resident blocks'
    windows fit in L2, even where the arrays do not; where they do not fit, DRAM moves what
    the blocks ask for."""
    result, _ = _first_case((SAMPLES / "matmul.c").read_text(), "matmul.c")
    q = time_model.tree_quantities(result.tree)[0]
    subs = substitutions(result.schedule, {"n": 2048, "ub1": 32, "B0": 8, "s": 2})
    values = time_model.at(q, subs)
    assert values["window_bytes"] == 4 * (8 * 8 + 2 * 8 * 64)   # a's and b's tiles of one k, c's tile
    env = time_model.evaluate({**{n: values[n] for n in time_model.QUANTITY_NAMES if n != "resident"},
                               "resident": 4, **time_model.device_values(H100)})
    assert env["l2_holds"] == 1 and env["dram_bytes"] == values["unique_bytes"]
    small = {**time_model.device_values(H100), "l2_bytes": env["active"] * values["window_bytes"] - 1}
    env = time_model.evaluate({**{n: values[n] for n in time_model.QUANTITY_NAMES if n != "resident"},
                               "resident": 4, **small})
    assert env["l2_holds"] == 0 and env["dram_bytes"] == env["requested"]


def test_the_fit_chooses_the_latency_the_runs_measured():
    """bench/model_vs_measured.py's fit: among FIT_GRID's values, the ones whose model, as a
    dispatcher, picks the case measured fastest. Two cases at one point: one bound by its
    thread's chain of L2 misses, one by its bytes; which is faster depends on the L2 latency."""
    sys.path.insert(0, str(ROOT / "bench"))
    import model_vs_measured as bench  # deferred: a script, not a module of the package
    device = time_model.device_values(H100)
    base = {**{n: 0.0 for n in time_model.QUANTITY_NAMES}, "blocks": 132.0, "threads": 1024.0, "resident": 1.0,
            "atomic_spread": 1.0}
    # the same time at 1300 misses x 230 cycles: one case below it, the other above
    bytes_case = {**base, "global_bytes": 1300 * 230.0 / H100.clock * H100.bandwidth / 132,
                  "unique_bytes": 1.0, "read_bytes": 1e12}
    bytes_case.update(window_bytes=1e12)   # L2 holds nothing of it: DRAM moves every byte asked
    latency_case = {**base, "misses": 1300.0, "unique_bytes": 1.0, "read_bytes": 1.0}
    for measured_fast, expect in (("latency", 200.0), ("bytes", 300.0)):
        times = {"latency": 1.0, "bytes": 1.0, measured_fast: 0.5}
        kernels = [{"values": {"n": 1}, "measured_case": k, "calls": 1, "measured_s": times[name],
                    "candidates": [(k, inputs, 0)]}
                   for k, (name, inputs) in enumerate((("latency", latency_case), ("bytes", bytes_case)), 1)]
        fitted = bench.fit({"run": (kernels, 0)}, H100)
        assert set(fitted) == set(bench.FIT_GRID)
        assert (fitted["l2_latency"] < 230) == (expect < 230), (measured_fast, fitted)
    assert device["l2_latency"] == time_model.L2_LATENCY_CYCLES
    with pytest.raises(KeyError):
        bench.FIT_GRID["launch_overhead"]   # only latencies are fitted, never a sample's own constant



def test_a_run_measured_before_a_generator_change_is_modelled_as_its_kernels_were():
    """The H100 run of 2026-11-25 14:53 measured matmul's b tile copied with a division and a
    remainder per element (the stepped copies landed at 15:44): bench/model_vs_measured.py models
    that run's kernels so (more operations a thread), the H200 run of the next day's as today's;
    cases without a staged box are the same either way."""
    sys.path.insert(0, str(ROOT / "bench"))
    import model_vs_measured as bench  # deferred: a script, not a module of the package
    ((landed, _, _),) = bench.GENERATOR_CHANGES
    before, after = bench.run_date(ROOT / "docs" / "bench" / "h100"), bench.run_date(ROOT / "docs" / "bench" / "h200")
    assert before < landed < after
    assert bench.run_date(ROOT / "docs" / "bench" / "h100-stepped-copies") is None   # today's generator
    text = (SAMPLES / "matmul.c").read_text().replace("meta_schedule {", "meta_schedule cache(a, b) {")
    (result,) = analyze(text, str(SAMPLES / "matmul.c")).results
    subs = substitutions(result.schedule, {"n": 1024, "B0": 8, "ub1": 16, "s": 4})
    then, today = bench._quantities(result.tree, before), bench._quantities(result.tree, after)
    assert bench._quantities(result.tree, None) == today
    ops = [(sympy.sympify(x.ops32).subs(subs), sympy.sympify(y.ops32).subs(subs)) for x, y in zip(then, today)]
    stepped = [k for k, c in enumerate(result.tree.cases) if c.kernel.cached and any(
        copies.stepped(c.kernel.schedule, r) for st in copies.plan(c.kernel) for ch in st.choices for r in ch.regions)]
    assert stepped, "matmul with cache(a, b) has a case whose b tile is copied in steps"
    for k, (old, new) in enumerate(ops):
        assert (old > new) if k in stepped else (old == new), (k + 1, old, new)
