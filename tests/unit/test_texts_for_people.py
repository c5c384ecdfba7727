"""What the text report and the editor write for people (issue 39): ceilings printed as
ceilings (⌈B0/4⌉, not ⌊B0/4 + 3/4⌋), the limits of a no-fit region in words, and the meaning
of every decision code where the codes are shown (the hover's table, the text report, the
`parakern.strategies` setting), taken from the strategies' own words."""
from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
import sympy

from parakern.lsp.summarize import summarize
from parakern.lsp.texts import hover_markdown, plain_text, tree_markdown
from parakern.lsp.views import view_of
from parakern.pipeline import Options, analyze
from parakern.reports.document import text
from parakern.strategies.decisions import editor_words, setting_markdown, setting_words, strategy_codes
from parakern.symbolic.printing import to_c, to_math, with_ceilings

ROOT = Path(__file__).resolve().parents[2]
B0, ub1, n, B, s = sympy.symbols("B0 ub1 n B s", integer=True, nonnegative=True)


def analysis(name: str):
    return analyze((ROOT / "samples" / f"{name}.c").read_text(), f"samples/{name}.c", Options())


@pytest.mark.parametrize("expr, math", [
    (ub1 * sympy.floor(B0 / 4 + sympy.Rational(3, 4)), "ub1·⌈B0/4⌉"),
    (sympy.floor((n + B - 1) / B), "⌈n/B⌉"),
    (sympy.floor((B0 * ub1 + 127) / 128), "⌈B0·ub1/128⌉"),
    (sympy.floor(n / B), "⌊n/B⌋"),                        # a floor that is one stays one
    (sympy.floor(n / 4), "⌊n/4⌋"),
    (sympy.floor((n - 2) / (4 * B)), "⌊(n - 2)/(4·B)⌋"),
])
def test_ceilings_are_printed_as_ceilings_and_mean_the_same(expr, math):
    assert to_math(expr) == math
    rewritten = with_ceilings(expr)
    names = sorted(expr.free_symbols, key=str)
    for values in itertools.product(range(0, 13), repeat=len(names)):   # exactly, on the integers of H1
        point = dict(zip(names, values))
        if expr.xreplace(point).is_Integer:                            # not a division by zero
            assert rewritten.xreplace(point) == expr.xreplace(point), point
    assert to_c(rewritten) == to_c(expr)                            # the C is the same


def test_no_fit_regions_name_their_limits_in_words():
    result = analysis("jacobi1d")
    report = text(result)
    assert "(launch limits, shared memory)" in report
    assert not re.search(r"\((\w+, )*(shared_memory|launch)(, \w+)*\)", report), report
    (schedule,) = result.results
    summary = summarize(schedule, "k", 0, ())
    assert ("Z < 8·B·s + 8 ∧ 65536 ≤ s", "launch limits, shared memory") in summary.uncovered


def _decision_codes(markdown: str) -> set:
    return set(re.findall(r"\(\d[ab']?\)", markdown))


@pytest.mark.parametrize("name", ["jacobi1d", "matmul"])
def test_every_decision_code_the_hover_shows_is_explained_there(name: str):
    (result,) = analysis(name).results
    summary = summarize(result, "k", 0, ("h100",), tune=False)
    view = view_of(result.schedule, "k")
    words = editor_words()
    for markdown in (hover_markdown(view, summary, "meta_schedule"), tree_markdown(result.schedule.id, summary)):
        shown = {d for case in summary.cases for d in case.decisions}
        legend = markdown[markdown.index("Decisions:"):].split("\n", 1)[0]
        for code in shown:
            assert f"{code} {words[code]}" in legend, (code, legend)
        assert "Decisions: (1) registers as compiled" in plain_text(markdown)


def test_the_strategies_setting_says_what_each_code_does():
    package = json.loads((ROOT / "vscode-extension" / "package.json").read_text())
    setting = package["contributes"]["configuration"]["properties"]["parakern.strategies"]
    assert setting["items"]["enumDescriptions"] == list(setting_words().values())
    assert setting["markdownDescription"] == setting_markdown()
    words = editor_words()
    for code in strategy_codes():
        assert f"`{code}` {words[code]}" in setting["markdownDescription"]
    for kept in ("(1)", "(3a)", "(4a)"):    # the codes a case shows where a strategy was not applied
        assert f"{kept} {words[kept]}" in setting["markdownDescription"]

