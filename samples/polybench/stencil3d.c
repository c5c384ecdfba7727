/* stencil3d: one step of a 7-point stencil on an n^3 grid (interior points), the input box
 * cached in shared memory: its 12 edges and 8 corners are read by no thread, so the staging
 * loads only the three slabs through the centre. */
#include "../metafork.h"

void stencil3d(int n, int Bx, int By, int Bz, float in[n][n][n], float out[n][n][n])
{
    int gx = (n - 2 + Bx - 1) / Bx, gy = (n - 2 + By - 1) / By, gz = (n - 2 + Bz - 1) / Bz;
    meta_schedule cache(in) {
        meta_for (int bz = 0; bz < gz; bz++)
            meta_for (int by = 0; by < gy; by++)
                meta_for (int bx = 0; bx < gx; bx++)
                    meta_for (int tz = 0; tz < Bz; tz++)
                        meta_for (int ty = 0; ty < By; ty++)
                            meta_for (int tx = 0; tx < Bx; tx++) {
                                int i = bz * Bz + tz + 1;
                                int j = by * By + ty + 1;
                                int k = bx * Bx + tx + 1;
                                if (i < n - 1 && j < n - 1 && k < n - 1)
                                    out[i][j][k] = 0.25f * in[i][j][k]
                                                 + 0.125f * (in[i - 1][j][k] + in[i + 1][j][k]
                                                             + in[i][j - 1][k] + in[i][j + 1][k]
                                                             + in[i][j][k - 1] + in[i][j][k + 1]);
                            }
    }
}

void stencil3d_ref(int n, float in[n][n][n], float out[n][n][n])
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            for (int k = 1; k < n - 1; k++)
                out[i][j][k] = 0.25f * in[i][j][k]
                             + 0.125f * (in[i - 1][j][k] + in[i + 1][j][k]
                                         + in[i][j - 1][k] + in[i][j + 1][k]
                                         + in[i][j][k - 1] + in[i][j][k + 1]);
}
