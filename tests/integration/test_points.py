"""Parameter points of verify (verify/points.py): where the facts rule out the small bounds of
z3's fallback, the bounds give way to the least values the facts allow."""
from __future__ import annotations

import pytest

from parakern.pipeline import analyze
from parakern.verify import points
from parakern.verify.points import build_model, find_points
from unit.test_points import (  # fixtures, found by their names
    STAGED,
    staged,  # noqa: F401
)


def test_z3_bounds_rise_to_the_least_block_the_facts_allow(staged):
    assert len(staged.tree.cases) == 2
    assert points._tops(staged, 0) == {"N": 64, "Bx": 32, "By": 16}   # Bx >= 32: 16 gives way to 32
    assert points._tops(staged, 1) == {"N": 64, "Bx": 32, "By": 16}


@pytest.mark.parametrize("k", [0, 1])
def test_every_case_of_a_block_asserted_a_warp_wide_has_points(staged, k):
    found = find_points(staged, k, 6, seed=0)
    assert len(found) == 6
    for p in found:
        assert p.case == k + 1 and p.expected == k + 1
        assert p.values["Bx"] >= 32 and (p.values["N"] - 2) % p.values["Bx"] == 0
        assert points._complete(staged, p.values) is not None       # the facts hold
    assert len({tuple(p.values.values()) for p in found}) == 6
    again = find_points(staged, k, 6, seed=0)                # seeded: the same points
    assert [(p.values, p.device) for p in again] == [(p.values, p.device) for p in found]


def test_small_bounds_are_kept_where_the_facts_allow_them():
    text = STAGED.replace("Bx >= 32 && Bx * By <= 256 && (N - 2) % Bx == 0", "Bx * By <= 256")
    result = analyze(text, "st.c").results[0]
    model = build_model(result.schedule, result.tree, {"N", "Bx", "By", "a", "b"})
    assert points._tops(model, 0) == {"N": 64, "Bx": 16, "By": 16}


def test_sizes_the_facts_require_are_found_and_too_large_ones_not_emulated():
    """N >= 2000: the least values one at a time are N = 2000 (1998 = 54 * 37), Bx = 32, By = 16,
    together impossible (1998 % 32 != 0), so all double. Two arrays of 2000 x 2000 or more are
    more than the emulation runs (MAX_ELEMENTS): no point rather than an expensive one."""
    text = STAGED.replace("Bx >= 32 && ", "Bx >= 32 && N >= 2000 && ")
    result = analyze(text, "st.c").results[0]
    model = build_model(result.schedule, result.tree, {"N", "Bx", "By", "a", "b"})
    assert points._tops(model, 0) == {"N": 4000, "Bx": 64, "By": 32}
    assert find_points(model, 0, 3) == []
