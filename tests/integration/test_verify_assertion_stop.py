"""A point outside an assertion the analysis could not use (PK023: `sizeof`) stops the serial C
at the assertion: verify says so, where it said the serial C "crashed (SIGABRT)", which read as
a bug of the tool or of the program (a trial)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from parakern.verify import text, verify_file

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None,
                                reason="parakern verify needs gcc and g++")

PROGRAM = """#include <assert.h>
#include "metafork.h"
void scale(int n, int s, int B, float x[n], float y[n])
{
    assert(s >= 250 * sizeof(float));
    int g = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n)
                    y[i] = s * x[i];
            }
    }
}
"""


def test_a_point_outside_an_unusable_assertion_is_named_as_such(tmp_path):
    (tmp_path / "metafork.h").write_text((ROOT / "samples" / "metafork.h").read_text())
    path = tmp_path / "scale.c"
    path.write_text(PROGRAM)
    result = verify_file(path, points=3)
    report = text(result)
    stopped = [line for line in report.splitlines() if "stopped at an assertion of the program" in line]
    assert stopped, report          # s < 1000 is drawn: the serial C's assert stops it
    assert all("Assertion `s >= 250 * sizeof(float)' failed" in line and "(PK023)" in line for line in stopped)
    assert "crashed (SIGABRT)" not in report
