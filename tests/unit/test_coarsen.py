"""(6) Thread coarsening: where it applies and why not elsewhere, the threads it needs
(sympy), the region of its cases (z3), one staged tile for a thread's rows, the instance's
settled guards and accumulators, and the semantics on the CPU emulation against the serial C."""
from __future__ import annotations

import re

import pytest
import sympy

from conftest import KERNEL_HEAD, SAMPLES
from parakern.kernel import Kernel
from parakern.pipeline import Options, analyze
from parakern.strategies.coarsen import CoarsenThreads
from parakern.symbolic.symbols import sym

MATMUL = (SAMPLES / "matmul.c").read_text()
MATMUL_CACHED = MATMUL.replace("meta_schedule {", "meta_schedule cache(a, b) {")
B0, ub1, s, T = (sym(n) for n in ("B0", "ub1", "s", "T"))
ROWS_THREADS = ub1 * sympy.floor((B0 + 3) / 4)


def tree(text: str, name: str = "t.c", options: "Options | None" = None):
    (result,) = analyze(text, name, options or Options()).results
    assert result.tree is not None, [d.message for d in result.diagnostics]
    return result.tree


def coarsened(t):
    return [c for c in t.cases if "(6)" in c.decisions]


MATADD_2D = """
void add(int n, int B0, int B1, float a[n][n], float b[n][n], float c[n][n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B0; i++)
            meta_for (int j = 0; j < n / B1; j++)
                meta_for (int v = 0; v < B0; v++)
                    meta_for (int u = 0; u < B1; u++)
                        c[i * B0 + v][j * B1 + u] = a[i * B0 + v][j * B1 + u] + b[i * B0 + v][j * B1 + u];
    }
}
"""


@pytest.mark.parametrize("text, why", [
    (MATADD_2D, "every load of the body depends on v"),
    ((SAMPLES / "jacobi1d.c").read_text(), "the block has one level (.x)"),
])
def test_not_applied_where_the_rows_would_share_no_load(text, why):
    t = tree(text)
    assert coarsened(t) == []
    kernel = Kernel.initial(t.schedule)
    assert why in CoarsenThreads().explain(kernel)


def _kernel(source: str, name: str) -> str:
    match = re.search(KERNEL_HEAD + name + r"\(.*?\)\s*\{(.*?)\n\}", source, re.S)
    assert match, name
    return match.group(1)


# ------------------------------------------------------------------ on the CPU emulation
# A flattened cached array: the rows' runs of A are four regions of its staged part, and each
# copy of `A[i * nk + k]` must find its own (they once all read the first row's).
ROWDOT = """
void rowdot(int ni, int nj, int nk, int B0, int B1, float *A, float X[nk][nj], float Y[ni][nj])
{
    int gi = (ni + B0 - 1) / B0, gj = (nj + B1 - 1) / B1;
    meta_schedule cache(A) {
        meta_for (int bi = 0; bi < gi; bi++)
            meta_for (int bj = 0; bj < gj; bj++)
                meta_for (int ti = 0; ti < B0; ti++)
                    meta_for (int tj = 0; tj < B1; tj++) {
                        int i = bi * B0 + ti;
                        int j = bj * B1 + tj;
                        if (i < ni && j < nj) {
                            float acc = 0.0f;
                            for (int k = 0; k < nk; k++)
                                acc += A[i * nk + k] * X[k][j];
                            Y[i][j] = acc;
                        }
                    }
    }
}
"""

