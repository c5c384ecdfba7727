/* syr2k: C = alpha * (A B^T + B A^T) + beta * C on the lower triangle. */
#include "../metafork.h"

void syr2k(int n, int m, int B0, int B1, double alpha, double beta, double C[n][n], double A[n][m], double B[n][m])
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
                                C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
                        }
                    }
    }
}

void syr2k_ref(int n, int m, double alpha, double beta, double C[n][n], double A[n][m], double B[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            C[i][j] *= beta;
            for (int k = 0; k < m; k++)
                C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
        }
}
