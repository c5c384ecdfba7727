"""tune on a function whose schedules share a tuned parameter (one argument, one value): the
common values that make the sum of their predicted times least, checked by brute force."""
from __future__ import annotations

import itertools
import json

from conftest import ROOT
from parakern.commands import cli
from parakern.machine.devices import get_profile
from parakern.pipeline import analyze
from parakern import search
from parakern.tuning import time_model

THREE_MM = "samples/polybench/three_mm.c"
DATA = {"ni": 1000, "nj": 300, "nk": 800, "nl": 2000, "nm": 100}   # sizes where the three picks differ


def _tunings():
    device = time_model.modelled(get_profile("h100"))
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


# ------------------------------------------------------------------ tune's inputs (issue 35, point 6)

def _write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


TWO_SIZES = """#include <assert.h>

void two(int n, int m, int B, float a[n], float b[m])
{
    assert(m % B == 0 && m >= 64);
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                a[i * B + j] = 1.0f;
    }
    meta_schedule {
        meta_for (int i = 0; i < m / B; i++)
            meta_for (int j = 0; j < B; j++)
                b[i * B + j] = 2.0f;
    }
}
"""


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


def test_the_hover_judges_another_schedules_size_at_the_default_size():
    from parakern.lsp.summarize import tune_info
    first = next(r for r in analyze(TWO_SIZES, "two.c").results if r.schedule.index == 0)
    info = tune_info(first, "h100")
    assert info.configuration.startswith("case 1: B=") and "m=1024" in info.data


COLUMNS_TWICE = """void colsum2(int m, int n, int B, int a[m][n], int c[m][n], int d[m][n])
{
    int g = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int j = b * B + t;
                if (j < n) {
                    int acc = 0;
                    for (int i = 0; i < m; i++) {
                        acc += a[i][j];
                        c[i][j] = acc;
                    }
                }
            }
    }
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int j = b * B + t;
                if (j < n) {
                    int acc = 0;
                    for (int i = m - 1; i >= 0; i--) {
                        acc += a[i][j];
                        d[i][j] = acc;
                    }
                }
            }
    }
}
"""


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


GRANULAR_SECOND = """#include <assert.h>

void pair(int n, int B, int s, float x[n], float y[n], float z[n])
{
    assert(n % (B * s) == 0);
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                y[i * B + j] = 2.0f * x[i * B + j];
    }
    meta_schedule {
        meta_for (int i = 0; i < n / (B * s); i++)
            meta_for (int j = 0; j < B; j++)
                for (int k = 0; k < s; k++) {
                    int p = i * s * B + k * B + j;
                    z[p] = y[p] + 1.0f;
                }
    }
}
"""


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
