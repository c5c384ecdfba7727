"""`parakern bench` end to end on the emulated GPU: tests/fakes holds a pycuda and an nvcc
that run the generated kernels (and the generated host dispatcher) on parakern's CPU
emulation, with the real nvcc checking the CUDA and giving ptxas's register counts.
Timings mean nothing here; what is checked is everything around them: every case that can
run at a point is launched with its launch configuration and compared with the serial C,
host loops around a schedule (polydiv, jacobi's T steps) launch once per execution, the
dispatcher path, wrong kernels caught, cancellation, and the files written."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
FAKES = Path(__file__).resolve().parents[1] / "fakes"
REAL_NVCC = shutil.which("nvcc") is not None   # the fake nvcc asks it for ptxas's register counts

pytestmark = pytest.mark.timeout(300)


def _env(**extra) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(FAKES), env.get("PYTHONPATH", "")) if p)
    env["PATH"] = os.pathsep.join([str(FAKES / "bin"), env.get("PATH", "")])
    env.update(extra)
    return env


def _bench(*args, **env):
    return subprocess.run([sys.executable, "-m", "parakern", "bench", *map(str, args)], capture_output=True,
                          text=True, env=_env(**env), timeout=280)


@pytest.fixture
def fake_gpu(monkeypatch):
    """The fakes in this process (for tests that call the session directly)."""
    monkeypatch.syspath_prepend(str(FAKES))
    monkeypatch.setenv("PATH", os.pathsep.join([str(FAKES / "bin"), os.environ.get("PATH", "")]))
    for name in [m for m in sys.modules if m == "pycuda" or m.startswith("pycuda.")]:
        monkeypatch.delitem(sys.modules, name)
    yield
    for name in [m for m in sys.modules if m == "pycuda" or m.startswith("pycuda.")]:
        del sys.modules[name]


def test_matadd_every_output(tmp_path):
    done = _bench(SAMPLES / "matadd.c", "--data", "N=32", "--sweep", "B0=4,8", "--sweep", "B1=8", "--repeat", 2,
                  "--json", tmp_path / "r.json", "--csv", tmp_path / "r.csv", "--plot", tmp_path / "m.png")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["device"] == "parakern CPU emulation" and doc["schedule"] == "matadd:0"
    assert [(r["values"], r["case"]) for r in doc["results"]] == [
        ({"N": 32, "B0": 4, "B1": 8}, 1), ({"N": 32, "B0": 8, "B1": 8}, 1)]
    for r in doc["results"]:
        assert r["correct"] is True and r["calls"] == 1 and r["picked"] == 1
        assert r["registers"] > 0 or not REAL_NVCC               # ptxas's count, through the fake cubin
        assert r["bytes_moved"] == 3 * 32 * 32 * 4                 # a, b read, c written
        assert r["gpu_s"] > 0 and r["speedup"] > 0 and 0 < r["copy_fraction"]
    assert r["launch"] == {"grid": [2, 4, 1], "block": [8, 8, 1], "shared_bytes": 0, "threads": 64,
                           "registers": 16}
    assert [(d["case"], d["correct"]) for d in doc["dispatcher"]] == [(1, True), (1, True)]
    assert [(d["case"], d["picked"], d["correct"]) for d in doc["dispatcher_default"]] == [(1, 1, True)] * 2
    assert [(d["case"], d["correct"], d["kind"]) for d in doc["dispatcher_tuned"]] == [(1, True, "tuned dispatcher")] * 2
    csv_rows = (tmp_path / "r.csv").read_text().splitlines()     # header, 2 cases, 2 + 2 + 2 dispatcher calls
    assert sorted(r.split(",")[3] for r in csv_rows[1:]) == (["case"] * 2 + ["dispatcher"] * 2
                                                             + ["dispatcher_default"] * 2 + ["dispatcher_tuned"] * 2)
    assert (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"
    assert "dispatcher, N=32: speedup over serial C" in done.stdout
    assert "tuned dispatcher, N=32: speedup over serial C" in done.stdout
    assert "dispatcher: launched the fastest case at 2 of 2 points" in done.stdout
    assert "tuned dispatcher: launched the fastest case at 2 of 2 points" in done.stdout


def test_cases_by_region_and_host_loops(tmp_path):
    """A device with 2 KiB of shared memory: the tree's dispatcher launches jacobi's case 1 (8Bs+8
    bytes) where it fits, case 2 (8B+8) where it does not; T=3 time steps launch three times per
    call; each case that fits runs, and the default dispatcher launches the plan's choice."""
    done = _bench(SAMPLES / "jacobi1d.c", "--data", "N=258", "--data", "T=3", "--sweep", "B=16,64",
                  "--sweep", "s=1,4", "--repeat", 1, "--json", tmp_path / "j.json",
                  PARAKERN_FAKE_DEVICE="65536,2048,1024")
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "j.json").read_text())
    # every case whose kernel fits runs (those the default dispatcher chooses among): case 1 not at B=64, s=4
    ran = {(r["values"]["B"], r["values"]["s"], r["case"]): (r["calls"], r["correct"]) for r in doc["results"]}
    assert ran == {(b, s, k): (3, True) for b, s in ((16, 1), (16, 4), (64, 1), (64, 4)) for k in (1, 2, 3)
                   if (b, s, k) != (64, 4, 1)}
    # the default dispatcher launched the case the plan's rule (dispatch.choose) picks, every call
    assert all(d["cases"] == [d["picked"]] and d["calls"] == 3 and d["correct"] for d in doc["dispatcher_default"])
    assert len(doc["dispatcher_default"]) == 4
    launched = {(d["values"]["B"], d["values"]["s"]): (d["cases"], d["calls"], d["correct"]) for d in doc["dispatcher"]}
    assert launched[(64, 4)] == ([2], 3, True) and launched[(16, 1)] == ([1], 3, True)
    # dispatch_tuned: never case 1 where it does not fit; every call right, one case per point
    # (its first call measured the cases that fit, the time steps after it reuse the choice)
    tuned = {(d["values"]["B"], d["values"]["s"]): (d["cases"], d["calls"], d["correct"])
             for d in doc["dispatcher_tuned"]}
    assert tuned[(64, 4)][0] != [1]
    assert all(len(cases) == 1 and calls == 3 and ok for cases, calls, ok in tuned.values())
    big = next(r for r in doc["results"] if r["case"] == 2 and (r["values"]["B"], r["values"]["s"]) == (64, 4))
    assert big["launch"]["shared_bytes"] == 8 * 64 + 8 and big["launch"]["grid"] == [1, 4, 1]


