"""verify and a meta_for whose independence the analysis could not prove (PK021): runs without
a race at some points show nothing for the others, so the schedule is not verified, and more
points are drawn to look for a race."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from parakern.verify import text, verify_file
from parakern.verify.results import UNPROVED_DRAWS

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None,
                                reason="parakern verify needs gcc and g++")

# j -> 5j + 1 (mod n) is one-to-one where 5 does not divide n (the assert): no race at any size,
# which z3 cannot see through the loop that scrambles j
SCRAMBLE = """#include <assert.h>
#include "metafork.h"

void scramble(int n, int B, float a[n], float out[n])
{
    assert(n % 5 == 1);
    int g = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n) {
                    int j = i;
                    for (int k = 0; k < 3; k++)
                        j = (j * 5 + 1) % n;
                    out[j] = a[i];
                }
            }
    }
}
"""

# the same scramble without the assert: two iterations write one element where 5 divides n
RACY = SCRAMBLE.replace("    assert(n % 5 == 1);\n", "")


def _write(tmp_path, name: str, source: str):
    (tmp_path / "metafork.h").write_text((ROOT / "samples" / "metafork.h").read_text())
    path = tmp_path / name
    path.write_text(source)
    return path


def test_a_schedule_whose_independence_is_unproved_is_not_verified(tmp_path):
    result = verify_file(_write(tmp_path, "scramble.c", SCRAMBLE), points=2)
    (schedule,) = result.schedules
    # every point matched and no race was seen: the verdict still cannot be "verified"
    assert all(p.ok for c in schedule.cases for p in c.points), text(result)
    assert schedule.unproved and schedule.unproved[0].startswith("9:9: independence of this meta_for")
    assert not schedule.ok and not result.ok
    report = text(result)
    assert report.startswith(f"{result.file}: NOT verified") and "(PK021)" in report
    assert "9:9: independence of this meta_for could not be proved" in report
    assert sum(len(c.points) for c in schedule.cases) == 2 * UNPROVED_DRAWS
    assert result.as_dict()["schedules"][0]["independence_unproved"] == list(schedule.unproved)


def test_the_extra_points_find_the_race_three_points_missed(tmp_path):
    """At the default seed, 3 points drew no n that 5 divides; 4 times as many do."""
    result = verify_file(_write(tmp_path, "racy.c", RACY), points=3)
    races = [p.race for c in result.schedules[0].cases for p in c.points if p.race]
    assert races and races[0]["array"] == "out", text(result)
    assert not result.ok


ZERO = """#include <assert.h>
#include "metafork.h"

void zero_block(int n, int B0, float a[n], float o[n])
{
    assert(B0 == 0);
    meta_schedule {
        meta_for (int b = 0; b < 8; b++)
            meta_for (int t = 0; t < B0; t++) {
                int i = b * B0 + t;
                if (i < n) o[i] = 2.0f * a[i];
            }
    }
}
"""


def test_a_schedule_without_a_case_says_why_once(tmp_path):
    """Contradictory facts (PK025, a warning): the reason, not 'the case tree has no case'."""
    report = text(verify_file(_write(tmp_path, "zero.c", ZERO), points=1))
    assert "not verified: no case tree: " in report and "these facts cannot hold together" in report
    assert "[PK025]" in report and "the case tree has no case" not in report
