/* syrk: C = alpha * A A^T + beta * C on the lower triangle (j <= i). */
#include "../metafork.h"

void syrk(int n, int m, int B0, int B1, float alpha, float beta, float C[n][n], float A[n][m])
{
    int gi = (n + B0 - 1) / B0, gj = (n + B1 - 1) / B1;
    meta_schedule {
        meta_for (int bi = 0; bi < gi; bi++)
            meta_for (int bj = 0; bj < gj; bj++)
                meta_for (int ti = 0; ti < B0; ti++)
                    meta_for (int tj = 0; tj < B1; tj++) {
                        int i = bi * B0 + ti;
                        int j = bj * B1 + tj;
                        if (i < n && j <= i) {
                            C[i][j] *= beta;
                            for (int k = 0; k < m; k++)
                                C[i][j] += alpha * A[i][k] * A[j][k];
                        }
                    }
    }
}

void syrk_ref(int n, int m, float alpha, float beta, float C[n][n], float A[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            C[i][j] *= beta;
            for (int k = 0; k < m; k++)
                C[i][j] += alpha * A[i][k] * A[j][k];
        }
}
