/* fdtd-2d: per time step, the boundary row of ey, then ey, ex and hz updates. */
#include "../metafork.h"

void fdtd2d(int tmax, int nx, int ny, int Bx, int By, float ex[nx][ny], float ey[nx][ny], float hz[nx][ny],
            float fict[tmax])
{
    int gx = (nx + By - 1) / By, gy = (ny + Bx - 1) / Bx, grow = (ny + Bx - 1) / Bx;
    for (int t = 0; t < tmax; t++) {
        meta_schedule {
            meta_for (int b = 0; b < grow; b++)
                meta_for (int tj = 0; tj < Bx; tj++) {
                    int j = b * Bx + tj;
                    if (j < ny)
                        ey[0][j] = fict[t];
                }
        }
        meta_schedule {
            meta_for (int bi = 0; bi < gx; bi++)
                meta_for (int bj = 0; bj < gy; bj++)
                    meta_for (int ti = 0; ti < By; ti++)
                        meta_for (int tj = 0; tj < Bx; tj++) {
                            int i = bi * By + ti;
                            int j = bj * Bx + tj;
                            if (i >= 1 && i < nx && j < ny)
                                ey[i][j] = ey[i][j] - 0.5f * (hz[i][j] - hz[i - 1][j]);
                        }
        }
        meta_schedule {
            meta_for (int bi = 0; bi < gx; bi++)
                meta_for (int bj = 0; bj < gy; bj++)
                    meta_for (int ti = 0; ti < By; ti++)
                        meta_for (int tj = 0; tj < Bx; tj++) {
                            int i = bi * By + ti;
                            int j = bj * Bx + tj;
                            if (i < nx && j >= 1 && j < ny)
                                ex[i][j] = ex[i][j] - 0.5f * (hz[i][j] - hz[i][j - 1]);
                        }
        }
        meta_schedule {
            meta_for (int bi = 0; bi < gx; bi++)
                meta_for (int bj = 0; bj < gy; bj++)
                    meta_for (int ti = 0; ti < By; ti++)
                        meta_for (int tj = 0; tj < Bx; tj++) {
                            int i = bi * By + ti;
                            int j = bj * Bx + tj;
                            if (i < nx - 1 && j < ny - 1)
                                hz[i][j] = hz[i][j] - 0.7f * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
                        }
        }
    }
}

void fdtd2d_ref(int tmax, int nx, int ny, float ex[nx][ny], float ey[nx][ny], float hz[nx][ny], float fict[tmax])
{
    for (int t = 0; t < tmax; t++) {
        for (int j = 0; j < ny; j++)
            ey[0][j] = fict[t];
        for (int i = 1; i < nx; i++)
            for (int j = 0; j < ny; j++)
                ey[i][j] = ey[i][j] - 0.5f * (hz[i][j] - hz[i - 1][j]);
        for (int i = 0; i < nx; i++)
            for (int j = 1; j < ny; j++)
                ex[i][j] = ex[i][j] - 0.5f * (hz[i][j] - hz[i][j - 1]);
        for (int i = 0; i < nx - 1; i++)
            for (int j = 0; j < ny - 1; j++)
                hz[i][j] = hz[i][j] - 0.7f * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
    }
}
