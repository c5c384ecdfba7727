"""tune on a function whose schedules share a tuned parameter (one argument, one value): the
common values that make the sum of their predicted times least, checked by brute force."""
from __future__ import annotations

import itertools
import json

from conftest import ROOT
from parakern import cli
from parakern.devices import get_profile
from parakern.pipeline import analyze
from parakern.tuning import model, search

THREE_MM = "samples/polybench/three_mm.c"
DATA = {"ni": 1000, "nj": 300, "nk": 800, "nl": 2000, "nm": 100}   # sizes where the three picks differ


def _tunings():
    device = model.model_device(get_profile("h100"), "h100")
    out = []
    for r in analyze((ROOT / THREE_MM).read_text(), THREE_MM).results:
        mine = {n: v for n, v in DATA.items() if n in {p.name for p in r.schedule.params}}
        out.append((r.schedule.function, search.tune(r, mine, device)))
    return out


def test_the_shared_choice_is_the_least_total_over_common_values():
    tunings = _tunings()
    (choice,) = search.shared_choices(tunings)
    assert choice.function == "three_mm" and choice.shared == ("B0", "B1")
    values = dict(choice.values)
    # every schedule runs with the chosen values, at its fastest configuration with them
    for (_, t), (schedule, c) in zip(tunings, choice.picks):
        assert schedule == t.schedule and dict(c.values) == values
        assert c is next(x for x in t.configurations if dict(x.values) == values)
    # brute force: no common (B0, B1) gives a smaller sum
    best = min(
        sum(min(c.time for c in t.configurations if dict(c.values) == {"B0": b0, "B1": b1}) for _, t in tunings)
        for b0, b1 in itertools.product(*({dict(c.values)[n] for _, t in tunings for c in t.configurations}
                                          for n in ("B0", "B1")))
        if all(any(dict(c.values) == {"B0": b0, "B1": b1} for c in t.configurations) for _, t in tunings))
    assert choice.time == best
    # here the schedules' own picks disagree: their sum is a bound the function cannot reach
    assert len({t.pick.values for _, t in tunings}) > 1 and choice.alone < choice.time and not choice.agrees()


def test_tune_prints_and_writes_the_shared_choice(capsys):
    args = ["tune", str(ROOT / THREE_MM), "--profile", "h100"] + [a for n, v in DATA.items() for a in ("--data", f"{n}={v}")]
    assert cli.main(args) == 0
    line, hint = capsys.readouterr().out.splitlines()[-2:]
    (choice,) = search.shared_choices(_tunings())
    values = " ".join(f"{n}={v}" for n, v in choice.values)
    assert line.startswith(f"three_mm: its schedules share B0, B1 (one argument each): call it with {values}: ")
    assert line.endswith("but their values differ and the function takes one")
    assert hint == f"  compile it: parakern emit {ROOT / THREE_MM} --fix " + ",".join(f"{n}={v}" for n, v in choice.values)
    assert cli.main(args + ["--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["functions"]
    assert entry["parameters"] == dict(choice.values) and len(entry["schedules"]) == 3
    assert abs(entry["predicted_s"] - choice.time) < 1e-15
