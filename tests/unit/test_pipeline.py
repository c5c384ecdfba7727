"""The whole analysis of a file: every failure is a diagnostic on its schedule."""
from parakern.pipeline import analyze

GATHER = """void gather(int n, int B, float *a, int idx[n], float out[n])
{
    meta_schedule cache(a, out) {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                out[i * B + j] = a[idx[i * B + j]];
    }
}
"""
SHIFT = """void shift(int n, int B, float a[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                a[i * B + j + 1] = a[i * B + j];
    }
}
"""

FLAT_BLUR = """void blur(int n, int Bx, int By, const float in[n * n], float *out)
{
    meta_schedule cache(in) {
        meta_for (int bi = 0; bi < n / By; bi++)
            meta_for (int bj = 0; bj < n / Bx; bj++)
                meta_for (int ti = 0; ti < By; ti++)
                    meta_for (int tj = 0; tj < Bx; tj++) {
                        int i = bi * By + ti, j = bj * Bx + tj;
                        if (i > 0 && j > 0 && i < n - 1 && j < n - 1)
                            out[i * n + j] = in[(i - 1) * n + j] + in[(i + 1) * n + j] + in[i * n + j - 1]
                                             + in[i * n + j + 1];
                    }
    }
}
"""


def test_dependence_error_stops_the_schedule_but_not_the_file():
    analysis = analyze(SHIFT + GATHER.replace("gather", "other"), "s.c")
    codes = [d.code for d in analysis.diagnostics]
    assert "PK020" in codes
    trees = {r.schedule.id: r.tree is not None for r in analysis.results}
    assert trees == {"shift:0": False, "other:0": True}


ROW_SUMS = """
void rowsum(int n, int m, int B, float A[n][m], float y[n])
{
    int g = n / B;
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++)
                for (int k = 0; k < m; k++)
                    y[b * B + t] += A[b * B + t][k];
    }
}
"""