def test_polydiv_launches_once_per_elimination_step():
    done = _bench(SAMPLES / "polydiv.c", "--data", "N=40", "--data", "M=16", "--data", "P=97", "--sweep", "B=8",
                  "--sweep", "s=1,2", "--repeat", 1)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "WRONG" not in done.stdout
    # which case is fastest on the CPU emulation is noise; which case each dispatcher launches is not
    for dispatcher in ("default dispatcher", "tree dispatcher"):
        assert re.search(rf"^{dispatcher}: launched the fastest case at \d of 2 points; launched the case "
                         r"the plan expects at 2 of 2$", done.stdout, re.M), done.stdout


def test_skipped_points_say_why():
    done = _bench(SAMPLES / "matadd.c", "--data", "N=32", "--sweep", "B0=4,64", "--sweep", "B1=32", "--repeat", 1)
    assert done.returncode == 0, done.stderr
    assert "B0=64 B1=32" in done.stderr and "skipped: no case can run" in done.stderr
    assert "skip" in done.stdout


def test_a_sweep_where_no_point_can_run_is_not_a_success():
    """N = 63 violates matadd's assert(N % 2 == 0) at every point: before, exit 0 with nothing
    measured (a script then recorded the run as a success)."""
    done = _bench(SAMPLES / "matadd.c", "--data", "N=63", "--sweep", "B0=4,8", "--sweep", "B1=8", "--repeat", 1)
    assert done.returncode == 1, done.stderr
    assert "violates N % 2 == 0" in done.stderr
    assert "no point of the sweep can run" in done.stderr and "nothing was measured" in done.stderr


