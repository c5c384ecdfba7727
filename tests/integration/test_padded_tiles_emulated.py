"""Padded tiles on the CPU emulation (g++): every case of the kernels whose tiles are padded
matches the serial C, a tile indexed with the wrong pitch does not, and the emulation counts
the wavefronts the static analysis gives, padded and unpadded (`parakern profile --emulate`).
The in-process tests: test_padded_tiles.py."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, SAMPLES
from parakern.commands.profile import _differences
from parakern.pipeline import analyze
from parakern.reports.traffic import schedule_traffic, unpadded_traffic
from parakern.verify import text as verify_text
from parakern.verify import verify_file, verify_source
from parakern.verify.emulated_traffic import measure
from unit.test_padded_tiles import FLAT_TRANSPOSE, ROWSUM, TRANSPOSE16

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None,
                                 reason="the CPU emulation needs gcc and g++")]

PROGRAMS = {"transpose16": TRANSPOSE16, "flat_transpose": FLAT_TRANSPOSE,
            "rowsum_float": ROWSUM.replace("TYPE", "float"), "rowsum_double": ROWSUM.replace("TYPE", "double")}


def _written(tmp_path, name: str):
    (tmp_path / "metafork.h").write_text((SAMPLES / "metafork.h").read_text())
    path = tmp_path / f"{name}.c"
    path.write_text(PROGRAMS[name])
    return path


def _check(result) -> None:
    report = verify_text(result)
    assert result.ok, report
    for schedule in result.schedules:
        assert schedule.cases, report
        for case in schedule.cases:
            assert case.points and case.mismatches == 0, report


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_case_of_a_padded_kernel_matches_the_serial_c(name, tmp_path):
    path = _written(tmp_path, name)
    result = verify_source(path.read_text(), str(path), points=3)
    _check(result)
    staged = [case for schedule in result.schedules for case in schedule.cases if "(4a)" in case.decisions]
    assert staged   # the padded tiles ran


def test_a_tile_copied_back_with_its_rows_unpadded_is_caught():
    """The write-back of transpose's case 1 reading c's tile as if its rows were not padded:
    the emulation must see the elements land in the wrong places."""
    def break_it(cu: str) -> str:
        start = cu.index("void transpose_0_case1(")
        end = cu.index("\n}\n", start)
        body = cu[start:end]
        old = "e0 * (2*(B0/2) + 1) + e1"   # the slot of the write-back's element (e0, e1)
        assert body.count(old) == 1   # the mutation must apply
        return cu[:start] + body.replace(old, "e0 * B0 + e1") + cu[end:]

    result = verify_file(ROOT / "samples" / "transpose.c", points=3, transform_cu=break_it)
    assert not result.ok
    cases = {c.index: c for c in result.schedules[0].cases}
    assert cases[1].mismatches >= 1, verify_text(result)
    assert all(cases[k].ok for k in cases if k != 1), verify_text(result)


@functools.lru_cache(maxsize=None)
def _profiled(text: str, name: str):
    """Per case of each schedule: (case, static Traffic, static unpadded, emulated, emulated
    unpadded), at the small point profile --emulate takes."""
    out = []
    for result in analyze(text, name).results:
        point, per_case = schedule_traffic(result, small=True)
        assert point is not None
        befores = [unpadded_traffic(case.kernel, point) for case in result.tree.cases]
        padded = [k for k, b in enumerate(befores, 1) if b is not None]
        measured, unpadded_measured = measure(result, point), measure(result, point, padded, padding=False)
        for k, (case, t, before) in enumerate(zip(result.tree.cases, per_case, befores), 1):
            out.append((case, t, before, measured[k], unpadded_measured.get(k)))
    return out


@pytest.mark.parametrize("name", ["transpose", "transpose16", "flat_transpose", "rowsum_double"])
def test_the_emulation_counts_the_wavefronts_of_padded_and_unpadded_tiles_as_the_analysis(name, tmp_path):
    if name == "transpose":
        text, file = (SAMPLES / "transpose.c").read_text(), str(SAMPLES / "transpose.c")
    else:
        path = _written(tmp_path, name)
        text, file = path.read_text(), str(path)
    cases = _profiled(text, file)
    assert any(before is not None for _, _, before, _, _ in cases)
    for case, t, before, measured, unpadded_measured in cases:
        assert _differences(t, measured) == [], case.decisions
        if before is None:
            assert unpadded_measured is None
            continue
        assert _differences(before, unpadded_measured) == [], case.decisions
        # what padding saves, counted by the emulation: conflicts before, fewer after
        shared = [(r.key, r.kind) for r in t.requests if r.space == "shared"]
        after_waves = sum(measured.requests[k].requests * measured.requests[k].cost for k in shared)
        before_waves = sum(unpadded_measured.requests[k].requests * unpadded_measured.requests[k].cost
                           for k in shared)
        assert after_waves < before_waves, (case.decisions, after_waves, before_waves)


def test_transpose_s_column_takes_one_wavefront_padded_and_eight_unpadded_on_the_emulation():
    cases = _profiled((SAMPLES / "transpose.c").read_text(), str(SAMPLES / "transpose.c"))
    case, t, before, measured, unpadded_measured = cases[0]
    assert "(4a)" in case.decisions
    (key,) = [(r.key, r.kind) for r in t.requests if r.text == "c[j][i]" and r.space == "shared"]
    assert measured.requests[key].cost == 1.0 and unpadded_measured.requests[key].cost == 8.0


def test_profile_emulate_prints_both_and_agrees():
    done = subprocess.run([sys.executable, "-m", "parakern", "profile", str(SAMPLES / "transpose.c"), "--emulate"],
                          capture_output=True, text=True, timeout=900, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "server")})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "emulated unpadded" in done.stdout and "differs" not in done.stdout
    assert "shared: 0.25 bank conflicts per request (1.75 unpadded; rows of c's tile 9 elements apart " \
           "(2*(B0/2) + 1) where 8 hold them)" in done.stdout


def test_the_bench_verifies_a_padded_variant_it_writes_into_its_source():
    """bench/bank_conflicts.py --verify: scale_cols with cache(A) added (its rows padded, 8 -> 9)
    written into a copy of its source and every case run against the serial C."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bank_conflicts.py"), "--verify",
                           str(SAMPLES / "polybench" / "scale_cols.c")],
                          capture_output=True, text=True, timeout=900, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "server")})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("scale_cols") and "scale_cols:0" in x]
    assert "cache(A) added" in line and "verified, 2 cases" in line and "NOT" not in line
    assert "1 of 1 verified" in done.stdout
