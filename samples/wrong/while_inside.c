void f(int n, int B, float a[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++) {
                int k = 0;
                while (k < 3) {
                    a[i * B + j] += 1.0f;
                    k++;
                }
            }
    }
}
