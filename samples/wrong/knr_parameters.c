/* The parameters declared between the parentheses and the body (old C): PK022. */
void scale(n, B, a)
    int n; int B; float *a;
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                a[i * B + j] = 2.0f * a[i * B + j];
    }
}
