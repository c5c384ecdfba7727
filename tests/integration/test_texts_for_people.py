"""What the text report and the editor write for people (issue 39): ceilings printed as
ceilings (⌈B0/4⌉, not ⌊B0/4 + 3/4⌋), the limits of a no-fit region in words, and the meaning
of every decision code where the codes are shown (the hover's table, the text report, the
`parakern.strategies` setting), taken from the strategies' own words."""
from __future__ import annotations

import re

import pytest
import sympy

from parakern.reports.document import text
from parakern.strategies.decisions import editor_words
from parakern.symbolic.printing import to_plain
from unit.test_texts_for_people import B0, analysis, ub1


def test_matmul_report_shows_the_coarsened_threads_as_a_ceiling():
    report = text(analysis("matmul"))
    assert "⌊B0/4 + 3/4⌋" not in report and "floor(B0/4 + 3/4)" not in report
    assert "ub1·⌈B0/4⌉ ≤ T" in report and "threads ub1*ceiling(B0/4)" in report
    assert to_plain(ub1 * sympy.floor(B0 / 4 + sympy.Rational(3, 4))) == "ub1*ceiling(B0/4)"


@pytest.mark.parametrize("name", ["jacobi1d", "transpose"])
def test_the_text_report_explains_its_decision_codes(name: str):
    report = text(analysis(name))
    (legend,) = [line for line in report.splitlines() if line.startswith("  decisions: ")]
    words = editor_words()
    shown = {code for line in report.splitlines() if re.match(r"      \(", line)
             for code in re.findall(r"\(\d[ab']?\)", line.strip().split("   ")[0])}
    assert shown and all(f"{code} {words[code]}" in legend for code in shown), (shown, legend)
