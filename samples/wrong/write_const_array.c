void clear(int n, int B, const float a[n], float b[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++) {
                b[i * B + j] = a[i * B + j];
                a[i * B + j] = 0.0f;
            }
    }
}
