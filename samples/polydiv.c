/* Remainder of the polynomial a (N coefficients) modulo the monic polynomial b
 * (M coefficients) over Z/PZ. One meta_schedule per elimination step: every
 * coefficient below the leading one is updated in parallel, s per thread. */
#include "metafork.h"

void polydiv(int N, int M, int P, int s, int B, int a[N], int b[M])
{
    while (N >= M) {
        int dim = (M - 1 + s * B - 1) / (s * B);
        meta_schedule cache(a, b) {
            meta_for (int u = 0; u < dim; ++u)
                meta_for (int v = 0; v < B; ++v)
                    for (int k = 0; k < s; ++k) {
                        int p = (u * s + k) * B + v;
                        if (p < M - 1) {
                            int x = N - M + p;
                            int e = (a[N - 1] * b[p]) % P;
                            a[x] = ((a[x] - e) % P + P) % P;
                        }
                    }
        }
        N--;
    }
}
