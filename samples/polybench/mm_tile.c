/* mm_tile: C = A * B with the block's tile of C cached: each thread writes its coefficient
 * (= 0) before it reads it (+=), so the staging loads nothing of C and copies the tile back
 * once. Sizes are multiples of the block's, so no guard is needed. */
#include <assert.h>
#include "../metafork.h"

void mm_tile(int ni, int nj, int nk, int B0, int B1, float C[ni][nj], float A[ni][nk], float B[nk][nj])
{
    assert(ni % B0 == 0 && nj % B1 == 0);
    int gi = ni / B0, gj = nj / B1;
    meta_schedule cache(C) {
        meta_for (int bi = 0; bi < gi; bi++)
            meta_for (int bj = 0; bj < gj; bj++)
                meta_for (int ti = 0; ti < B0; ti++)
                    meta_for (int tj = 0; tj < B1; tj++) {
                        int i = bi * B0 + ti;
                        int j = bj * B1 + tj;
                        C[i][j] = 0.0f;
                        for (int k = 0; k < nk; k++)
                            C[i][j] += A[i][k] * B[k][j];
                    }
    }
}

void mm_tile_ref(int ni, int nj, int nk, float C[ni][nj], float A[ni][nk], float B[nk][nj])
{
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++) {
            C[i][j] = 0.0f;
            for (int k = 0; k < nk; k++)
                C[i][j] += A[i][k] * B[k][j];
        }
}