def test_a_wrong_kernel_is_caught(fake_gpu):
    """A kernel that subtracts instead of adding: every case and the dispatcher are WRONG."""
    from parakern.bench import session
    from parakern.bench.runner import GpuRunner
    from parakern.pipeline import analyze
    text = (SAMPLES / "matadd.c").read_text()
    result = analyze(text, str(SAMPLES / "matadd.c")).results[0]

    def broken(code, device):
        kernels = tuple(k.replace("a[", "-a[") for k in code.kernels)
        assert kernels != code.kernels
        return GpuRunner(dataclasses.replace(code, kernels=kernels), device)

    outcome = session.bench(text, str(SAMPLES / "matadd.c"), result, {"N": [16]}, {"B0": [4], "B1": [8]},
                            broken, repeat=1)
    assert not outcome.correct
    (m,) = outcome.measurements
    assert m.correct is False and m.mismatch.startswith("c[0]: expected ") and "differ)" in m.mismatch
    assert [(d.kind, d.correct, d.case) for d in outcome.dispatches] == [("default dispatcher", False, 1),
                                                                          ("tree dispatcher", False, 1),
                                                                          ("tuned dispatcher", False, 1)]


def test_cancelled_between_launches(fake_gpu):
    import pycuda.driver as cuda

    from parakern.bench import session
    from parakern.bench.runner import GpuRunner
    from parakern.pipeline import analyze
    text = (SAMPLES / "matadd.c").read_text()
    result = analyze(text, "matadd.c").results[0]
    seen = []
    with pytest.raises(session.Cancelled):
        session.bench(text, str(SAMPLES / "matadd.c"), result, {"N": [16]}, {"B0": [4, 8], "B1": [8]}, GpuRunner,
                      repeat=1, progress=lambda i, n, what: seen.append((i, n, what)), cancelled=lambda: len(seen) >= 2)
    # 2 points x (1 case, the default, tree and tuned dispatchers): cancelled after the second launch
    assert seen == [(0, 8, "N=16 B0=4 B1=8 case 1"), (1, 8, "N=16 B0=4 B1=8 default dispatcher")]
    assert cuda._contexts == []                      # the runner's context was popped
    assert cuda._live == {}                          # and every buffer freed


def test_requirements_with_the_fakes(fake_gpu):
    from parakern.bench.runner import requirements
    assert requirements() == ""


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="the CUDA toolkit is not installed")
def test_the_real_nvcc_builds_what_the_runner_loads(tmp_path):
    """The exact nvcc command lines of the runner, with the real nvcc: the cubin for the device's
    architecture and the host dispatcher as a shared library that ctypes can load."""
    import ctypes

    from parakern.bench import runner
    from parakern.codegen import schedule_code
    from parakern.pipeline import analyze
    text = (SAMPLES / "jacobi1d.c").read_text()
    code = schedule_code(analyze(text, "jacobi1d.c").results[0])
    (tmp_path / "k.cu").write_text(runner.kernels_source(code))
    (tmp_path / "d.cu").write_text(runner.host_library_source(code))
    for command in (runner.nvcc_cubin_command(tmp_path / "k.cu", tmp_path / "k.cubin", "sm_90"),
                    runner.nvcc_library_command(tmp_path / "d.cu", tmp_path / "d.so", "sm_90")):
        done = subprocess.run(command, capture_output=True, text=True, timeout=280)
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "k.cubin").read_bytes()[:4] == b"\x7fELF"
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(tmp_path / "d.so")], capture_output=True,
                             text=True).stdout
    assert " T parakern_bench_dispatch" in symbols and " T parakern_bench_last_error" in symbols
    names = subprocess.run(["cuobjdump", "-elf", str(tmp_path / "k.cubin")], capture_output=True, text=True).stdout \
        if shutil.which("cuobjdump") else "jacobi1d_0_case1 jacobi1d_0_case4"
    assert "jacobi1d_0_case1" in names and "jacobi1d_0_case4" in names
    ctypes.CDLL  # the library loads only where libcudart's driver is present: not checked here


