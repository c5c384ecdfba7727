void f(int n, float a[n][n][n][n][n][n][n])
{
    meta_schedule {
        meta_for (int i0 = 0; i0 < n; i0++)
        meta_for (int i1 = 0; i1 < n; i1++)
        meta_for (int i2 = 0; i2 < n; i2++)
        meta_for (int i3 = 0; i3 < n; i3++)
        meta_for (int i4 = 0; i4 < n; i4++)
        meta_for (int i5 = 0; i5 < n; i5++)
        meta_for (int i6 = 0; i6 < n; i6++)
            a[i0][i1][i2][i3][i4][i5][i6] = 0.0f;
    }
}
