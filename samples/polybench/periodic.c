/* A centred difference on a periodic 1-D grid: b[p] = a[p + 1] - a[p - 1], indices wrapping
 * modulo N (a subscript that is not affine: its footprint is the whole of a). */
#include "../metafork.h"

void periodic(int N, int B, double a[N], double b[N])
{
    meta_schedule cache(a) {
        meta_for (int i = 0; i < N / B; i++)
            meta_for (int j = 0; j < B; j++) {
                int p = i * B + j;
                b[p] = a[(p + 1) % N] - a[(p + N - 1) % N];
            }
    }
}

void periodic_ref(int N, double a[N], double b[N])
{
    for (int p = 0; p < N; p++)
        b[p] = a[(p + 1) % N] - a[(p + N - 1) % N];
}
