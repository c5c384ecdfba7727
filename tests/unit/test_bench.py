"""parakern bench without a GPU: planning, the serial baseline, the writers, the exit code."""
import json
import math
import sys
from pathlib import Path

import pytest

from parakern.bench import plan as planning
from parakern.bench import report
from parakern.machine.devices import get_profile
from parakern.pipeline import analyze
from parakern.verify.points import device

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def _result(name):
    path = SAMPLES / name
    return path, analyze(path.read_text(), str(path)).results[0]


@pytest.fixture(scope="module")
def jacobi():
    return _result("jacobi1d.c")


@pytest.fixture(scope="module")
def matadd():
    return _result("matadd.c")


def _at(plan, **values):
    return next(p for p in plan.points if all(p.values[k] == v for k, v in values.items()))


def test_parse_assignments():
    assert planning.parse_assignments(["B0=4,8,16", "s=1"]) == {"B0": [4, 8, 16], "s": [1]}
    with pytest.raises(planning.PlanError):
        planning.parse_assignments(["B0"])


def test_jacobi_plan_cases_by_machine(jacobi):
    _, result = jacobi
    data, sweep = {"N": [1026]}, {"B": [8], "s": [1, 2, 4]}
    # the tree's order (tree_case); the default dispatcher picks among the cases that fit (holds)
    small_z = planning.make_plan(result, data, sweep, device(65536, 100, 1024))
    assert [p.tree_case for p in small_z.points] == [1, 2, 2]       # 8Bs+8 > Z: stage a slice only
    assert [p.holds for p in small_z.points] == [(1, 2, 3), (2, 3), (2, 3)]
    assert all(p.case in p.holds for p in small_z.points)
    tiny_z = planning.make_plan(result, data, sweep, device(65536, 50, 1024))
    assert [(p.tree_case, p.case) for p in tiny_z.points] == [(3, 3)] * 3     # nothing staged
    # 20 registers a thread take 3072 per 128 threads, 14 take 2048: only case 3's kernel fits
    few_regs = planning.make_plan(result, data, sweep, device(2048, 100, 1024))
    assert [(p.tree_case, p.case) for p in few_regs.points] == [(3, 3)] * 3   # the tree: by the second pass
    none_fits = planning.make_plan(result, data, sweep, device(1024, 100, 1024))
    assert none_fits.points[0].skipped and "take 2048 > 1024 per block" in none_fits.points[0].reason
    few_threads = planning.make_plan(result, data, sweep, device(65536, 1 << 16, 4))
    assert all(p.skipped and "8 threads > 4 per block" in p.reason and "every case" in p.reason
               for p in few_threads.points)   # the limit itself, not the first constraint that fails


def test_matadd_plan_h100(matadd):
    _, result = matadd
    plan = planning.make_plan(result, {"N": [1024, 1025]}, {"B0": [4, 32], "B1": [16, 64]},
                              get_profile("h100"))
    p = _at(plan, N=1024, B0=4, B1=16)
    assert p.case == 1 and p.launch["block"] == [16, 4, 1] and p.launch["grid"] == [32, 256, 1]
    too_big = _at(plan, N=1024, B0=32, B1=64)
    assert too_big.skipped and "2048 threads > 1024 per block" in too_big.reason
    odd = [q for q in plan.points if q.values["N"] == 1025]
    assert len(odd) == 4 and all(q.skipped and "violates N % 2 == 0" in q.reason and "assert" in q.reason for q in odd)
    with pytest.raises(planning.PlanError):
        planning.make_plan(result, {"N": [1024]}, {"B0": [4]}, get_profile("h100"))
    assert "skipped" in planning.plan_text(plan)


def test_every_case_plans_the_kernels_the_device_can_run(jacobi):
    """On an H100 only case 1's constraints hold for Jacobi, yet every kernel fits: the default
    dispatcher chooses among them all, and the bench times them all; a kernel whose own shared
    memory or threads exceed the device is still left out."""
    _, result = jacobi
    h100 = get_profile("h100")
    data, sweep = {"N": [1026]}, {"B": [8], "s": [2]}
    only = planning.make_plan(result, data, sweep, h100)
    every = planning.make_plan(result, data, sweep, h100, every_case=True)
    assert only.points[0].runs == only.points[0].holds == (1, 2, 3) and only.points[0].tree_case == 1
    assert every.points[0].case == only.points[0].case and every.points[0].runs == (1, 2, 3)
    assert set(dict(every.points[0].launches)) == {1, 2, 3}
    if only.points[0].case != 1:
        assert "(the tree's order: case 1)" in planning.plan_text(every)
    # case 1 stages 8*B*s + 8 bytes; with Z = 100 at B = 8, s = 2 (136 bytes) it cannot run at all
    small = planning.make_plan(result, data, sweep, device(65536, 100, 1024), every_case=True)
    assert small.points[0].tree_case == 2 and 1 not in small.points[0].runs and 3 in small.points[0].runs


