void f(int n, int B, float a[n])
{
    meta_schedule {
        int x = 3;
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                a[i * B + j] = x;
    }
}
