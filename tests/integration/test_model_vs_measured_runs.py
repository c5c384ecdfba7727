"""bench/model_vs_measured.py on the committed GPU runs, as a subprocess (about a minute): the
model fitted on one GPU's runs and reported on the other's, both directions (issue 37, point 2),
and the model as a dispatcher not below the figures docs/bench/model-vs-h100.md and
model-vs-h200.md commit (a regression of the model fails here)."""
import re
import subprocess
import sys

from conftest import ROOT

RUNS = ("docs/bench/h100", "docs/bench/h100-stepped-copies", "docs/bench/h200")


def test_the_model_is_fitted_on_one_gpu_and_reported_on_the_other():
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "model_vs_measured.py"), *RUNS, "--fit"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    found = re.findall(r"^fit on (\w+) \(l2_latency=(\d+), dram_latency=(\d+)\) -> (\w+) \((the runs it was fitted on|"
                       r"runs the fit never saw)\): the model as a dispatcher >= (\d+)% of the fastest case",
                       done.stdout, re.M)
    pairs = {(train, test): int(lowest) for train, _, _, test, _, lowest in found}
    assert set(pairs) == {("h100", "h100"), ("h100", "h200"), ("h200", "h100"), ("h200", "h200")}
    for (train, test), lowest in pairs.items():
        # 2026-11-27, each run's kernels modelled as its generator made them (GENERATOR_CHANGES):
        # 89 % both on the runs fitted on and across (before: 75 % H100 -> H200, 85 % H200 -> H100)
        assert lowest >= 89, (train, test, lowest)
    # the fitted latencies are among the microbenchmarks' range, not a sample's own time
    for _, l2, dram, *_ in found:
        assert 200 <= int(l2) <= 350 and 400 <= int(dram) <= 700
    # both GPUs' tables, each on its own profile
    assert "model: h100; measured: NVIDIA H100" in done.stdout and "model: h200; measured: NVIDIA H200" in done.stdout
    # the H100 run predates the stepped copies, and says so
    assert "docs/bench/h100 was measured on 2026-11-25T14:53:34Z: its kernels modelled as they were then" in done.stdout
