/* 2mm: tmp = alpha * A * B, then D = beta * D + tmp * C. Two meta_schedules; the asserts
 * name parameters that only one of them uses. */
#include <assert.h>
#include "../metafork.h"

void two_mm(int ni, int nj, int nk, int nl, int B0, int B1, float alpha, float beta,
            float tmp[ni][nj], float A[ni][nk], float B[nk][nj], float C[nj][nl], float D[ni][nl])
{
    assert(nk > 0);
    assert(nl > 0);
    int gi = (ni + B0 - 1) / B0, gj = (nj + B1 - 1) / B1, gl = (nl + B1 - 1) / B1;
    meta_schedule {
        meta_for (int bi = 0; bi < gi; bi++)
            meta_for (int bj = 0; bj < gj; bj++)
                meta_for (int ti = 0; ti < B0; ti++)
                    meta_for (int tj = 0; tj < B1; tj++) {
                        int i = bi * B0 + ti;
                        int j = bj * B1 + tj;
                        if (i < ni && j < nj) {
                            tmp[i][j] = 0.0f;
                            for (int k = 0; k < nk; k++)
                                tmp[i][j] += alpha * A[i][k] * B[k][j];
                        }
                    }
    }
    meta_schedule {
        meta_for (int bi = 0; bi < gi; bi++)
            meta_for (int bl = 0; bl < gl; bl++)
                meta_for (int ti = 0; ti < B0; ti++)
                    meta_for (int tl = 0; tl < B1; tl++) {
                        int i = bi * B0 + ti;
                        int l = bl * B1 + tl;
                        if (i < ni && l < nl) {
                            D[i][l] *= beta;
                            for (int j = 0; j < nj; j++)
                                D[i][l] += tmp[i][j] * C[j][l];
                        }
                    }
    }
}

void two_mm_ref(int ni, int nj, int nk, int nl, float alpha, float beta,
                float tmp[ni][nj], float A[ni][nk], float B[nk][nj], float C[nj][nl], float D[ni][nl])
{
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++) {
            tmp[i][j] = 0.0f;
            for (int k = 0; k < nk; k++)
                tmp[i][j] += alpha * A[i][k] * B[k][j];
        }
    for (int i = 0; i < ni; i++)
        for (int l = 0; l < nl; l++) {
            D[i][l] *= beta;
            for (int j = 0; j < nj; j++)
                D[i][l] += tmp[i][j] * C[j][l];
        }
}
