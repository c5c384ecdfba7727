/* gesummv: y = alpha * A x + beta * B x, a row per thread, two local accumulators. */
#include "../metafork.h"

void gesummv(int n, int BS, float alpha, float beta, float A[n][n], float B[n][n], float x[n], float y[n])
{
    int g = (n + BS - 1) / BS;
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < BS; t++) {
                int i = b * BS + t;
                if (i < n) {
                    float ta = 0.0f;
                    float tb = 0.0f;
                    for (int j = 0; j < n; j++) {
                        ta += A[i][j] * x[j];
                        tb += B[i][j] * x[j];
                    }
                    y[i] = alpha * ta + beta * tb;
                }
            }
    }
}

void gesummv_ref(int n, float alpha, float beta, float A[n][n], float B[n][n], float x[n], float y[n])
{
    for (int i = 0; i < n; i++) {
        float ta = 0.0f, tb = 0.0f;
        for (int j = 0; j < n; j++) {
            ta += A[i][j] * x[j];
            tb += B[i][j] * x[j];
        }
        y[i] = alpha * ta + beta * tb;
    }
}
