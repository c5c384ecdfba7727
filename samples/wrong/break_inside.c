void f(int n, int B, float a[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                for (int k = 0; k < 4; k++) {
                    if (k == 2)
                        break;
                    a[i * B + j] += 1.0f;
                }
    }
}
