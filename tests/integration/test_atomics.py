"""Updates that iterations may make to one element at once (issue 35, point 1): histograms,
scatter-adds through an index array, an integer maximum into a cell, float sums. The dependence
test lets updates of one kind meet, every kernel makes them with CUDA's atomics (decision (7)),
and every other write that may meet another access is refused with an error (PK020), the
values read from arrays in its witness. The programs are run on the CPU emulation against the
serial C, compiled by nvcc, counted by the traffic analysis and the time model."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from parakern.codegen.emit import emit
from unit.test_atomics import NVCC, PROGRAMS, ROOT, _analysis, _write


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None, reason="verify needs gcc and g++")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_case_computes_what_the_serial_c_does(tmp_path, name):
    from parakern.verify import text, verify_file
    result = verify_file(_write(tmp_path, name), points=2)
    assert result.ok and all(c.points for s in result.schedules for c in s.cases), text(result)


@pytest.mark.slow
@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_nvcc_compiles_the_atomics_without_warnings(tmp_path, name):
    source = tmp_path / "k.cu"
    source.write_text(emit(_analysis(name)).text)
    done = subprocess.run([NVCC, "-c", "-arch=sm_80", "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra",
                           str(source), "-o", str(tmp_path / "k.o")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_the_emulated_atomics_are_indivisible(tmp_path):
    """Eight OS threads hammer one element of each type with the emulation's atomics (its
    blocks' fibers never switch inside one, but a dispatcher may run on several host threads)."""
    source = tmp_path / "hammer.cpp"
    source.write_text(r"""
#include <thread>
#include <vector>
int main() {
    int i = 0; unsigned u = 0; unsigned long long q = 0; float f = 0; double d = 0; int mx = -1; long long mn = 1 << 30;
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&, t] {
            for (int k = 0; k < 100000; ++k) {
                atomicAdd(&i, 1); atomicSub(&u, 1u); atomicAdd(&q, 3ull); atomicAdd(&f, 1.0f); atomicAdd(&d, 0.5);
                atomicMax(&mx, t * 100000 + k); atomicMin(&mn, (long long)(t * 100000 + k));
            }
        });
    for (auto &th : threads) th.join();
    printf("%d %u %llu %.1f %.1f %d %lld\n", i, u, q, f, d, mx, mn);
    return 0;
}
""")
    header = ROOT / "server" / "parakern" / "verify" / "parakern_cpu.h"
    subprocess.run(["g++", "-std=c++17", "-O2", "-pthread", "-Wall", "-Wextra", "-Werror", "-include", str(header),
                    str(source), "-o", str(tmp_path / "hammer")], check=True, timeout=120)
    out = subprocess.run([str(tmp_path / "hammer")], capture_output=True, text=True, check=True, timeout=60).stdout
    assert out.split() == ["800000", str(2**32 - 800000), "2400000", "800000.0", "400000.0", "799999", "0"]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ for the CPU emulation")
@pytest.mark.parametrize("name", ["max_cell", "scatter_sub", "quarter_sums", "int_hist"])
def test_the_static_traffic_of_atomics_is_what_the_emulation_counts(name):
    from parakern.commands.profile import _differences
    from parakern.reports.traffic import schedule_traffic
    from parakern.verify.emulated_traffic import measure
    for result in _analysis(name).results:
        point, per_case = schedule_traffic(result, small=True)
        measured = measure(result, point)
        for k, t in enumerate(per_case, 1):
            assert not isinstance(t, str) and _differences(t, measured[k]) == [], (name, k, point)
