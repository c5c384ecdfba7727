/* gemm: C = alpha * A * B + beta * C (ni x nj, inner dimension nk). One thread per
 * coefficient of C, B0 x B1 threads per block. */
#include "../metafork.h"

void gemm(int ni, int nj, int nk, int B0, int B1, float alpha, float beta,
          float C[ni][nj], float A[ni][nk], float B[nk][nj])
{
    int gi = (ni + B0 - 1) / B0, gj = (nj + B1 - 1) / B1;
    meta_schedule {
        meta_for (int bi = 0; bi < gi; bi++)
            meta_for (int bj = 0; bj < gj; bj++)
                meta_for (int ti = 0; ti < B0; ti++)
                    meta_for (int tj = 0; tj < B1; tj++) {
                        int i = bi * B0 + ti;
                        int j = bj * B1 + tj;
                        if (i < ni && j < nj) {
                            C[i][j] *= beta;
                            for (int k = 0; k < nk; k++)
                                C[i][j] += alpha * A[i][k] * B[k][j];
                        }
                    }
    }
}

void gemm_ref(int ni, int nj, int nk, float alpha, float beta, float C[ni][nj], float A[ni][nk], float B[nk][nj])
{
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++) {
            C[i][j] *= beta;
            for (int k = 0; k < nk; k++)
                C[i][j] += alpha * A[i][k] * B[k][j];
        }
}
