"""Registers per thread: ptxas's count, the PTX liveness estimate, and the IR levels."""
from __future__ import annotations

import time

import pytest

from parakern.counters.registers import PtxasError, RegisterCounter, ptxas_info
from parakern.ir import LEVELS, kernel_ptx
from unit.test_registers import PTXAS, ROOT, SAMPLES, STAGED_TOLERANCE, TOLERANCE, _fake_ptxas, kernel_of, needs_ptxas


@needs_ptxas
def test_estimate_agrees_with_ptxas_within_tolerance():
    exact, estimate = RegisterCounter(), RegisterCounter(use_ptxas=False)
    rows, worst = [], {False: 0, True: 0}
    for path in SAMPLES:
        for level in LEVELS:
            plain = kernel_of(path, level, cached=())
            staged = kernel_of(path, level)
            a, b = exact.measure(plain).value, estimate.measure(plain).value
            row = f"{path.stem:10} level {level}: ptxas {a:3}  estimate {b:3}  diff {a - b:+3d}"
            worst[False] = max(worst[False], abs(a - b))
            if staged.cached:  # the same sample with its cache(...) arrays in shared memory
                c, d = exact.measure(staged).value, estimate.measure(staged).value
                row += f"   cached: ptxas {c:3}  estimate {d:3}  diff {c - d:+3d}"
                worst[True] = max(worst[True], abs(c - d))
            rows.append(row)
    print("\n" + "\n".join(rows) + f"\nlargest |ptxas - estimate| = {worst[False]} (tolerance {TOLERANCE}), "
          f"staged {worst[True]} (tolerance {STAGED_TOLERANCE})")
    assert worst[False] <= TOLERANCE
    assert worst[True] <= STAGED_TOLERANCE


def test_ptxas_errors_are_reported():
    if PTXAS is None:
        pytest.skip("ptxas not on PATH")
    with pytest.raises(PtxasError, match="ptxas failed"):
        ptxas_info(PTXAS, "this is not ptx", "sm_80")


@needs_ptxas
def test_ptxas_agrees_with_itself_on_cached_ptx():
    kernel = kernel_of(ROOT / "samples" / "matadd.c")
    assert ptxas_info(PTXAS, kernel_ptx(kernel), "sm_80") is ptxas_info(PTXAS, kernel_ptx(kernel), "sm_80")


def test_prefetch_runs_ptxas_ahead_once_and_measure_takes_its_answer(tmp_path):
    tool, runs = _fake_ptxas(tmp_path, 'echo "ptxas info    : Used 17 registers, 360 bytes cmem[0]"')
    counter = RegisterCounter(ptxas=tool)
    kernel = kernel_of(ROOT / "samples" / "matadd.c")
    counter.prefetch(kernel)
    for _ in range(500):                  # the run finishes in the background, measure not called yet
        if runs.exists():
            break
        time.sleep(0.01)
    assert runs.read_text() == "run\n"
    measure = counter.measure(kernel)
    assert (measure.value, measure.method) == (17, "ptxas")
    assert counter.measure(kernel).value == 17
    assert runs.read_text() == "run\n"     # one run for the prefetch and both measures


def test_prefetch_never_raises_and_measure_reports_the_error(tmp_path):
    tool, runs = _fake_ptxas(tmp_path, 'echo "ptxas fatal: broken" >&2; exit 2')
    counter = RegisterCounter(ptxas=tool)
    kernel = kernel_of(ROOT / "samples" / "saxpy.c")
    counter.prefetch(kernel)                 # its failure is kept for the measure
    with pytest.raises(PtxasError, match="broken"):
        counter.measure(kernel)