def test_the_bench_hook_leaves_the_users_names_alone(tmp_path):
    """The hooked function's wrapper has the schedule's parameters as arguments; its own locals
    (values, pointers in earlier versions) must not collide with them."""
    from integration.test_verify import HARNESS_NAMES
    (tmp_path / "metafork.h").write_text((SAMPLES / "metafork.h").read_text())
    source = tmp_path / "names.c"
    source.write_text(HARNESS_NAMES)
    sweeps = [a for n in ("prop", "device", "launched", "grid", "block", "attr", "attrs", "raised", "by_fit",
                          "shared_bytes", "values") for a in ("--sweep", f"{n}=1")]
    done = _bench(source, "--data", "r=100", "--sweep", "threads=32", *sweeps, "--repeat", 1)
    assert done.returncode == 0, done.stderr
    assert "WRONG" not in done.stdout and "case 1" in done.stdout


def test_gpu_tune_measures_the_model_and_the_page_shows_it(tmp_path):
    """bench/gpu_tune.py (issue 17's GPU figures) on the emulated GPU: tune --measure runs the
    model's picks through the bench, its JSON holds Spearman and the pick's fraction, and
    jacobi's host argument T reaches the function; gpu_page puts both targets on the page."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu_tune.py"), "--quick", "--profile", "h100",
                           "--out", str(tmp_path), "matadd", "jacobi1d"], capture_output=True, text=True,
                          env=_env(), timeout=280, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for run in ("matadd_N32", "jacobi1d_N130_T2"):
        doc = json.loads((tmp_path / f"tune_{run}.json").read_text())
        (entry,) = doc["schedules"]
        m = entry["measure"]
        assert m["correct"] and -1.0 <= m["spearman"] <= 1.0 and 0.0 < m["pick_fraction_of_best"] <= 1.0
        assert len(m["measured"]) >= 2 and all(c["measured_s"] > 0 for c in m["measured"])
    out = tmp_path / "page.md"
    page = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu_page.py"), str(tmp_path), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert page.returncode == 0, page.stderr
    text = out.read_text()
    assert "| jacobi1d_N130_T2: the model's pick >= 80 % of the best measured (h100 model) |" in text
    assert "| matadd_N32: Spearman of predicted and measured times >= 0.7 |" in text



def test_tune_measure_runs_the_chosen_configurations_only(fake_gpu):
    """tune --measure times each configuration it chose and nothing else (no other case at its
    point, no dispatcher; on an H100 machine the extra runs and the serial C one point after the
    other made matmul at n = 2048 outlast 278 s), and two configurations that differ only in
    their case are both measured."""
    from parakern import search
    from parakern.bench import tune_measure
    from parakern.bench.runner import GpuRunner
    from parakern.machine.devices import get_profile
    from parakern.pipeline import analyze
    from parakern.tuning import time_model

    text = (SAMPLES / "jacobi1d.c").read_text()
    (result,) = analyze(text, "jacobi1d.c").results
    tuning = search.tune(result, {"N": 130}, time_model.modelled(get_profile("h100")))
    by_point = {}
    for c in tuning.configurations:
        by_point.setdefault(c.values, []).append(c)
    twins = next(cs for cs in by_point.values() if len(cs) >= 2)[:2]
    chosen = [tuning.pick, *[c for c in twins if c != tuning.pick]]
    launched, dispatched = [], []

    class Counting(GpuRunner):
        def launch(self, k, *args, **kwargs):
            launched.append(k)
            return super().launch(k, *args, **kwargs)

        def dispatch(self, *args, **kwargs):
            dispatched.append(1)
            return super().dispatch(*args, **kwargs)

    comparison = tune_measure.measure(text, "jacobi1d.c", result, tuning, chosen, {"N": 130, "T": 2}, Counting,
                                 repeat=1)
    assert comparison.correct and not dispatched
    assert sorted(set(launched)) == sorted({c.case for c in chosen})
    assert len(comparison.pairs) == len(chosen)
    assert all(t > 0 for _, t in comparison.pairs)


def test_compile_time_instances_run_beside_each_case(tmp_path):
    """bench --instances: at every point each case runs twice, as its parametric kernel and as
    its instance with the point's program parameters as constants (emit --fix), both against
    the serial C; the tables, CSV and heat maps tell them apart, and the dispatchers (built with
    the instances) launch them. matmul with cache(a, b): the staged copies at compile time."""
    source = tmp_path / "matmul.c"
    source.write_text((SAMPLES / "matmul.c").read_text().replace("meta_schedule {", "meta_schedule cache(a, b) {"))
    shutil.copy(SAMPLES / "metafork.h", tmp_path / "metafork.h")
    done = _bench(source, "--data", "n=16", "--sweep", "ub1=4,8", "--sweep", "B0=4", "--sweep", "s=2",
                  "--every-case", "--instances", "--repeat", 1, "--json", tmp_path / "r.json",
                  "--csv", tmp_path / "r.csv", "--plot", tmp_path / "m.png")
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    kernels = {(r["values"]["ub1"], r["case"], r["compile_time"]) for r in doc["results"]}
    cases = {r["case"] for r in doc["results"]}
    assert len(cases) >= 3
    assert kernels == {(ub1, k, fixed) for ub1 in (4, 8) for k in cases for fixed in (False, True)}
    assert all(r["correct"] is True for r in doc["results"])
    assert all(r["registers"] > 0 for r in doc["results"]) or not REAL_NVCC
    assert all(d["correct"] is True for d in doc["dispatcher"] + doc["dispatcher_tuned"])
    kinds = [row.split(",")[4] for row in (tmp_path / "r.csv").read_text().splitlines()[1:]]
    assert kinds.count("instance") == kinds.count("case") == 2 * len(cases)
    assert "case 1 at compile time, n=16: speedup over serial C" in done.stdout
    assert "case 1 at compile time: best at n=16" in done.stdout
    assert (tmp_path / "m_case1_fixed.png").read_bytes()[:4] == b"\x89PNG"


def test_an_instance_in_a_host_loop_keeps_the_hosts_time_step(tmp_path):
    """jacobi's time step t is a program parameter the host sets: the instance at B = 16,
    s = 1 fixes those two only and runs at each of the T = 3 executions."""
    done = _bench(SAMPLES / "jacobi1d.c", "--data", "N=130", "--data", "T=3", "--sweep", "B=16", "--sweep", "s=1",
                  "--instances", "--repeat", 1, "--json", tmp_path / "j.json")
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "j.json").read_text())
    # every case fits there (the default dispatcher chooses among them): each, and its instance
    assert sorted((r["case"], r["compile_time"], r["calls"], r["correct"]) for r in doc["results"]) == [
        (k, fixed, 3, True) for k in (1, 2, 3) for fixed in (False, True)]


def test_a_point_where_the_host_loop_runs_no_step_is_skipped_with_its_reason(tmp_path):
    """jacobi at T = 0 never executes its schedule: before, its cells said FAILED and
    "nanx over serial C"; now the point is skipped, saying why, beside T = 2's results."""
    done = _bench(SAMPLES / "jacobi1d.c", "--data", "N=34", "--data", "T=0,2", "--sweep", "B=8", "--sweep", "s=1",
                  "--repeat", 1, "--json", tmp_path / "j.json")
    assert done.returncode == 0, done.stderr
    assert "nan" not in done.stdout and "FAILED" not in done.stdout
    assert "skipped at N=34 T=0 B=8 s=1: the function does not execute the schedule" in done.stdout
    doc = json.loads((tmp_path / "j.json").read_text())
    assert [(r["values"]["T"], r["case"], r["correct"]) for r in doc["results"]] == [(0, None, None), (2, 1, True),
                                                                                   (2, 2, True), (2, 3, True)]
    assert [d["values"]["T"] for d in doc["dispatcher"]] == [2]
    # T = 0 alone: nothing is measured, which is no success (it exited 0)
    done = _bench(SAMPLES / "jacobi1d.c", "--data", "N=34", "--data", "T=0", "--sweep", "B=8", "--sweep", "s=1",
                  "--repeat", 1)
    assert done.returncode == 1 and "nothing was measured" in done.stderr, done.stderr


