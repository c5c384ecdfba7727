/* jacobi-2d: tsteps sweeps of a 5-point average between A and B. The interior is
 * n - 2 wide; the grid size is derived from that derived size. */
#include "../metafork.h"

void jacobi2d(int tsteps, int n, int Bx, int By, float A[n][n], float B[n][n])
{
    int inner = n - 2;
    int gx = (inner + Bx - 1) / Bx, gy = (inner + By - 1) / By;
    for (int t = 0; t < tsteps; t++) {
        meta_schedule cache(A) {
            meta_for (int by = 0; by < gy; by++)
                meta_for (int bx = 0; bx < gx; bx++)
                    meta_for (int ty = 0; ty < By; ty++)
                        meta_for (int tx = 0; tx < Bx; tx++) {
                            int i = by * By + ty + 1;
                            int j = bx * Bx + tx + 1;
                            if (i < n - 1 && j < n - 1)
                                B[i][j] = 0.2f * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
                        }
        }
        meta_schedule cache(B) {
            meta_for (int by = 0; by < gy; by++)
                meta_for (int bx = 0; bx < gx; bx++)
                    meta_for (int ty = 0; ty < By; ty++)
                        meta_for (int tx = 0; tx < Bx; tx++) {
                            int i = by * By + ty + 1;
                            int j = bx * Bx + tx + 1;
                            if (i < n - 1 && j < n - 1)
                                A[i][j] = 0.2f * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
                        }
        }
    }
}

void jacobi2d_ref(int tsteps, int n, float A[n][n], float B[n][n])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                B[i][j] = 0.2f * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                A[i][j] = 0.2f * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
    }
}
