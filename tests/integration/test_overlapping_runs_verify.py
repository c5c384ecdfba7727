"""The decimating filter whose input is staged as the span of its overlapping runs
(analysis/staging._spanned): every case, the staged ones included, runs on the emulation and
matches the serial C."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from parakern.verify import text, verify_file
from unit.test_overlapping_runs import DECIMATE

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None,
                                reason="parakern verify needs gcc and g++")


def test_a_decimating_filter_staged_as_its_span_matches_the_serial_c(tmp_path):
    (tmp_path / "metafork.h").write_text((ROOT / "samples" / "metafork.h").read_text())
    path = tmp_path / "decimate.c"
    path.write_text(DECIMATE)
    result = verify_file(path, points=2)
    (schedule,) = result.schedules
    staged = [c for c in schedule.cases if "(4a)" in c.decisions]
    assert staged and all(c.points and all(p.ok for p in c.points) for c in staged), text(result)
    assert result.ok, text(result)
