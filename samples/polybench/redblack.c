/* Red-black Gauss-Seidel, the red half-sweep: the cells (i, j) with i + j odd get the mean
 * of their four neighbours, which are black, so no thread reads what another writes. Each
 * thread walks one interior column from its first red row in steps of 2: the loop starts at
 * 1 + j % 2, so neighbouring threads are a row apart. */
#include <assert.h>
#include "../metafork.h"

void redblack(int n, int B, float u[n][n], float f[n][n])
{
    assert((n - 2) % B == 0);
    meta_schedule {
        meta_for (int g = 0; g < (n - 2) / B; g++)
            meta_for (int t = 0; t < B; t++) {
                int j = g * B + t + 1;
                for (int i = 1 + j % 2; i < n - 1; i += 2)
                    u[i][j] = 0.25f * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1] - f[i][j]);
            }
    }
}

void redblack_ref(int n, float u[n][n], float f[n][n])
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            if ((i + j) % 2 == 1)
                u[i][j] = 0.25f * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1] - f[i][j]);
}
