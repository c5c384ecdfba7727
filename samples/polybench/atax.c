/* atax: y = A^T (A x). First tmp = A x (a row per thread), then y = A^T tmp (a column
 * per thread: the accesses A[i][j] run along a column, coalesced across threads). */
#include "../metafork.h"

void atax(int m, int n, int B, double A[m][n], double x[n], double y[n], double tmp[m])
{
    int gm = (m + B - 1) / B, gn = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < gm; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < m) {
                    tmp[i] = 0.0;
                    for (int j = 0; j < n; j++)
                        tmp[i] += A[i][j] * x[j];
                }
            }
    }
    meta_schedule {
        meta_for (int b = 0; b < gn; b++)
            meta_for (int t = 0; t < B; t++) {
                int j = b * B + t;
                if (j < n) {
                    y[j] = 0.0;
                    for (int i = 0; i < m; i++)
                        y[j] += A[i][j] * tmp[i];
                }
            }
    }
}

void atax_ref(int m, int n, double A[m][n], double x[n], double y[n], double tmp[m])
{
    for (int i = 0; i < m; i++) {
        tmp[i] = 0.0;
        for (int j = 0; j < n; j++)
            tmp[i] += A[i][j] * x[j];
    }
    for (int j = 0; j < n; j++) {
        y[j] = 0.0;
        for (int i = 0; i < m; i++)
            y[j] += A[i][j] * tmp[i];
    }
}