def test_outputs_and_options_are_checked_before_the_run(tmp_path):
    """--json naming the C file replaced it with the JSON; a folder, or a folder that does not
    exist, failed after the whole run (IsADirectoryError); --data B=3 --sweep B=64 ran B=3
    without a word; --device 7 said 'LogicError: cuDeviceGet failed'."""
    source = tmp_path / "in.c"
    text = (SAMPLES / "saxpy.c").read_text()
    source.write_text(text)
    base = [source, "--data", "n=256", "--sweep", "B=32", "--repeat", "1"]
    for extra, words in [(["--json", source], "is the input file"), (["--csv", source], "is the input file"),
                         (["--json", tmp_path], "is a folder"), (["--json", tmp_path / "no" / "x.json"],
                                                                 "does not exist"),
                         (["--json", tmp_path / "r", "--csv", tmp_path / "r"], "name the same file"),
                         (["--data", "B=3"], "B is given by --data and by --sweep"),
                         (["--device", "7"], "--device 7: this machine has one GPU: --device 0"),
                         # --csv metafork.h replaced the header the program includes
                         (["--csv", tmp_path / "metafork.h"], "is a source file"),
                         # --profile without --plan-only was ignored; --instances with it too
                         (["--profile", "h100"], "--profile names the device of --plan-only"),
                         (["--plan-only", "--profile", "h100", "--instances"], "--instances times"),
                         # x.jpg got PNG bytes
                         (["--plot", tmp_path / "x.jpg"], "the heat maps are PNG pictures")]:
        (tmp_path / "metafork.h").write_text("/* the user's */\n")
        done = _bench(*base, *extra)
        assert done.returncode == 2 and words in done.stderr, (extra, done.stderr)
        assert source.read_text() == text and (tmp_path / "metafork.h").read_text() == "/* the user's */\n"


