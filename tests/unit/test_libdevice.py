"""exp, log, pow, sin...: libdevice on the GPU, the C library on the host."""
import pytest

from parakern.frontend import analyze_source
from parakern.ir import LoweringError, libdevice, lower, optimize
from parakern.kernel import Kernel

SOURCE = """#include <math.h>
void expo(int n, int B, float x[n], double y[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++) {
                int k = i * B + j;
                x[k] = expf(x[k]) + powf(x[k], 2.0f) - tanhf(x[k]);
                y[k] = log(y[k] + 1.0) * sin(y[k]) + cos(y[k]) / exp(y[k]);
            }
    }
}
"""


def kernel() -> Kernel:
    (schedule,) = analyze_source(SOURCE, "expo.c").schedules
    return Kernel.initial(schedule)


needs_libdevice = pytest.mark.skipif(libdevice._bitcode() is None,
                                     reason="the CUDA toolkit's libdevice is not installed")


def test_missing_libdevice_is_a_clear_lowering_error(monkeypatch):
    monkeypatch.setattr(libdevice, "_bitcode", lambda: None)
    with pytest.raises(LoweringError, match="libdevice from the CUDA toolkit.*CUDA_HOME") as error:
        optimize(lower(kernel()), 0)
    assert "expf" in str(error.value) and "pow" in str(error.value)

