"""Tuning never changes what a program computes (issue 35, point 5): where a tuned parameter
rounds a loop's extent down (`dim1 = (N - 2) / (B1 * s)`), a configuration computes a share of
the serial program's iteration space (tuning/coverage.py). tune ranks by time per point
computed, marks a configuration that leaves points out with its share, and never puts one first
(nor in `compile it`, nor in the hover) where a configuration computing every point exists.
The share is checked against the serial C itself: the elements it writes at each configuration."""
import subprocess

from conftest import SAMPLES
from parakern.analysis.facts import substitutions
from parakern.machine.devices import get_profile
from parakern.pipeline import analyze
from parakern.tuning import coverage, time_model
from parakern.analysis.invariance import candidate_parameters
from parakern.tuning.space import tuned_parameters

H100 = time_model.modelled(get_profile("h100"))
# a 2-D Jacobi whose columns are B1 * s per block: the issue's program
JACOBI2D = """#include "metafork.h"

void jacobi2d(int N, int B0, int B1, int s, float a[N][N], float b[N][N])
{
    int dim0 = (N - 2) / B0;
    int dim1 = (N - 2) / (B1 * s);
    meta_schedule {
        meta_for (int i = 0; i < dim0; i++)
            meta_for (int j = 0; j < dim1; j++)
                meta_for (int u = 0; u < B0; u++)
                    meta_for (int v = 0; v < B1; v++)
                        for (int k = 0; k < s; k++) {
                            int r = i * B0 + u + 1;
                            int c = j * B1 * s + k * B1 + v + 1;
                            b[r][c] = 0.2f * (a[r][c] + a[r - 1][c] + a[r + 1][c] + a[r][c - 1] + a[r][c + 1]);
                        }
    }
}
"""
# 1-D, granularity s, rounded down, the first point left as it is
SHIFT = """#include "metafork.h"

void shift(int n, int s, int B, float x[n], float y[n])
{
    int g = (n - 1) / (s * B);
    meta_schedule {
        meta_for (int i = 0; i < g; i++)
            meta_for (int j = 0; j < B; j++)
                for (int k = 0; k < s; k++) {
                    int p = i * s * B + k * B + j;
                    y[p + 1] = x[p] + x[p + 1];
                }
    }
}
"""
# rows rounded up with a bounds check (never short), columns rounded down (short where Bx does
# not divide m): the rows' extra blocks must not make up for the missing columns
MIXED = """#include "metafork.h"

void mixed(int n, int m, int By, int Bx, float x[n][m], float y[n][m])
{
    int gy = (n + By - 1) / By, gx = m / Bx;
    meta_schedule {
        meta_for (int by = 0; by < gy; by++)
            meta_for (int bx = 0; bx < gx; bx++)
                meta_for (int ty = 0; ty < By; ty++)
                    meta_for (int tx = 0; tx < Bx; tx++) {
                        int i = by * By + ty, j = bx * Bx + tx;
                        if (i < n)
                            y[i][j] = 2.0f * x[i][j];
                    }
    }
}
"""
# rounded up with a bounds check in both dimensions: every configuration computes every point
GUARDED = """#include "metafork.h"

void guarded(int n, int By, int Bx, float x[n][n], float y[n][n])
{
    int gy = (n - 2 + By - 1) / By, gx = (n - 2 + Bx - 1) / Bx;
    meta_schedule {
        meta_for (int by = 0; by < gy; by++)
            meta_for (int bx = 0; bx < gx; bx++)
                meta_for (int ty = 0; ty < By; ty++)
                    meta_for (int tx = 0; tx < Bx; tx++) {
                        int i = by * By + ty + 1, j = bx * Bx + tx + 1;
                        if (i < n - 1 && j < n - 1)
                            y[i][j] = x[i - 1][j] + x[i + 1][j];
                    }
    }
}
"""
# a sum of B elements per thread: the grid divides by B * W, a serial loop runs B, so every
# element is read where B * W divides n, although y has n / B elements
SUMS = """#include "metafork.h"

void sums(int n, int B, int W, float x[n], float y[n])
{
    int g = n / (B * W);
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < W; t++) {
                float acc = 0.0f;
                for (int k = 0; k < B; k++)
                    acc += x[(b * W + t) * B + k];
                y[b * W + t] = acc;
            }
    }
}
"""


def _result(text: str, name: str = "p.c"):
    (result,) = [r for r in analyze(text, name).results if r.tree is not None and r.tree.cases]
    return result


def _fraction(result, values: dict) -> float:
    # every candidate, those that change the result included (SUMS' B: tune leaves it, PK043)
    s = result.schedule
    return coverage.coverage(s, candidate_parameters(s)).fraction(substitutions(s, values))


