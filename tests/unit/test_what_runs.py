"""The analysis says what runs (reports/runs.py): per GPU profile, the case the default
dispatcher launches at the bench's sizes, from dispatch.choose (the rule the generated C prints),
with the model's predicted time of that launch and the other cases that fit there; the same
answer in optimize's text and JSON, the hover and the lens. jacobi1d at N=4096, B=256, s=1: on an
H100 the model's fastest case (3, no shared memory) is not the tree's (1)."""
import math

import pytest

from conftest import SAMPLES
from parakern import dispatch
from parakern.analysis.facts import substitutions
from parakern.lsp.summarize import summarize
from parakern.lsp.texts import hover_markdown, lens_title
from parakern.lsp.views import view_of
from parakern.machine.devices import get_profile
from parakern.pipeline import analyze
from parakern.reports import document
from parakern.reports.runs import runs, runs_line
from parakern.tuning import time_model

DATA, SWEEP = {"N": [4096]}, {"B": [256], "s": [1]}
GPUS = ("h100", "a100", "t4")


@pytest.fixture(scope="module")
def jacobi():
    return analyze((SAMPLES / "jacobi1d.c").read_text(), "samples/jacobi1d.c")


def test_the_case_launched_is_dispatch_choose_at_the_point_shown(jacobi):
    result = jacobi.results[0]
    found = runs(result, GPUS, DATA, SWEEP)
    assert [r.key for r in found] == list(GPUS)
    for r in found:
        assert dict(r.at)["N"] == 4096 and dict(r.at)["B"] == 256 and dict(r.at)["s"] == 1
        device = time_model.modelled(get_profile(r.key))
        choice = dispatch.choose(result.tree, device, substitutions(result.schedule, dict(r.at), as_run=True))
        assert (r.case, r.fits, r.tree) == (choice.case, choice.fits, choice.tree)
        assert math.isclose(r.predicted_s, choice.prediction(choice.case).time)
        assert r.case in r.fits and r.case not in r.others
        assert r.shared_bytes == (choice.launches[r.case - 1].shared_bytes or 0)
    h100 = found[0]
    assert (h100.case, h100.tree) == (3, 1)    # the model's fastest, not the tree's first
    line = runs_line(h100)
    assert line.startswith("h100: case 3 · ") and "no shared memory" in line
    assert line.endswith("(the tree's order: case 1)") and "also fit: 1, 2" in line


def test_optimize_text_and_json_say_it(jacobi):
    body = document.document(jacobi, GPUS, {"N": [4096]})["schedules"][0]
    assert [r["profile"] for r in body["runs"]] == list(GPUS)
    expected = runs(jacobi.results[0], GPUS, {"N": [4096]})
    assert [(r["case"], r["fits"], r["tree_case"]) for r in body["runs"]] == [(r.case, list(r.fits), r.tree)
                                                                             for r in expected]
    text = document.text(jacobi, GPUS, {"N": [4096]})
    assert "runs (jacobi1d_0_dispatch: the time model's fastest case that fits" in text
    for r in expected:
        assert f"    {runs_line(r)}" in text


def test_the_hover_and_the_lens_lead_with_it_and_agree(jacobi):
    result = jacobi.results[0]
    summary = summarize(result, "k", 0, GPUS, sizes={"data": DATA, "sweep": SWEEP})
    expected = runs(result, GPUS, DATA, SWEEP)
    value = hover_markdown(view_of(result.schedule), summary, "meta_schedule")
    blocks = value.split("\n\n")
    assert blocks[1].startswith("**Runs** (`jacobi1d_0_dispatch`"), value
    lines = blocks[2].splitlines()
    assert [line.split(":")[0] for line in lines] == [f"- **{k.upper()}**" for k in GPUS]
    for line, r in zip(lines, expected):
        assert line.startswith(f"- **{r.key.upper()}**: case {r.case} · ")
    # one story: no case is called theoretical when a known GPU's limits let it run
    assert "**Theoretical**" not in value and "no known GPU picks it" not in value
    lens = lens_title(summary)
    assert lens.startswith("runs case ") and lens.endswith("· 3 cases")
    for r in expected:
        assert f"case {r.case} on " in lens and r.key in lens.split(f"case {r.case} on ")[1].split(";")[0]
