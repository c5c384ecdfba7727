"""exp, log, pow, sin...: libdevice on the GPU, the C library on the host."""
import ctypes
import math
import shutil
import subprocess
from ctypes import c_double, c_float, c_int

import pytest

from conftest import ROOT
from parakern.counters.registers import RegisterCounter
from parakern.ir import HostKernel, kernel_ptx
from unit.test_libdevice import SOURCE, kernel, needs_libdevice


# the PTX links libdevice from the toolkit (its text differs between installations): ptxas runs
@needs_libdevice
@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_math_functions_link_libdevice_and_assemble(level):
    ptx = kernel_ptx(kernel(), level)
    assert ".extern .func" not in ptx  # everything the kernel calls is defined in the module
    assert len(ptx) < 200_000          # only the functions used, not all of libdevice
    if shutil.which("ptxas"):
        assert RegisterCounter().measure(kernel()).value > 0


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
