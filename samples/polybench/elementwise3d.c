/* A 3-D elementwise kernel: d = a * b + c over an nz x ny x nx box, blocks of Bz x By x Bx. */
#include "../metafork.h"

void elementwise3d(int nz, int ny, int nx, int Bz, int By, int Bx, float a[nz][ny][nx], float b[nz][ny][nx],
                   float c[nz][ny][nx], float d[nz][ny][nx])
{
    int gz = (nz + Bz - 1) / Bz, gy = (ny + By - 1) / By, gx = (nx + Bx - 1) / Bx;
    meta_schedule {
        meta_for (int bz = 0; bz < gz; bz++)
            meta_for (int by = 0; by < gy; by++)
                meta_for (int bx = 0; bx < gx; bx++)
                    meta_for (int tz = 0; tz < Bz; tz++)
                        meta_for (int ty = 0; ty < By; ty++)
                            meta_for (int tx = 0; tx < Bx; tx++) {
                                int z = bz * Bz + tz;
                                int y = by * By + ty;
                                int x = bx * Bx + tx;
                                if (z < nz && y < ny && x < nx)
                                    d[z][y][x] = a[z][y][x] * b[z][y][x] + c[z][y][x];
                            }
    }
}

void elementwise3d_ref(int nz, int ny, int nx, float a[nz][ny][nx], float b[nz][ny][nx], float c[nz][ny][nx],
                       float d[nz][ny][nx])
{
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++)
                d[z][y][x] = a[z][y][x] * b[z][y][x] + c[z][y][x];
}