# ------------------------------------------------------------------ the share, against the serial C
# per program: the C that runs the function at argv's values and prints the elements it wrote
HARNESS = {
    "jacobi2d": ("N B0 B1 s", "float (*a)[N] = calloc(N * N, 4), (*b)[N] = malloc(N * N * 4);",
                 "N * N", "b", "jacobi2d(N, B0, B1, s, a, b);"),
    "shift": ("n s B", "float *x = calloc(n, 4), *y = malloc(n * 4);", "n", "y", "shift(n, s, B, x, y);"),
    "mixed": ("n m By Bx", "float (*x)[m] = calloc(n * m, 4), (*y)[m] = malloc(n * m * 4);", "n * m", "y",
              "mixed(n, m, By, Bx, x, y);"),
    "guarded": ("n By Bx", "float (*x)[n] = calloc(n * n, 4), (*y)[n] = malloc(n * n * 4);", "n * n", "y",
                "guarded(n, By, Bx, x, y);"),
}


def _serial_points(tmp_path, text: str, function: str, values: dict) -> int:
    """The elements the serial C (metafork.h: meta_for is for) writes at `values`."""
    names, declare, size, out, call = HARNESS[function]
    args = "\n".join(f"    int {n} = atoi(argv[{k}]);" for k, n in enumerate(names.split(), 1))
    main = f"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{{
{args}
    {declare}
    float *o = (float *){out};
    for (long e = 0; e < (long)({size}); e++) o[e] = -1.0f;
    {call}
    long written = 0;
    for (long e = 0; e < (long)({size}); e++) written += o[e] != -1.0f;
    printf("%ld\\n", written);
    return 0;
}}
"""
    source = tmp_path / f"{function}.c"
    source.write_text(text + main)
    binary = tmp_path / function
    if not binary.exists():
        build = subprocess.run(["gcc", "-O1", "-std=c99", "-I", str(SAMPLES), str(source), "-o", str(binary)],
                               capture_output=True, text=True, timeout=120)
        assert build.returncode == 0, build.stderr
    run = subprocess.run([str(binary), *(str(values[n]) for n in names.split())], capture_output=True, text=True,
                         timeout=120)
    return int(run.stdout)


POINTS = [
    ("jacobi2d", JACOBI2D, {"N": 4096}, {"B0": 32, "B1": 32, "s": 64}),     # the issue's: 2048 of 4094 columns
    ("jacobi2d", JACOBI2D, {"N": 4096}, {"B0": 64, "B1": 16, "s": 64}),
    ("jacobi2d", JACOBI2D, {"N": 4096}, {"B0": 2, "B1": 2, "s": 1}),
    ("jacobi2d", JACOBI2D, {"N": 258}, {"B0": 8, "B1": 32, "s": 4}),
    ("shift", SHIFT, {"n": 1001}, {"s": 4, "B": 64}),
    ("shift", SHIFT, {"n": 1001}, {"s": 2, "B": 4}),
    ("shift", SHIFT, {"n": 4097}, {"s": 8, "B": 256}),
    ("mixed", MIXED, {"n": 1000, "m": 1000}, {"By": 1024, "Bx": 16}),
    ("mixed", MIXED, {"n": 1000, "m": 1000}, {"By": 3, "Bx": 8}),
    ("mixed", MIXED, {"n": 1000, "m": 1000}, {"By": 64, "Bx": 64}),
    ("guarded", GUARDED, {"n": 1000}, {"By": 64, "Bx": 256}),
    ("guarded", GUARDED, {"n": 1000}, {"By": 1, "Bx": 1}),
]


def test_the_issues_jacobi_computes_half_its_columns():
    result = _result(JACOBI2D)
    s = result.schedule
    covers = coverage.coverage(s, tuned_parameters(s))
    assert [g.loops for g in covers.groups] == [("i", "u"), ("j", "v", "k")]
    subs = substitutions(s, {"N": 4096, "B0": 32, "B1": 32, "s": 64})
    assert [(c, r) for _, c, r in covers.counts(subs)] == [(4064, 4094), (2048, 4094)]
    assert covers.fraction(subs) == (4064 / 4094) * (2048 / 4094)
    assert covers.short(subs) == ("loops i, u run 4064 of 4094 iterations; "
                                  "loops j, v, k run 2048 of 4094 iterations")


def test_a_rounded_up_dimension_does_not_hide_a_rounded_down_one():
    """Rows 1024 to a block: 1024 of n = 1000 rounded up; columns 16 to a block: 992 of 1000.
    The product of the counts (1024 * 992 > 1000 * 1000) would call it complete."""
    result = _result(MIXED)
    assert _fraction(result, {"n": 1000, "m": 1000, "By": 1024, "Bx": 16}) == 992 / 1000
    assert _fraction(result, {"n": 1000, "m": 1000, "By": 1024, "Bx": 8}) == 1.0


def test_a_serial_loop_over_the_divisor_completes_the_dimension():
    """y has n / B elements, yet every element of x is summed where B * W divides n."""
    result = _result(SUMS)
    assert _fraction(result, {"n": 4096, "B": 64, "W": 32}) == 1.0
    assert _fraction(result, {"n": 4000, "B": 64, "W": 32}) == 2048 / 4000

