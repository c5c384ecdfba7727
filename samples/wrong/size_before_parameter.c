/* An array parameter sized by a parameter declared after it: C reads the parameters in
 * order, so n is undeclared at a[n] (gcc says so too). PK010, with an order that compiles. */
void scale(int B, float a[n], int n)
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                a[i * B + j] = 2.0f * a[i * B + j];
    }
}
