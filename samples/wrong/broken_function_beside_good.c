/* A syntax error in g must not hide the schedule of f. */
void f(int n, int B, float a[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                a[i * B + j] = 2.0f;
    }
}

void g(int n)
{
    int x = (n + ;
}
