void f(int n, float a[n])
{
    meta_schedule {
        for (int i = 0; i < n; i++)
            a[i] = 0.0f;
    }
}
