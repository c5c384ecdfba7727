/* doitgen: for each (r, q), sum[r][q][p] = sum_s A[r][q][s] * C4[s][p], then copied back
 * into A. A thread per (r, q, p): (r, q) and blocks of p on the grid, B threads per block;
 * the copy is a second schedule (a row of sum is read by every p of its row). */
#include "../metafork.h"

void doitgen(int nr, int nq, int np, int B, double A[nr][nq][np], double C4[np][np], double sum[nr][nq][np])
{
    int gp = (np + B - 1) / B;
    meta_schedule {
        meta_for (int rq = 0; rq < nr * nq; rq++)
            meta_for (int bp = 0; bp < gp; bp++)
                meta_for (int t = 0; t < B; t++) {
                    int r = rq / nq;
                    int q = rq % nq;
                    int p = bp * B + t;
                    if (p < np) {
                        sum[r][q][p] = 0.0;
                        for (int s = 0; s < np; s++)
                            sum[r][q][p] += A[r][q][s] * C4[s][p];
                    }
                }
    }
    meta_schedule {
        meta_for (int rq = 0; rq < nr * nq; rq++)
            meta_for (int bp = 0; bp < gp; bp++)
                meta_for (int t = 0; t < B; t++) {
                    int r = rq / nq;
                    int q = rq % nq;
                    int p = bp * B + t;
                    if (p < np)
                        A[r][q][p] = sum[r][q][p];
                }
    }
}

void doitgen_ref(int nr, int nq, int np, double A[nr][nq][np], double C4[np][np], double sum[nr][nq][np])
{
    for (int r = 0; r < nr; r++)
        for (int q = 0; q < nq; q++) {
            for (int p = 0; p < np; p++) {
                sum[r][q][p] = 0.0;
                for (int s = 0; s < np; s++)
                    sum[r][q][p] += A[r][q][s] * C4[s][p];
            }
            for (int p = 0; p < np; p++)
                A[r][q][p] = sum[r][q][p];
        }
}