def test_kernels_source_has_the_timing_spin(jacobi):
    from parakern.bench.runner import SPIN_KERNEL, kernels_source
    from parakern.codegen import schedule_code
    _, result = jacobi
    source = kernels_source(schedule_code(result))
    assert f"__global__ void {SPIN_KERNEL}(unsigned long long ns)" in source
    assert "%globaltimer" in source and "#ifdef __CUDA_ARCH__" in source


def _synthetic():
    """Case 1 everywhere, case 2 also at B0=8 (faster at B1=16 s=2); a skipped point; the dispatcher
    launching case 1 everywhere."""
    ms, ds = [], []
    for b0, b1 in [(4, 16), (8, 16), (8, 32)]:
        for s, gpu in [(1, 2e-3), (2, 1e-3)]:
            values = {"N": 4096, "B0": b0, "B1": b1, "s": s}
            ms.append(report.Measurement(values, 1, gpu_s=gpu * b0 / 8, serial_s=0.1, registers=20,
                                         correct=True, bandwidth_gbs=100.0, copy_gbs=400.0, picked=1))
            if b0 == 8:
                faster = b1 == 16 and s == 2
                ms.append(report.Measurement(values, 2, gpu_s=gpu * (0.5 if faster else 2), serial_s=0.1,
                                             registers=16, correct=True, picked=1))
            ds.append(report.Dispatch(values, 1, 1, dispatch_s=gpu * b0 / 8 * 1.05, serial_s=0.1, correct=True))
    ms.append(report.Measurement({"N": 4096, "B0": 32, "B1": 64, "s": 1}, None, "B0*B1 <= T is false"))
    return ms, ds


def test_tables_mark_best():
    ms, ds = _synthetic()
    text = report.table_text(ms, ["B0", "B1"], ["N"], dispatches=ds)
    blocks = text.split("\n\n")
    assert [b.splitlines()[0].split(":")[0] for b in blocks[:3]] == ["case 1, N=4096", "case 2, N=4096",
                                                                      "tree dispatcher, N=4096"]
    case1 = blocks[0].splitlines()
    best = [line for line in case1[1:] if "*" in line]
    assert len(best) == 1 and best[0].lstrip().startswith("4x16") and "200.00x *" in best[0]
    assert "skip" in blocks[0] and case1[1].split() == ["B0xB1", "\\", "s", "1", "2"]
    case2 = blocks[1].splitlines()
    assert case2[2].split() == ["4x16", "-", "-"]                       # case 2 cannot run there
    assert case2[3].split() == ["8x16", "25.00x", "200.00x", "*"]
    dispatcher = blocks[2].splitlines()
    assert dispatcher[3].split() == ["8x16", "47.62x", "c1", "95.24x", "c1", "(c2", "faster)"]
    summary = blocks[3].splitlines()
    assert summary[0].startswith("case 1: best at N=4096 B0=4 B1=16 s=2: 200x over serial C, 0.5 ms, "
                                 "100 GB/s = 25% of a "
                                 "device copy (400 GB/s), 20 registers")
    assert summary[2] == "skipped at N=4096 B0=32 B1=64 s=1: B0*B1 <= T is false"
    assert summary[3] == "tree dispatcher: launched the fastest case at 5 of 6 points; launched the case the plan " \
                         "expects at 6 of 6"
    assert summary[4].startswith("  elsewhere it ran at 48%-48% of the fastest case's speed")
    md = report.table_text(ms, ["B0", "B1"], ["N"], markdown=True, dispatches=ds)
    assert "**200.00x**" in md and "| B0xB1 \\ s | 1 | 2 |" in md and "**case 2, N=4096: speedup" in md


def test_wrong_results_are_marked():
    values = {"N": 64, "B": 32}
    ms = [report.Measurement(values, 1, gpu_s=1e-3, serial_s=1e-2, correct=False, mismatch="c[3]: expected 1, got 2")]
    text = report.table_text(ms, ["B"], ["N"])
    assert "10.00x WRONG" in text and "case 1: 1 WRONG results" in text and "*" not in text.splitlines()[2]


def test_json_csv(tmp_path):
    import csv
    ms, ds = _synthetic()
    report.write_json(tmp_path / "r.json", ms, {"schedule": "x:0"}, ds)
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["schedule"] == "x:0" and len(doc["results"]) == 11 and len(doc["dispatcher"]) == 6
    assert doc["results"][-1]["case"] is None and doc["results"][-1]["speedup"] is None
    assert math.isclose(doc["results"][0]["speedup"], 100.0) and doc["results"][0]["copy_fraction"] == 0.25
    assert doc["dispatcher"][0]["case"] == 1 and doc["dispatcher"][0]["picked"] == 1
    report.write_csv(tmp_path / "r.csv", ms, ds)
    rows = list(csv.DictReader(open(tmp_path / "r.csv")))
    assert len(rows) == 17 and rows[0]["B0"] == "4" and float(rows[0]["speedup"]) == pytest.approx(100.0)
    assert [r["kind"] for r in rows].count("dispatcher") == 6
    assert float(rows[-1]["gpu_s"]) == pytest.approx(1e-3 * 1.05)


