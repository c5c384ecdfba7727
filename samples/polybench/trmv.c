/* trmv: y = L x with L lower triangular (a row per thread: row i sums i + 1 terms), then the
 * suffix sums of each row of S over 4 starting columns (a serial loop whose bound reads the
 * loop around it). Loop bounds that read thread and loop variables: the threads of a block
 * do unequal work. */
#include "../metafork.h"

void trmv(int n, int m, int B, float L[n][n], float x[n], float y[n], float S[n][m], float z[n][4])
{
    int g = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n) {
                    float acc = 0.0f;
                    for (int k = 0; k <= i; k++)
                        acc += L[i][k] * x[k];
                    y[i] = acc;
                }
            }
    }
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++)
                for (int q = 0; q < 4; q++) {
                    int i = b * B + t;
                    if (i < n) {
                        float acc = 0.0f;
                        for (int j = q; j < m; j++)
                            acc += S[i][j];
                        z[i][q] = acc;
                    }
                }
    }
}

void trmv_ref(int n, int m, float L[n][n], float x[n], float y[n], float S[n][m], float z[n][4])
{
    for (int i = 0; i < n; i++) {
        y[i] = 0.0f;
        for (int k = 0; k <= i; k++)
            y[i] += L[i][k] * x[k];
    }
    for (int i = 0; i < n; i++)
        for (int q = 0; q < 4; q++) {
            z[i][q] = 0.0f;
            for (int j = q; j < m; j++)
                z[i][q] += S[i][j];
        }
}
