"""verify and the default dispatcher: every case is still forced (through the tree's dispatcher,
steered by the emulated device's limits), and the default dispatcher (the time model's fastest
case that fits), called on an emulated H100 and T4 (parakern_cpu_set_profile: their SMs, clocks,
bandwidth, L2 and limits), launches the case dispatch.choose computes. jacobi1d: on an H100 its
default and its tree's order disagree at many points, so the two dispatchers are told apart.
Built with g++ on the CPU emulation."""
import dataclasses
import shutil

import pytest

from conftest import SAMPLES
from parakern import dispatch
from parakern.machine.devices import get_profile
from parakern.verify import Session, text
from parakern.verify.points import DEFAULT, TREE, Point, device

pytestmark = pytest.mark.skipif(shutil.which("g++") is None or shutil.which("gcc") is None,
                                reason="g++ and gcc are needed to run kernels on the CPU emulation")

ID = "jacobi1d:0"
DIFFERS = {"N": 4096, "T": 2, "s": 1, "B": 256}   # H100: the default launches case 3, the tree case 1


def _gpu(key: str):
    profile = get_profile(key)
    return device(profile.R_B, profile.Z, profile.T, base=profile)


@pytest.fixture(scope="module")
def session():
    with Session((SAMPLES / "jacobi1d.c").read_text(), "samples/jacobi1d.c", races=False) as s:
        yield s


def test_verify_runs_every_case_and_checks_the_default_on_h100_and_t4(session):
    result = session.verify(points=1)
    (schedule,) = result.schedules
    assert [c.ok for c in schedule.cases] == [True] * 3       # every case forced and right
    assert {p.origin for p in schedule.defaults} == {"default on h100", "default on t4"}
    tree = session.targets[ID].result.tree
    for p in schedule.defaults:
        expected = dispatch.choose(tree, _gpu(p.origin.removeprefix("default on ")), p.values).case
        assert p.ok and p.expected == expected and set(p.chosen) == {expected}, p
    assert schedule.ok and result.ok
    assert "the default dispatcher (the time model's fastest case) on emulated GPUs" in text(result)


def test_the_default_and_the_tree_dispatcher_launch_their_own_choice(session):
    tree = session.targets[ID].result.tree
    h100 = _gpu("h100")
    choice = dispatch.choose(tree, h100, DIFFERS)
    assert choice.case != choice.tree          # the point tells them apart
    default = session.run(ID, DIFFERS, h100, rule=DEFAULT)
    by_tree = session.run(ID, DIFFERS, h100, rule=TREE)
    assert default.ok and set(default.chosen) == {choice.case}
    assert by_tree.ok and set(by_tree.chosen) == {choice.tree}


def test_a_rule_other_than_the_c_fails_the_check(session, monkeypatch):
    """The check can fail: where the Python rule named the tree's case, the default dispatcher's
    launch (the model's fastest) is a wrong case. jacobi1d's time steps run in the host code, so
    the case each call must return is computed from what it received, with the rule."""
    choose = dispatch.choose
    h100 = _gpu("h100")
    choice = choose(session.targets[ID].result.tree, h100, DIFFERS)
    monkeypatch.setattr(dispatch, "choose", lambda *a, **k: dataclasses.replace(choose(*a, **k), case=choice.tree))
    (wrong,) = session.run_points(ID, [Point(choice.tree, dict(DIFFERS), h100, choice.tree, False, "given",
                                             rule=DEFAULT)])
    assert set(wrong.chosen) == {choice.case} and set(wrong.expected_calls) == {choice.tree}
    assert not wrong.right_case and not wrong.ok
