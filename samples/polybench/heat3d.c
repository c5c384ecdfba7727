/* heat-3d: a 7-point stencil on an n^3 grid, A -> B then B -> A per step, blocks of
 * Bz x By x Bx threads (three grid and three block levels). */
#include "../metafork.h"

void heat3d(int tsteps, int n, int Bx, int By, int Bz, double A[n][n][n], double B[n][n][n])
{
    int gx = (n - 2 + Bx - 1) / Bx, gy = (n - 2 + By - 1) / By, gz = (n - 2 + Bz - 1) / Bz;
    for (int t = 0; t < tsteps; t++) {
        meta_schedule {
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
                                        B[i][j][k] = 0.125 * (A[i + 1][j][k] - 2.0 * A[i][j][k] + A[i - 1][j][k])
                                                   + 0.125 * (A[i][j + 1][k] - 2.0 * A[i][j][k] + A[i][j - 1][k])
                                                   + 0.125 * (A[i][j][k + 1] - 2.0 * A[i][j][k] + A[i][j][k - 1])
                                                   + A[i][j][k];
                                }
        }
        meta_schedule {
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
                                        A[i][j][k] = 0.125 * (B[i + 1][j][k] - 2.0 * B[i][j][k] + B[i - 1][j][k])
                                                   + 0.125 * (B[i][j + 1][k] - 2.0 * B[i][j][k] + B[i][j - 1][k])
                                                   + 0.125 * (B[i][j][k + 1] - 2.0 * B[i][j][k] + B[i][j][k - 1])
                                                   + B[i][j][k];
                                }
        }
    }
}

void heat3d_ref(int tsteps, int n, double A[n][n][n], double B[n][n][n])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                for (int k = 1; k < n - 1; k++)
                    B[i][j][k] = 0.125 * (A[i + 1][j][k] - 2.0 * A[i][j][k] + A[i - 1][j][k])
                               + 0.125 * (A[i][j + 1][k] - 2.0 * A[i][j][k] + A[i][j - 1][k])
                               + 0.125 * (A[i][j][k + 1] - 2.0 * A[i][j][k] + A[i][j][k - 1])
                               + A[i][j][k];
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                for (int k = 1; k < n - 1; k++)
                    A[i][j][k] = 0.125 * (B[i + 1][j][k] - 2.0 * B[i][j][k] + B[i - 1][j][k])
                               + 0.125 * (B[i][j + 1][k] - 2.0 * B[i][j][k] + B[i][j - 1][k])
                               + 0.125 * (B[i][j][k + 1] - 2.0 * B[i][j][k] + B[i][j][k - 1])
                               + B[i][j][k];
    }
}
