/* mvt: x1 += A y1 (a row per thread) and x2 += A^T y2 (a column per thread). */
#include "../metafork.h"

void mvt(int n, int B, float A[n][n], float x1[n], float x2[n], float y1[n], float y2[n])
{
    int g = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n)
                    for (int j = 0; j < n; j++)
                        x1[i] += A[i][j] * y1[j];
            }
    }
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n)
                    for (int j = 0; j < n; j++)
                        x2[i] += A[j][i] * y2[j];
            }
    }
}

void mvt_ref(int n, float A[n][n], float x1[n], float x2[n], float y1[n], float y2[n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            x1[i] += A[i][j] * y1[j];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            x2[i] += A[j][i] * y2[j];
}
