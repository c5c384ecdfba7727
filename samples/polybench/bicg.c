/* bicg: q = A p and s = A^T r, one schedule each. The arrays are named as in PolyBench
 * (r, s, p, q): short names a generated harness must not collide with. */
#include "../metafork.h"

void bicg(int m, int n, int B, float A[n][m], float r[n], float s[m], float p[m], float q[n])
{
    int gm = (m + B - 1) / B, gn = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < gm; b++)
            meta_for (int t = 0; t < B; t++) {
                int j = b * B + t;
                if (j < m) {
                    s[j] = 0.0f;
                    for (int i = 0; i < n; i++)
                        s[j] += r[i] * A[i][j];
                }
            }
    }
    meta_schedule {
        meta_for (int b = 0; b < gn; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n) {
                    q[i] = 0.0f;
                    for (int j = 0; j < m; j++)
                        q[i] += A[i][j] * p[j];
                }
            }
    }
}

void bicg_ref(int m, int n, float A[n][m], float r[n], float s[m], float p[m], float q[n])
{
    for (int j = 0; j < m; j++) {
        s[j] = 0.0f;
        for (int i = 0; i < n; i++)
            s[j] += r[i] * A[i][j];
    }
    for (int i = 0; i < n; i++) {
        q[i] = 0.0f;
        for (int j = 0; j < m; j++)
            q[i] += A[i][j] * p[j];
    }
}
