/* Block-local smoothing: each block of B points runs `sweeps` three-point sweeps over its own
 * tile, alternating between a and b (the tile's two end points stay fixed). A sweep reads what
 * the block's other threads wrote in the sweep before: the kernel needs a barrier after each
 * iteration of the serial loop between the grid and block levels (MetaFork joins the meta_for). */
#include <assert.h>
#include "../metafork.h"

void block_smooth(int n, int B, int sweeps, float a[n], float b[n])
{
    assert(n % B == 0);
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            for (int t = 0; t < sweeps; t++)
                meta_for (int u = 0; u < B; u++) {
                    int p = i * B + u;
                    if (u > 0 && u < B - 1) {
                        if (t % 2 == 0)
                            b[p] = (a[p - 1] + a[p] + a[p + 1]) / 3.0f;
                        else
                            a[p] = (b[p - 1] + b[p] + b[p + 1]) / 3.0f;
                    }
                }
    }
}

void block_smooth_ref(int n, int B, int sweeps, float a[n], float b[n])
{
    for (int i = 0; i < n / B; i++)
        for (int t = 0; t < sweeps; t++)
            for (int u = 1; u < B - 1; u++) {
                int p = i * B + u;
                if (t % 2 == 0)
                    b[p] = (a[p - 1] + a[p] + a[p + 1]) / 3.0f;
                else
                    a[p] = (b[p - 1] + b[p] + b[p + 1]) / 3.0f;
            }
}
