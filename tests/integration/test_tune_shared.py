"""tune on a function whose schedules share a tuned parameter (one argument, one value): the
common values that make the sum of their predicted times least, checked by brute force."""
from __future__ import annotations

import itertools
import json

from conftest import ROOT
from parakern import search
from parakern.commands import cli
from parakern.machine.devices import get_profile
from parakern.pipeline import analyze
from parakern.tuning import time_model
from unit.test_tune_shared import COLUMNS_TWICE, DATA, GRANULAR_SECOND, THREE_MM, TWO_SIZES, _tunings, _write


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


def test_a_value_given_for_another_schedules_parameter_is_what_the_asserts_read(tmp_path, capsys):
    """two:0 does not read m, its function's assert does: --data m=2048 was dropped for it and
    the assert judged with m = 1 (every candidate 'violates m % B == 0, with m taken as 1')."""
    path = _write(tmp_path, "two.c", TWO_SIZES)
    assert cli.main(["tune", path, "--profile", "h100", "--data", "n=4096", "--data", "m=2048"]) == 0
    captured = capsys.readouterr()
    assert "taken as 1" not in captured.out + captured.err
    assert "two:0 on h100 (NVIDIA H100 SXM5 80GB) at n=4096: tuned B; 11 candidates, 11 feasible" in captured.out
    # and judged with the value given: 96 is a multiple of 32, not of 64
    assert cli.main(["tune", path, "--profile", "h100", "--data", "n=4096", "--data", "m=96", "--json",
                     "--top", "20"]) == 0
    doc = json.loads(capsys.readouterr().out)
    first = doc["schedules"][0]
    assert {c["parameters"]["B"] for c in first["configurations"]} == {1, 2, 4, 8, 16, 32}
    assert first["rejected"] and all("m % B == 0" in r["why"] and "taken as" not in r["why"] for r in first["rejected"])


def test_the_common_values_break_ties_as_each_schedule_does():
    """A thread per column: every B predicts the same time in both schedules; each one's pick has
    full warps (B = 32), the function's common value was the first candidate, 1-thread blocks."""
    device = time_model.modelled(get_profile("h100"))
    tunings = [(r.schedule.function, search.tune(r, {"m": 1024, "n": 4096}, device))
               for r in analyze(COLUMNS_TWICE, "colsum2.c").results]
    assert all(len({round(c.time, 12) for c in t.configurations}) == 1 for _, t in tunings)   # the times tie
    (choice,) = search.shared_choices(tunings)
    assert dict(choice.values) == {"B": 32} == dict(tunings[0][1].pick.values) == dict(tunings[1][1].pick.values)
    assert choice.agrees()


def test_the_functions_compile_line_keeps_what_one_schedule_tunes_alone(tmp_path, capsys):
    """pair's schedules share B; only the second tunes s: `compile it` gave B alone, and emit
    --fix then compiled no instance of the second schedule's kernel at s."""
    path = _write(tmp_path, "pair.c", GRANULAR_SECOND)
    assert cli.main(["tune", path, "--profile", "h100", "--data", "n=1048576"]) == 0
    line, hint = capsys.readouterr().out.splitlines()[-2:]
    assert line.startswith("pair: its schedules share B (one argument each): call it with B=")
    device = time_model.modelled(get_profile("h100"))
    tunings = [(r.schedule.function, search.tune(r, {"n": 1048576}, device))
               for r in analyze(GRANULAR_SECOND, "pair.c").results]
    (choice,) = search.shared_choices(tunings)
    second = dict(choice.picks[1][1].values)
    assert set(second) == {"B", "s"}
    assert hint == f"  compile it: parakern emit {path} --fix B={second['B']},s={second['s']}"
    assert cli.main(["tune", path, "--profile", "h100", "--data", "n=1048576", "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["functions"]
    assert entry["parameters"] == {"B": second["B"]} and entry["compile_with"] == second
