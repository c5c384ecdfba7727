/* C allows C++ keywords as names; the CUDA parakern writes is C++, where they are not names */
void f(int n, int B, float x[n], float y[n])
{
    meta_schedule {
        meta_for (int new = 0; new < n / B; new++)
            meta_for (int t = 0; t < B; t++) {
                float s = 0;
                for (int k = 0; k < 2; k++) s += x[new * B + t];
                y[new * B + t] = s;
            }
    }
}
