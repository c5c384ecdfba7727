void f(int n, int B, float a[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i += 2)
            meta_for (int j = 0; j < B; j++)
                a[i * B + j] = 1.0f;
    }
}
