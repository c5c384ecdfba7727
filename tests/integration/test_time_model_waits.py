"""The time model's waits and reuse (issue 37, point 2), in process: a thread's chain of waits
(tuning/latency.py), integer divisions by run-time values, what the resident blocks need of L2
at once (window_bytes), and bench/model_vs_measured.py's fit on one GPU's runs."""
from conftest import SAMPLES
from parakern.analysis.facts import substitutions
from parakern.pipeline import analyze
from parakern.symbolic.symbols import sym
from parakern.tuning import time_model
from unit.test_time_model_waits import H100, _first_case


def test_matmul_without_shared_memory_waits_on_l2_at_every_iteration():
    """matmul's unstaged case: a thread reads b[z][q] from a new row at every iteration of z (a
    miss of L1 each time); its a[p][z] moves 4 bytes a step, inside the sector of the step
    before, and is loaded in the same round. At n = 2048 on an H100 the chain of those waits,
    not the bytes nor the arithmetic, limits the launch."""
    result, _ = _first_case((SAMPLES / "matmul.c").read_text(), "matmul.c")
    q = time_model.tree_quantities(result.tree)[0]
    assert q.path is not None and q.path.shared == 0 and q.path.barriers == 0
    n, b0, s = (sym(x) for x in ("n", "B0", "s"))
    at = {n: 2048, b0: 8, s: 2, sym("ub1"): 32}
    # B0 steps of z per k, s columns each, n / B0 values of k: one round of loads per column and step
    assert q.path.misses.subs(at) >= 8 * 2 * (2048 // 8)
    p = time_model.predict(q, substitutions(result.schedule, {"n": 2048, "ub1": 32, "B0": 8, "s": 2}), H100)
    assert p.limiting == "latency"
    assert p.step("path") * H100.clock >= p.step("misses") * time_model.L2_LATENCY_CYCLES


def test_a_staged_case_waits_at_its_barriers_and_on_shared_memory():
    """matmul with cache(a, b): at every k the block copies its tiles (a wait for each load of a
    copied element), passes the barriers of the staging phases and reads the tiles from shared
    memory, not from L2."""
    text = (SAMPLES / "matmul.c").read_text().replace("meta_schedule {", "meta_schedule cache(a, b) {")
    (result,) = analyze(text, "matmul_cache.c").results
    staged = next(c for c in result.tree.cases if c.kernel.cached)
    q = time_model.quantities(staged)
    values = {sym("n"): 1024, sym("B0"): 8, sym("s"): 2, sym("ub1"): 32}
    k = 1024 // 8
    assert q.path.barriers.subs(values) >= 2 * k      # before and after each k's copies are used
    assert q.path.shared.subs(values) >= 8 * k        # the z loop reads the tiles
    assert q.path.misses.subs(values) >= k            # each k's copies load from global memory
