"""tune on a function whose schedules share a tuned parameter (one argument, one value): the
common values that make the sum of their predicted times least, checked by brute force."""
from __future__ import annotations

from conftest import ROOT
from parakern import search
from parakern.machine.devices import get_profile
from parakern.pipeline import analyze
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

