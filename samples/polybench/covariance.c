/* covariance: column means, centring, then the symmetric covariance matrix (a thread per
 * (i, j >= i) pair, the mirrored store cov[j][i] transposed). */
#include "../metafork.h"

void covariance(int m, int n, int B0, int B1, double float_n, double data[n][m], double mean[m], double cov[m][m])
{
    int gm = (m + B1 - 1) / B1, gn = (n + B0 - 1) / B0, gi = (m + B0 - 1) / B0;
    meta_schedule {
        meta_for (int b = 0; b < gm; b++)
            meta_for (int t = 0; t < B1; t++) {
                int j = b * B1 + t;
                if (j < m) {
                    mean[j] = 0.0;
                    for (int i = 0; i < n; i++)
                        mean[j] += data[i][j];
                    mean[j] /= float_n;
                }
            }
    }
    meta_schedule {
        meta_for (int bi = 0; bi < gn; bi++)
            meta_for (int bj = 0; bj < gm; bj++)
                meta_for (int ti = 0; ti < B0; ti++)
                    meta_for (int tj = 0; tj < B1; tj++) {
                        int i = bi * B0 + ti;
                        int j = bj * B1 + tj;
                        if (i < n && j < m)
                            data[i][j] -= mean[j];
                    }
    }
    meta_schedule {
        meta_for (int bi = 0; bi < gi; bi++)
            meta_for (int bj = 0; bj < gm; bj++)
                meta_for (int ti = 0; ti < B0; ti++)
                    meta_for (int tj = 0; tj < B1; tj++) {
                        int i = bi * B0 + ti;
                        int j = bj * B1 + tj;
                        if (i < m && j < m && j >= i) {
                            double c = 0.0;
                            for (int k = 0; k < n; k++)
                                c += data[k][i] * data[k][j];
                            c /= float_n - 1.0;
                            cov[i][j] = c;
                            cov[j][i] = c;
                        }
                    }
    }
}

void covariance_ref(int m, int n, double float_n, double data[n][m], double mean[m], double cov[m][m])
{
    for (int j = 0; j < m; j++) {
        mean[j] = 0.0;
        for (int i = 0; i < n; i++)
            mean[j] += data[i][j];
        mean[j] /= float_n;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            data[i][j] -= mean[j];
    for (int i = 0; i < m; i++)
        for (int j = i; j < m; j++) {
            double c = 0.0;
            for (int k = 0; k < n; k++)
                c += data[k][i] * data[k][j];
            c /= float_n - 1.0;
            cov[i][j] = c;
            cov[j][i] = c;
        }
}
