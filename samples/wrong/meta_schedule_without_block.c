void f(int n, float a[n])
{
    meta_schedule
}
