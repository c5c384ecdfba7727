"""Every expression a user reads is printed by symbolic/printing.py, in C (a new user's trial
met `n**2 elements apart` in a PK040 warning and `Eq(B, 2048)` among the facts of optimize's
report): sympy's syntax stays in the JSON document, the contract."""
import re

import sympy

from parakern.pipeline import analyze
from parakern.reports.document import text
from parakern.symbolic.printing import to_plain
from parakern.symbolic.symbols import sym

TRSV = """\
#include "metafork.h"

void trsv_batched(int np, int n, int B, double U[np][n][n], double bv[np][n], double x[np][n])
{
    int g = (np + B - 1) / B;
    meta_schedule {
        meta_for (int bb = 0; bb < g; bb++)
            meta_for (int t = 0; t < B; t++) {
                int p = bb * B + t;
                if (p < np)
                    for (int i = n - 1; i >= 0; i--) {
                        double s = bv[p][i];
                        for (int j = i + 1; j < n; j++)
                            s -= U[p][i][j] * x[p][j];
                        x[p][i] = s / U[p][i][i];
                    }
            }
    }
}
"""

ASSERTED = """\
#include <assert.h>
#include "metafork.h"

void big(int n, int B, float a[n], float c[n])
{
    assert(B == 256);
    assert(n % B == 0);
    meta_schedule {
        meta_for (int b = 0; b < n / B; b++)
            meta_for (int t = 0; t < B; t++)
                c[b * B + t] = 2.0f * a[b * B + t];
    }
}
"""

SYMPY_ONLY = re.compile(r"\*\*|\b(Eq|Ne|Mod|floor)\(")


def test_a_stride_of_n_squared_is_n_times_n_in_the_warning_at_its_access():
    analysis = analyze(TRSV, "trsv.c")
    warned = {(d.span.line, d.span.col): d.message for d in analysis.diagnostics if d.code == "PK040"}
    assert "threads next in threadIdx.x are n*n elements apart" in warned[(14, 34)]   # U[p][i][j]
    assert "threads next in threadIdx.x are n*n elements apart" in warned[(15, 39)]   # U[p][i][i]
    assert not [m for m in warned.values() if SYMPY_ONLY.search(m)]


def test_the_report_prints_facts_bounds_and_definitions_in_c():
    report = text(analyze(ASSERTED, "asserted.c"), profiles=())
    facts = next(line for line in report.splitlines() if line.startswith("  facts  "))
    assert facts == "  facts  n/B >= 1; B >= 1; B != 0; B == 256; n % B == 0"
    assert "grid   b in [0, n/B) -> blockIdx.x" in report
    trsv = text(analyze(TRSV, "trsv.c"), profiles=())
    assert "g = (B + np - 1)/B" in trsv and "array U: double[np][n][n]" in trsv
    assert not SYMPY_ONLY.search(report + trsv), [line for line in (report + trsv).splitlines()
                                                   if SYMPY_ONLY.search(line)]


def test_a_counter_with_a_power_is_a_product_for_people():
    B, s = sym("B"), sym("s")
    assert to_plain(8 * B**2 * s + 8) == "8*B*B*s + 8"
    assert sympy.sympify(to_plain(8 * B**2 * s + 8), locals={"B": B, "s": s}) == 8 * B**2 * s + 8