class _Driver:
    """libcuda as ctypes sees it: cuInit's status and the device count."""

    def __init__(self, status: int, count: int):
        self.status, self.count = status, count

    def cuInit(self, flags):
        return self.status

    def cuDeviceGetCount(self, pointer):
        pointer._obj.value = self.count
        return 0


def test_what_the_bench_lacks_is_said_most_fundamental_first(monkeypatch):
    """The GPU (asked of the driver itself: pycuda cannot say), then nvcc, then pycuda, with advice
    that works for an installed parakern (its environment's pip, not `pip install -e '.[bench]'`,
    which works only inside the checkout)."""
    import importlib.util
    import shlex

    from parakern.bench import runner
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pycuda" else real_find_spec(name, *a))

    def no_library(name):
        raise OSError(f"{name}: cannot open shared object file")
    monkeypatch.setattr(runner.ctypes, "CDLL", no_library)
    lack = runner.missing()
    assert lack.no_gpu and lack.what == "no NVIDIA GPU here: there is no CUDA driver (libcuda.so.1 not found)"
    assert lack.advice == "" and "--plan-only" in lack.line()

    monkeypatch.setattr(runner.ctypes, "CDLL", lambda name: _Driver(runner.CUDA_NO_DEVICE, 0))
    assert runner.missing().what == "no NVIDIA GPU here: the CUDA driver finds none"
    monkeypatch.setattr(runner.ctypes, "CDLL", lambda name: _Driver(0, 0))
    assert runner.missing().what == "no NVIDIA GPU here: the CUDA driver finds none"
    monkeypatch.setattr(runner.ctypes, "CDLL", lambda name: _Driver(999, 0))
    assert runner.missing().what == "the CUDA driver cannot be used here (cuInit error 999)"

    monkeypatch.setattr(runner.ctypes, "CDLL", lambda name: _Driver(0, 2))     # a GPU
    monkeypatch.setattr(runner.shutil, "which", lambda name: None)
    lack = runner.missing()
    assert not lack.no_gpu and lack.what == "nvcc (the CUDA toolkit) is not on PATH"
    monkeypatch.setattr(runner.shutil, "which", lambda name: f"/usr/local/cuda/bin/{name}")
    lack = runner.missing()
    assert not lack.no_gpu and lack.what == "pycuda is not installed"
    assert lack.advice == (f"install pycuda in parakern's environment: {shlex.quote(sys.executable)} -m pip install "
                           "pycuda (pycuda builds against the CUDA toolkit)")
    assert "-e" not in lack.advice.split()


ASSERT_ON_AN_ARGUMENT = """#include <assert.h>
void f(int n, int B, int s, float x[n])
{
    assert(s == 2);
    assert(n % (s * B) == 0);
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                x[i * B + j] = 2.0f * x[i * B + j];
    }
}
"""
HOST_LOOP_IN_THE_GRID = """void steps(int n, int B, float a[n])
{
    for (int k = 0; k < n; k++) {
        meta_schedule {
            meta_for (int i = 0; i < (n - k + B - 1) / B; i++)
                meta_for (int j = 0; j < B; j++) {
                    int r = k + i * B + j;
                    if (r < n)
                        a[r] = a[r] + 1.0f;
                }
        }
    }
}
"""
H100 = device(65536, 232448, 1024)


def test_a_fact_on_an_argument_the_schedule_does_not_read_is_judged_with_its_value():
    """assert(s == 2) on an argument only the assertions read: the plan judged it never (the
    serial C then aborted the bench on the assertion); s given is its value, s not given the 1
    the bench passes."""
    result = analyze(ASSERT_ON_AN_ARGUMENT, "f.c").results[0]
    plan = planning.make_plan(result, {"n": [96], "s": [2]}, {"B": [16, 32]}, H100)
    assert [(p.values["B"], p.reason) for p in plan.points] == [
        (16, ""), (32, "violates n % (B*s) == 0 (assert, line 5)")]
    plan = planning.make_plan(result, {"n": [96]}, {"B": [16]}, H100)
    assert plan.points[0].reason.startswith("violates s == 2 (assert, line 4)")


