"""exp, log, pow, sin...: libdevice on the GPU, the C library on the host."""
import ctypes
import math
import shutil
import subprocess
from ctypes import c_double, c_float, c_int

import pytest

from conftest import ROOT
from parakern.counters.registers import RegisterCounter
from parakern.frontend import analyze_source
from parakern.ir import HostKernel, LoweringError, kernel_ptx, lower, optimize
from parakern.ir import libdevice
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


@needs_libdevice
@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_math_functions_link_libdevice_and_assemble(level):
    ptx = kernel_ptx(kernel(), level)
    assert ".extern .func" not in ptx  # everything the kernel calls is defined in the module
    assert len(ptx) < 200_000          # only the functions used, not all of libdevice
    if shutil.which("ptxas"):
        assert RegisterCounter().measure(kernel()).value > 0


def test_missing_libdevice_is_a_clear_lowering_error(monkeypatch):
    monkeypatch.setattr(libdevice, "_bitcode", lambda: None)
    with pytest.raises(LoweringError, match="libdevice from the CUDA toolkit.*CUDA_HOME") as error:
        optimize(lower(kernel()), 0)
    assert "expf" in str(error.value) and "pow" in str(error.value)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_host_run_matches_gcc(tmp_path):
    source = tmp_path / "expo.c"
    source.write_text(SOURCE)
    library = tmp_path / "libexpo.so"
    subprocess.run(["gcc", "-O0", "-shared", "-fPIC", "-include", str(ROOT / "samples" / "metafork.h"),
                    str(source), "-o", str(library), "-lm"], check=True, capture_output=True, timeout=60)
    serial = ctypes.CDLL(str(library))
    n, B = 12, 4
    xs = [0.1 * k - 0.5 for k in range(n)]
    ys = [0.3 * k for k in range(n)]
    ex, ey = (c_float * n)(*xs), (c_double * n)(*ys)
    serial.expo.argtypes = [c_int, c_int, ctypes.c_void_p, ctypes.c_void_p]
    serial.expo(n, B, ctypes.cast(ex, ctypes.c_void_p), ctypes.cast(ey, ctypes.c_void_p))
    gx, gy = (c_float * n)(*xs), (c_double * n)(*ys)
    HostKernel(kernel()).launch(dict(n=n, B=B, x=gx, y=gy))
    assert all(math.isclose(a, b, rel_tol=1e-6) for a, b in zip(gx, ex))
    assert all(math.isclose(a, b, rel_tol=1e-12) for a, b in zip(gy, ey))
