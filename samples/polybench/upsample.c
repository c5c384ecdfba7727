/* Nearest-neighbour 2x upsampling of an n x n image: each input pixel fills a 2 x 2 square of
 * the output (in[i / 2][j / 2]: two neighbouring threads read one element). */
#include "../metafork.h"

void upsample(int n, int Bx, int By, float in[n][n], float out[2 * n][2 * n])
{
    int m = 2 * n;
    int gx = (m + Bx - 1) / Bx, gy = (m + By - 1) / By;
    meta_schedule {
        meta_for (int by = 0; by < gy; by++)
            meta_for (int bx = 0; bx < gx; bx++)
                meta_for (int ty = 0; ty < By; ty++)
                    meta_for (int tx = 0; tx < Bx; tx++) {
                        int i = by * By + ty;
                        int j = bx * Bx + tx;
                        if (i < m && j < m)
                            out[i][j] = in[i / 2][j / 2];
                    }
    }
}

void upsample_ref(int n, float in[n][n], float out[2 * n][2 * n])
{
    for (int i = 0; i < 2 * n; i++)
        for (int j = 0; j < 2 * n; j++)
            out[i][j] = in[i / 2][j / 2];
}
