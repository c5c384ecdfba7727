/* 3mm: E = A B, F = C D, G = E F (rectangular, double). Three schedules of one function that
 * share its block sizes B0 x B1: tuned one by one they may disagree, the function takes one. */
#include "../metafork.h"

void three_mm(int ni, int nj, int nk, int nl, int nm, int B0, int B1,
              double E[ni][nj], double A[ni][nk], double B[nk][nj],
              double F[nj][nl], double C[nj][nm], double D[nm][nl], double G[ni][nl])
{
    int gi = (ni + B0 - 1) / B0, gj = (nj + B1 - 1) / B1;
    int gr = (nj + B0 - 1) / B0, gl = (nl + B1 - 1) / B1;
    meta_schedule {
        meta_for (int bi = 0; bi < gi; bi++)
            meta_for (int bj = 0; bj < gj; bj++)
                meta_for (int ti = 0; ti < B0; ti++)
                    meta_for (int tj = 0; tj < B1; tj++) {
                        int i = bi * B0 + ti, j = bj * B1 + tj;
                        if (i < ni && j < nj) {
                            double acc = 0.0;
                            for (int k = 0; k < nk; k++)
                                acc += A[i][k] * B[k][j];
                            E[i][j] = acc;
                        }
                    }
    }
    meta_schedule {
        meta_for (int bi = 0; bi < gr; bi++)
            meta_for (int bj = 0; bj < gl; bj++)
                meta_for (int ti = 0; ti < B0; ti++)
                    meta_for (int tj = 0; tj < B1; tj++) {
                        int i = bi * B0 + ti, j = bj * B1 + tj;
                        if (i < nj && j < nl) {
                            double acc = 0.0;
                            for (int k = 0; k < nm; k++)
                                acc += C[i][k] * D[k][j];
                            F[i][j] = acc;
                        }
                    }
    }
    meta_schedule {
        meta_for (int bi = 0; bi < gi; bi++)
            meta_for (int bj = 0; bj < gl; bj++)
                meta_for (int ti = 0; ti < B0; ti++)
                    meta_for (int tj = 0; tj < B1; tj++) {
                        int i = bi * B0 + ti, j = bj * B1 + tj;
                        if (i < ni && j < nl) {
                            double acc = 0.0;
                            for (int k = 0; k < nj; k++)
                                acc += E[i][k] * F[k][j];
                            G[i][j] = acc;
                        }
                    }
    }
}

void three_mm_ref(int ni, int nj, int nk, int nl, int nm,
                  double E[ni][nj], double A[ni][nk], double B[nk][nj],
                  double F[nj][nl], double C[nj][nm], double D[nm][nl], double G[ni][nl])
{
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++) {
            E[i][j] = 0.0;
            for (int k = 0; k < nk; k++)
                E[i][j] += A[i][k] * B[k][j];
        }
    for (int i = 0; i < nj; i++)
        for (int j = 0; j < nl; j++) {
            F[i][j] = 0.0;
            for (int k = 0; k < nm; k++)
                F[i][j] += C[i][k] * D[k][j];
        }
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nl; j++) {
            G[i][j] = 0.0;
            for (int k = 0; k < nj; k++)
                G[i][j] += E[i][k] * F[k][j];
        }
}
