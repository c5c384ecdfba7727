void f(int n, int B, float x[n], float y[n])
{
    int blocks = (n + B - 1) / B;
    meta_schedule {
        meta_for (int ty = 0; ty < blocks; ty++)
            meta_for (int ty = 0; ty < B; ty++) {
                int i = ty * B + ty;
                if (i < n)
                    y[i] = 2.0f * x[i] + y[i];
            }
    }
}
