"""The language server's pure parts, without a server: the dispatcher edit, masking of
generated regions, cache keys, settings, texts, and position conversion."""
from __future__ import annotations

from conftest import SAMPLES
from parakern.frontend import analyze_source
from parakern.lsp.settings import Settings, section_of, update
from parakern.lsp.views import view_of
from unit.test_lsp_units import _schedule


def test_settings_validation():
    settings, warnings = update(Settings(), {"target": "sm_90", "gpuProfiles": ["H100", "nope"],
                                              "strategies": ["3b", "(4b)", "x"], "occupancy": "a100",
                                              "caseDiagnostics": False, "timeLimitSeconds": 5,
                                              "bench": {"data": {"N": 4096}, "sweep": {"B": [64, 128]}},
                                              "testFault": {"mode": "crash"}})
    assert settings.target == "sm_90" and settings.gpu_profiles == ("h100",)
    assert settings.strategies == ("(3b)", "(4b)") and settings.occupancy == "a100"
    assert settings.case_diagnostics is False and settings.time_limit_seconds == 5.0
    assert settings.bench == {"data": {"N": 4096}, "sweep": {"B": [64, 128]}}
    assert settings.test_fault is None            # only with PARAKERN_LSP_TEST_HOOKS=1
    assert len(warnings) == 2 and "nope" in warnings[0] and "'x'" in warnings[1]
    same, warnings = update(settings, {"target": "sm_99", "timeLimitSeconds": -1, "caseTrees": "yes"})
    assert same == settings and len(warnings) == 3
    for bad, why in [({"sizes": [1, 2]}, "unknown key 'sizes'"), ({"sweep": {"B": [64, -1]}}, "sweep.B must be"),
                     ({"repeat": 0}, "repeat must be a positive integer"), ({"data": [4096]}, "data must be an object"),
                     ({"device": -1}, "device must be a GPU index, an integer >= 0")]:
        kept, warnings = update(settings, {"bench": bad})
        assert kept.bench == settings.bench and len(warnings) == 1 and why in warnings[0], warnings
    assert section_of({"parakern": {"target": "sm_80"}}) == {"target": "sm_80"}
    assert section_of({"target": "sm_80"}) == {"target": "sm_80"}
    assert section_of(None) is None and section_of({"other": 1}) is None


def test_hover_says_why_a_strategy_does_not_apply():
    """The reasons the pipeline gives (pipeline.ScheduleResult.not_applied) reach the hover and
    the case-tree page, from the summary the worker computes."""
    from parakern.lsp.summarize import summarize
    from parakern.lsp.texts import hover_markdown, tree_markdown
    from parakern.pipeline import analyze
    text = (SAMPLES / "matvec.c").read_text()
    (result,) = analyze(text, "matvec.c").results
    summary = summarize(result, "k", 0, ())
    assert dict(summary.not_applied)["(3b)"].startswith("granularity not reduced: iterations of loop j share data")
    (view,) = [view_of(s, "k") for s in analyze_source(text, "matvec.c").schedules]
    hover = hover_markdown(view, summary, "meta_schedule")
    assert "**Not applied**" in hover and "- (3b) granularity not reduced: iterations of loop j" in hover
    assert "**Not applied**" in tree_markdown(view.id, summary)


def test_the_cases_first_then_the_rest_as_a_whole_analysis_gives_them():
    """worker.cases shows the cases of a tree stopped at them (pipeline, complete=False);
    worker.analyse completes that result: the same summary as one whole analysis."""
    import dataclasses
    import re

    from parakern.lsp.summarize import summarize
    from parakern.lsp.texts import case_diagnostics, hover_markdown, lens_title
    from parakern.pipeline import completed, optimize_schedule
    profiles = ("h100", "a100", "t4")
    for name in ("jacobi1d", "transpose"):
        text = (SAMPLES / f"{name}.c").read_text()
        schedule = _schedule(text, f"{name}.c")
        partial = optimize_schedule(schedule, complete=False)
        assert not partial.tree.complete and partial.tree.uncovered == ()
        first = summarize(partial, "k", 0, profiles, tune=False)
        whole = summarize(optimize_schedule(schedule), "k", 0, profiles, tune=False)
        rest = summarize(completed(partial), "k", 0, profiles, tune=False)
        assert not first.complete and whole.complete and rest.complete
        keyword = (0, 0, 0, 1)
        # the case diagnostics the editor shows do not change when the rest arrives
        assert case_diagnostics(first, keyword) == case_diagnostics(whole, keyword)
        assert [c.condition for c in first.cases] == [c.condition for c in whole.cases]
        def timeless(summary):    # the tree's own time is printed in its text
            return dataclasses.replace(summary, seconds=0, tree_text=re.sub(r"[\d.]+ s$", "", summary.tree_text))
        assert timeless(rest) == timeless(whole)
        assert whole.profiles and not first.profiles and whole.coverage == "proved"
        (view,) = [view_of(s, "k") for s in analyze_source(text, f"{name}.c").schedules]
        hover = hover_markdown(view, first, "meta_schedule")
        assert "which case runs on which GPU, where no kernel fits, memory traffic: analysing…" in hover
        assert "Theoretical" not in hover and "analysing" not in hover_markdown(view, whole, "meta_schedule")
        assert lens_title(first).startswith(f"{len(first.cases)} case")
