"""Whether a register tile's threads communicate between steps of the serial loops (a barrier
after each step) is asked of the schedule without the tile: the same answer, for the tiled
body's TM x TN copies of each access without a z3 question per pair of them."""
from __future__ import annotations

import pytest

from conftest import SAMPLES
from parakern.analysis import dependence
from parakern.frontend import analyze_file
from parakern.kernel import Kernel
from parakern.strategies.register_tiles import RegisterTiles, SmallerTiles


@pytest.mark.parametrize("name", ["matmul.c", "polybench/gemm.c", "polybench/two_mm.c"])
def test_a_tiled_kernel_communicates_where_the_untiled_one_does_asked_of_the_untiled_schedule(name, monkeypatch):
    real = dependence.threads_communicate
    asked = []
    monkeypatch.setattr(dependence, "threads_communicate", lambda s, *a: asked.append(s) or real(s, *a))
    for schedule in analyze_file(SAMPLES / name).schedules:
        plain = Kernel.initial(schedule)
        tiled = RegisterTiles().apply(plain)
        smaller = SmallerTiles(1).apply(tiled)
        answer = real(schedule)
        asked.clear()
        assert [dependence.communicates(k) for k in (plain, tiled, smaller)] == [answer] * 3
        assert asked == [schedule] * 3
