void f(int n, int B, float a[n][n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++) {
                a[i][j] = 0.0f;
                meta_for (int k = 0; k < n; k++)
                    a[i][k] += 1.0f;
            }
    }
}
