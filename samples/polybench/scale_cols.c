/* scale_cols: B = alpha * A, written with the column index on the outer block level, so
 * threadIdx.x runs down a column (a row per thread): both accesses are uncoalesced until the
 * two innermost meta_for levels are swapped. */
#include "../metafork.h"

void scale_cols(int m, int n, int B0, int B1, float alpha, float A[m][n], float B[m][n])
{
    int gj = (n + B0 - 1) / B0, gi = (m + B1 - 1) / B1;
    meta_schedule {
        meta_for (int bj = 0; bj < gj; bj++)
            meta_for (int bi = 0; bi < gi; bi++)
                meta_for (int tj = 0; tj < B0; tj++)
                    meta_for (int ti = 0; ti < B1; ti++) {
                        int i = bi * B1 + ti;
                        int j = bj * B0 + tj;
                        if (i < m && j < n)
                            B[i][j] = alpha * A[i][j];
                    }
    }
}

void scale_cols_ref(int m, int n, float alpha, float A[m][n], float B[m][n])
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            B[i][j] = alpha * A[i][j];
}
