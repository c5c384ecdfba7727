void f(int n, float *a)
{
    meta_schedule {
        meta_for (int i = 0; i < n; i++)
            meta_for (int j = 0; j < 4; j++)
                a[i * 4 + j] = 0.0f
    }
}