FILE_SCOPE = """#include "metafork.h"
#define NN 64
float coef[NN];
float seen[NN][NN];

void fx(int B, float a[NN][NN], float b[NN][NN])
{
    for (int i = 0; i < NN; i++)
        coef[i] = 0.5f + i;
    int g = NN / B;
    meta_schedule {
        meta_for (int i = 0; i < NN; i++)
            meta_for (int bx = 0; bx < g; bx++)
                meta_for (int tx = 0; tx < B; tx++) {
                    b[i][bx * B + tx] = a[i][bx * B + tx] * coef[i];
                    seen[i][bx * B + tx] = coef[i] + 1.0f;
                }
    }
    for (int i = 0; i < NN; i++)
        b[i][i] += seen[i][i];
}
"""


def test_a_file_scope_array_is_benched_in_place(tmp_path):
    """`float coef[NN];` beside the function, read (and another written) by the schedule: the
    bench stopped with 'coef is not the function's argument (an offset or a local array)'."""
    (tmp_path / "metafork.h").write_text((SAMPLES / "metafork.h").read_text())
    source = tmp_path / "fx.c"
    source.write_text(FILE_SCOPE)
    done = _bench(source, "--sweep", "B=16,32", "--repeat", 1)
    assert done.returncode == 0, done.stderr
    assert "WRONG" not in done.stdout and "case 1" in done.stdout
