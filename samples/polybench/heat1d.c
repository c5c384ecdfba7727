/* heat-1d on one array of two halves, the halves chosen by the step's parity through
 * offsets (ping-pong), s points per thread B apart, the array staged in shared memory. */
#include "../metafork.h"

void heat1d(int N, int T, int s, int B, float u[2 * N])
{
    int dim = (N - 2) / (s * B);
    for (int t = 0; t < T; t++) {
        int src = (t % 2) * N;
        int dst = ((t + 1) % 2) * N;
        meta_schedule cache(u) {
            meta_for (int b = 0; b < dim; b++)
                meta_for (int q = 0; q < B; q++)
                    for (int k = 0; k < s; k++) {
                        int p = (b * s + k) * B + q;
                        u[dst + p + 1] = 0.25f * u[src + p] + 0.5f * u[src + p + 1] + 0.25f * u[src + p + 2];
                    }
        }
    }
}

void heat1d_ref(int N, int T, int s, int B, float u[2 * N])
{
    int covered = (N - 2) / (s * B) * (s * B);
    for (int t = 0; t < T; t++) {
        int src = (t % 2) * N;
        int dst = ((t + 1) % 2) * N;
        for (int p = 0; p < covered; p++)
            u[dst + p + 1] = 0.25f * u[src + p] + 0.5f * u[src + p + 1] + 0.25f * u[src + p + 2];
    }
}