def test_a_host_loop_variable_in_the_grid_needs_no_value():
    """The host sets k at each execution: the plan takes its first value (0) instead of asking
    for it, and no compile-time instance fixes it."""
    from parakern.analysis.fixed import fixable
    result = analyze(HOST_LOOP_IN_THE_GRID, "s.c").results[0]
    assert [p.name for p in fixable(result.schedule)] == ["B"]
    plan = planning.make_plan(result, {"n": [64]}, {"B": [16]}, H100)
    assert plan.points[0].case == 1 and plan.points[0].launch["grid"][0] == 4


def test_a_skipped_point_shows_the_derived_value_its_fact_reads():
    """n = -64 gave 'violates dim0 >= 1 (loop bound, line 13)': dim0, a value the user never set,
    is shown as the schedule derived it."""
    result = analyze((ROOT / "samples" / "matmul.c").read_text(), "matmul.c").results[0]
    plan = planning.make_plan(result, {"n": [-64, 64]}, {"B0": [8, 128], "ub1": [16], "s": [2]}, H100)
    line = next(k for k, t in enumerate((ROOT / "samples" / "matmul.c").read_text().split("\n"), 1)
                if "meta_for (int i = 0; i < dim0" in t)
    fact = f"violates dim0 >= 1 (loop bound, line {line}): dim0 = n/B0"
    # C's -64/128 is 0, the floor -1: the value is shown where the two agree only
    assert [(p.values["n"], p.values["B0"], p.reason) for p in plan.points] == [
        (-64, 8, fact), (-64, 128, fact), (64, 8, ""), (64, 128, fact + " = 0")]


def test_a_fact_on_an_argument_no_one_gave_says_so():
    """tune printed 'violates cap >= n' where cap, read by an assertion only, was never given
    (it is taken as 1, as the bench passes it)."""
    result = analyze(ASSERT_ON_AN_ARGUMENT, "f.c").results[0]
    plan = planning.make_plan(result, {"n": [96]}, {"B": [16]}, H100)
    assert plan.points[0].reason == "violates s == 2 (assert, line 4), with s taken as 1 (not given: --data s=VALUE)"
    plan = planning.make_plan(result, {"n": [96], "s": [3]}, {"B": [16]}, H100)
    assert plan.points[0].reason == "violates s == 2 (assert, line 4)"


def test_a_plan_of_too_many_points_is_refused_before_it_is_made():
    """A million points were planned for a quarter of an hour, with no word."""
    result = analyze((ROOT / "samples" / "matmul.c").read_text(), "matmul.c").results[0]
    many = list(range(1, 101))
    with pytest.raises(planning.PlanError, match=r"matmul:0: 120000 points \(2 n x 100 B0 x 100 ub1 x 6 s\); "
                                                 r"at most 100000: give fewer values"):
        planning.make_plan(result, {"n": [4096, 8192]}, {"B0": many, "ub1": many, "s": [1, 2, 4, 8, 16, 32]}, H100)


def test_only_the_arguments_the_violated_fact_reads_are_said_to_be_missing():
    """An argument named `line` (read by another fact) was said to be taken as 1 because the
    reason's text says '(assert, line 4)'."""
    source = ASSERT_ON_AN_ARGUMENT.replace("int s,", "int s, int line,").replace(
        "assert(s == 2);", "assert(line >= 0);\n    assert(s == 2);")
    result = analyze(source, "f.c").results[0]
    plan = planning.make_plan(result, {"n": [96], "s": [3]}, {"B": [16]}, H100)
    assert plan.points[0].reason == "violates s == 2 (assert, line 5)"


def test_a_value_given_twice_is_one_point_and_two_names_in_one_option_say_how():
    assert planning.parse_assignments(["B=32,32,64", "B=64,128"]) == {"B": [32, 64, 128]}
    with pytest.raises(planning.PlanError, match="one name per --data, its values after it: --data n=V1,V2"):
        planning.parse_assignments(["n=4096,n=8192"], "--data")


def test_a_dispatcher_case_not_timed_alone_is_not_called_slower():
    """Without --every-case only the tree's case is timed: dispatch_tuned launching case 2 was
    printed 'c2 (c1 faster)' and 'launched the fastest case at 0 of 2 points', c2 never timed."""
    ms, ds = [], []
    for b in (32, 128):
        values = {"N": 301, "B": b}
        ms.append(report.Measurement(values, 1, gpu_s=3e-4, serial_s=1e-6, registers=20, correct=True, picked=1))
        ds.append(report.Dispatch(values, 1, 2, dispatch_s=2e-4, serial_s=1e-6, correct=True,
                                  kind=report.TUNED))
    text = report.table_text(ms, ["B"], ["N"], dispatches=ds)
    assert "c2 (not timed alone)" in text and "c1 faster" not in text
    assert "tuned dispatcher: the case it launched at 2 points was not timed alone (--every-case times them all)" \
        in text and "of the fastest case's speed" not in text

