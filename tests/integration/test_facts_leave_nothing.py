"""Facts that leave nothing to run, through the CLI and the compiled dispatcher (a new user's
trial: wrong_block_too_big.c printed `coverage REFUTED` with no uncovered region and no
diagnostic; wrong_b0_zero.c's dispatcher returned PARAKERN_NO_CASE_FITS where docs/cli.md
promises PARAKERN_NOTHING_TO_DO for an empty meta_for)."""
import json
import shutil
import subprocess

import pytest

from conftest import cli
from parakern.codegen import emit_file
from parakern.pipeline import analyze
from parakern.verify.build import HEADER

GXX = shutil.which("g++")

TOO_BIG = """\
#include <assert.h>
#include "metafork.h"

void big(int n, int B, float a[n], float c[n])
{
    assert(B == 2048);
    assert(n % B == 0);
    meta_schedule {
        meta_for (int b = 0; b < n / B; b++)
            meta_for (int t = 0; t < B; t++)
                c[b * B + t] = 2.0f * a[b * B + t];
    }
}
"""

ZERO = """\
#include <assert.h>
#include "metafork.h"

void zero_block(int n, int B0, float a[n], float o[n])
{
    assert(B0 == 0);
    meta_schedule {
        meta_for (int b = 0; b < 8; b++)
            meta_for (int t = 0; t < B0; t++) {
                int i = b * B0 + t;
                if (i < n)
                    o[i] = 2.0f * a[i];
            }
    }
}
"""

HOST = r"""
#include <stdio.h>
int big_0_dispatch(int n, int B, const float *a, float *c);
int zero_block_0_dispatch(int n, int B0, const float *a, float *o);

int main(void)
{
    static float a[4096], c[4096];
    printf("%d ", zero_block_0_dispatch(64, 0, a, c));    /* the assertion holds: the meta_for is empty */
    printf("%d ", zero_block_0_dispatch(64, 4, a, c));    /* the assertion fails */
    printf("%d ", big_0_dispatch(4096, 2048, a, c));      /* no GPU takes a block of 2048 threads */
    printf("%d\n", big_0_dispatch(4096, 256, a, c));      /* the assertion fails */
    return 0;
}
"""


def test_optimize_json_lists_where_no_kernel_fits_and_the_error_at_the_assertion(tmp_path):
    (tmp_path / "big.c").write_text(TOO_BIG)
    done = cli("optimize", tmp_path / "big.c", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    coverage = doc["schedules"][0]["coverage"]
    assert coverage["status"] == "proved" and coverage["uncovered"]
    assert any("T < B" in u for u in coverage["uncovered"])
    errors = [d for d in doc["diagnostics"] if d["code"] == "PK026"]
    assert [d["range"]["start"] for d in errors] == [{"line": 5, "character": 4}]


def test_optimize_text_names_the_contradiction_and_prints_facts_in_c(tmp_path):
    (tmp_path / "zero.c").write_text(ZERO)
    out = cli("optimize", tmp_path / "zero.c").stdout
    assert "zero.c:6:5: warning: these facts cannot hold together: B0 == 0 (assert, line 6) and B0 >= 1 " \
           "(meta_for bound, line 9)" in out
    assert "  facts  B0 >= 1; B0 == 0" in out


@pytest.mark.skipif(GXX is None or shutil.which("gcc") is None, reason="gcc and g++ are not on PATH")
def test_the_compiled_dispatchers_return_the_documented_statuses(tmp_path):
    (tmp_path / "zero.cu").write_text(emit_file(analyze(ZERO, "zero.c")))
    (tmp_path / "big.cu").write_text(emit_file(analyze(TOO_BIG, "big.c")))
    (tmp_path / "main.c").write_text(HOST)
    steps = [[GXX, "-std=c++17", "-w", "-include", str(HEADER), "-x", "c++", "-c", f"{stem}.cu", "-o", f"{stem}.o"]
             for stem in ("zero", "big")]
    steps += [["gcc", "-std=c99", "-Wall", "-Werror", "-c", "main.c", "-o", "main.o"],
              [GXX, "main.o", "zero.o", "big.o", "-pthread", "-o", "main"]]
    for step in steps:
        done = subprocess.run(step, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (step, done.stderr[-2000:])
    run = subprocess.run([str(tmp_path / "main")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    nothing, no_case_fits, invalid = "0", "-1", "-3"
    assert run.stdout.split() == [nothing, invalid, no_case_fits, invalid]
