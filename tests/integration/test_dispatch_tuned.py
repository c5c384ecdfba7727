"""`<function>_<index>_dispatch_tuned` on the CPU emulation: the first call with some parameter
values runs every case that fits once untimed and 1 to TIMED_RUNS times timed, and then the
fastest once, each run from the arrays as
the call received them (in-place updates such as matmul's c += a * b, Jacobi's sweeps and
polydiv's guarded writes still match the serial C run); later calls with those values launch
one kernel; no device memory is left allocated; without memory for the copies it is the tree's
dispatcher."""
import shutil

import pytest

from integration.test_dispatch_auto import CASES, DEVICE, EMULATED
from parakern import search
from parakern.verify.core import Session
from unit.test_dispatch_tuned import _results, _run, _scripted_shim

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not on PATH")


@pytest.mark.parametrize("name", sorted(CASES))
def test_dispatch_tuned_measures_every_case_once_and_matches_serial_c(name):
    for sid, values, outcome, measured in _run(name):
        assert not outcome.error, f"{sid} at {values}: {outcome.error}"
        assert not outcome.mismatches and not outcome.guards, f"{sid} at {values}: {outcome.mismatches}"
        assert outcome.chosen and all(c >= 1 for c in outcome.chosen), (sid, outcome.chosen)
        if not measured:   # a written array of unknown size (matvec's y): the tree's choice
            assert outcome.chosen == (outcome.expected,) * len(outcome.chosen), (sid, outcome.chosen)


def test_without_memory_for_the_copies_it_is_the_tree_dispatcher():
    for sid, _, outcome, _ in _run("matmul", limit="16"):
        assert not outcome.error and not outcome.mismatches, (sid, outcome.error, outcome.mismatches)
        assert outcome.chosen == (outcome.expected,), (sid, outcome.chosen, outcome.expected)


def test_the_fastest_of_several_timed_runs_decides_not_the_last():
    """A kernel of a few microseconds timed once is mostly the launch's noise (an H200 picked a
    Jacobi step 11 % slower than the fastest): each case runs until its timed runs add up to
    ENOUGH_MS or TIMED_RUNS of them, and its fastest run is what is compared."""
    path, text, results = _results("transpose")
    transform = lambda cu: cu + "\n#include <string>\n" + "\n".join(_scripted_shim(r) for r in results) + "\n"  # noqa: E731
    with Session(text, str(path), transform_cu=transform) as session:
        assert not session.problem, session.problem
        (result,) = results
        data = {k: v for k, v in CASES["transpose"].items() if k in {p.name for p in result.schedule.params}}
        values = {**data, **dict(search.tune(result, data, DEVICE).pick.values)}
        outcome = session.run(result.schedule.id, values, EMULATED)
        assert not outcome.error and not outcome.mismatches, (outcome.error, outcome.mismatches)
