"""(5) Register accumulators: where they apply, the interchange that enables them (proved by
z3, refused where it would reorder a dependence), the guard of a loop that may not run, and
the semantics, by running every case on the CPU emulation against the serial C."""
from __future__ import annotations

import pytest

from parakern.pipeline import Options, analyze
from parakern.verify import text as verify_text
from parakern.verify import verify_source
from unit.test_accumulate import ROOT, ROWS


def test_matmul_cases_name_the_decision():
    (result,) = analyze((ROOT / "samples" / "matmul.c").read_text(), "matmul.c").results
    assert all("(5)" in case.decisions for case in result.tree.cases)
    (off,) = analyze((ROOT / "samples" / "matmul.c").read_text(), "matmul.c",
                     Options(strategies=("(1')", "(2)", "(3b)", "(4b)"))).results
    assert all("(5)" not in case.decisions for case in off.tree.cases)


@pytest.mark.parametrize("source", [ROWS, (ROOT / "samples" / "matmul.c").read_text()], ids=["rows", "matmul"])
def test_accumulated_kernels_match_the_serial_c(source, tmp_path):
    (tmp_path / "metafork.h").write_text("#define meta_for for\n#define meta_schedule\n#define cache(...)\n")
    file = tmp_path / "k.c"
    file.write_text(source)
    result = verify_source(source, str(file), points=3)
    report = verify_text(result)
    assert result.ok, report
    for schedule in result.schedules:
        for case in schedule.cases:
            assert case.points and case.mismatches == 0, report
