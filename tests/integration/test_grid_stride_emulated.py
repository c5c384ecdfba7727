"""A grid-stride loop's requests on the CPU emulation: a warp's lanes run its m-th iteration
together, each at its own start, so the emulation groups them by m (codegen's traced
instance), as the static figures do; and a loop whose bounds the data gives (CSR's
rowptr[i + 1]) is no disagreement when the emulation's data never runs it. `profile --emulate`
exited 0 with 32 times the requests (grid stride) and 1 on a correct CSR kernel."""
from __future__ import annotations

import shutil

import pytest

from conftest import SAMPLES
from parakern.commands.cli import main
from unit.test_grid_stride import GRID_STRIDE_AXPY

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ for the CPU emulation")

CSR = """#include "metafork.h"
void spmv(int m, int B, int rowptr[m + 1], int col[], float val[], float x[], float y[m])
{
    meta_schedule {
        meta_for (int b = 0; b < m / B; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                float sum = 0.0f;
                for (int k = rowptr[i]; k < rowptr[i + 1]; k++)
                    sum += val[k] * x[col[k]];
                y[i] = sum;
            }
    }
}
"""


def _profile(tmp_path, capsys, text: str, at: str) -> tuple[int, str]:
    (tmp_path / "metafork.h").write_text((SAMPLES / "metafork.h").read_text())
    path = tmp_path / "p.c"
    path.write_text(text)
    code = main(["profile", str(path), "--emulate", "--at", at])
    return code, capsys.readouterr().out


def test_the_emulation_counts_a_grid_stride_loop_as_the_analysis_does(tmp_path, capsys):
    code, out = _profile(tmp_path, capsys, GRID_STRIDE_AXPY, "n=4096,G=4,B=64")
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("x[i]", "y[i]"))]
    assert len(rows) == 3
    for row in rows:   # stride, req/warp, req/block, sectors, ideal, bytes/block, emulated req/block, cost
        assert row[3:] == ["1", "16", "32", "4.00", "4.00", "4096", "32", "4.00"], row
    assert code == 0 and "differs" not in out


def test_a_loop_the_data_bounds_is_no_disagreement(tmp_path, capsys):
    code, out = _profile(tmp_path, capsys, CSR, "m=256,B=64")
    assert "differs" not in out and code == 0, out


def test_a_grid_stride_loop_counting_down_is_emitted_and_verified(tmp_path):
    """dispatch_auto printed its trip count (C's truncating division, cdiv) with sympy's C printer,
    which refused it: emit stopped at PK099 and verify found no dispatcher."""
    from parakern.verify import text, verify_file
    (tmp_path / "metafork.h").write_text((SAMPLES / "metafork.h").read_text())
    path = tmp_path / "down.c"
    path.write_text("""#include "metafork.h"
void down(int n, int G, int B, float x[n], float y[n])
{
    meta_schedule {
        meta_for (int b = 0; b < G; b++)
            meta_for (int t = 0; t < B; t++)
                for (int i = n - 1 - b * B - t; i >= 0; i -= G * B)
                    y[i] = 2.0f * x[n - 1 - i];
    }
}
""")
    result = verify_file(path, points=2)
    (schedule,) = result.schedules
    # every case emitted and run against the serial C (whether z3 proves the count-down loop's
    # threads apart within its work varies: a PK021 then, not an error)
    assert schedule.cases and all(c.points and all(p.ok for p in c.points) for c in schedule.cases), text(result)
    assert not result.errors and not result.error, text(result)
