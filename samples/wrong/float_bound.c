void scale(int n, int B, double blocks, float a[n])
{
    meta_schedule {
        meta_for (int i = 0; i < blocks; i++)
            meta_for (int j = 0; j < B; j++)
                a[i * B + j] *= 2.0f;
    }
}
