"""The comparison of floating results with the serial C, as a GPU makes it necessary.

Found on an H100 (docs/bench): matmul at n = 2048 gave 126 of 4M coefficients that
differed from gcc's by ~1.2e-5, coefficients near zero where the 2048 products cancel. The
GPU fuses each a * b + c into one FMA, gcc does not, so the difference is in the last bits of
the *terms* (size ~1), not of the result (~0.03). The rule is therefore relative to the
array's magnitude. These tests model both roundings exactly (numpy, float32), check that the
rule accepts FMA rounding where the per-element rule did not, and still catches a kernel that
drops one term; and that the CPU emulation really compiles with contraction, as nvcc does.
"""
from __future__ import annotations

import shutil
import subprocess
import sys

import numpy
import pytest

from parakern.verify import text, verify_file
from parakern.verify.build import CXXFLAGS, FMA_FLAGS
from parakern.verify.fma import host_has_fma
from unit.test_tolerance import (  # fixtures, found by their names
    ADI,
    FUSED_PROBE,
    _per_element_rule,
    needs_fma,
    products,  # noqa: F401
)


def test_fma_rounding_differs_beyond_the_per_element_rule(products):
    _, _, expected, fused = products
    assert not numpy.array_equal(expected, fused)
    assert not _per_element_rule(expected, fused).all(), "the cancellation no longer shows the old rule's flaw"


@pytest.mark.skipif(shutil.which("g++") is None or not host_has_fma(), reason="needs g++ on an FMA host")
def test_emulation_flags_fuse_like_nvcc(tmp_path):
    """(1 + 2^-12)^2 - (1 + 2^-11) is 2^-24 fused, 0 when the product is rounded first."""
    src = tmp_path / "p.cpp"
    src.write_text(FUSED_PROBE)
    subprocess.run(["g++", *[f for f in CXXFLAGS if f not in ("-fPIC", "-pthread")], *FMA_FLAGS, str(src), "-o",
                    str(tmp_path / "p")], check=True)
    fused = float(subprocess.run([str(tmp_path / "p")], capture_output=True, text=True, check=True).stdout)
    assert fused == 2.0 ** -24


@needs_fma
def test_a_double_recurrence_verifies_within_its_own_rounding_spread():
    """ADI's tridiagonal solves amplify rounding: the GPU version differs from gcc's by ~3e-12
    (FMA contraction), above the fixed 1e-12, while the serial C differs from itself built
    with contraction by more. Before, every case failed on it."""
    result = verify_file(ADI, points=1)
    report = text(result)
    assert result.ok, report
    points = [p for s in result.schedules for c in s.cases for p in c.points]
    assert points and any(p.bounds for p in points), report     # the spread set the bound somewhere
    for p in points:
        for bound in p.bounds.values():
            assert bound["allowed"] == 2 * bound["spread"] and bound["allowed"] > 1e-12
    assert "compared within twice the serial C's own spread" in report


@needs_fma
@pytest.mark.parametrize("wrong", [
    ("(1.0 + 2.0 * d)", "(1.0 + 2.0 * d * (1.0 + 1e-9))"),      # a coefficient off by 1e-9
    ("- a * ", "- 0.5 * a * "),                                  # half of a term
], ids=["1e-9", "half-term"])
def test_a_wrong_recurrence_still_fails(wrong):
    """The bound is the computation's own spread (~1e-11 here), not a licence: a kernel that
    is wrong by 1e-9 relative fails."""
    old, new = wrong

    def break_it(cu: str) -> str:
        assert old in cu
        return cu.replace(old, new)

    result = verify_file(ADI, points=1, transform_cu=break_it)
    assert not result.ok
    failed = [p for c in result.schedules[0].cases for p in c.points if p.mismatches]
    assert failed, text(result)
    m = failed[0].mismatches[0]
    assert abs(m["got"] - m["expected"]) > m["allowed"]


@needs_fma
def test_a_tolerance_given_replaces_the_derived_bound():
    result = verify_file(ADI, points=1, tolerance={"float": 1e-5, "double": 1e-14})
    assert not result.ok and "1e-14 (--tolerance)" in text(result)
    assert not any(p.bounds for s in result.schedules for c in s.cases for p in c.points)


@pytest.mark.parametrize("given", ["x", "half=1e-3", "1e-3,2e-3", "-1", "inf", "double="])
def test_tolerance_option_refuses_what_it_cannot_read(given):
    done = subprocess.run([sys.executable, "-m", "parakern", "verify", str(ADI), "--tolerance", given],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "argument --tolerance: " in done.stderr and "Traceback" not in done.stderr
