/* A histogram: every thread adds one to the bin of its element, so that threads of any block
 * may update one bin at once; parakern makes those updates with CUDA's atomics (decision (7)).
 * The bench's kernel kind with atomics (compute-sanitizer's racecheck and memcheck on it). */
#include "metafork.h"
#define NBINS 16

void histogram(int n, int B, const int in[n], int h[NBINS])
{
    meta_schedule {
        meta_for (int b = 0; b < (n + B - 1) / B; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n)
                    h[in[i] % NBINS] += 1;
            }
    }
}
