"""dispatch_tuned keeps what it measured in the file PARAKERN_TUNED_CACHE names, keyed by the
dispatcher, its kernels' fingerprint, the device's name and compute capability and the parameter
values: a second process launches the case kept at once (one launch, no measurement); a line for
another device, other kernels or other values is no answer; a foreign or corrupt file is ignored
with a message and left as it is. Processes built with g++ on the CPU emulation (parakern_cpu.h)."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import SAMPLES
from parakern.codegen.emit import emit
from parakern.codegen.tuned import CACHE_HEADER, CACHE_VARIABLE, fingerprint, tuned_name
from parakern.pipeline import analyze
from parakern.verify.build import HEADER

GXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(GXX is None, reason="g++ is not on PATH")

N, B0, B1, S = 64, 8, 8, 2
DEVICE = "parakern CPU emulation"    # what the emulated device reports (cudaDeviceProp.name), cc 8.0

MAIN = f"""
#include <stdio.h>
int main() {{
    static float a[{N}][{N}], c[{N}][{N}];
    for (int i = 0; i < {N}; i++)
        for (int j = 0; j < {N}; j++) {{ a[i][j] = (float)(i * {N} + j); c[i][j] = -1.0f; }}
    parakern_cpu_set_device(65536, 48 * 1024, 1024);
    REGISTERS
    const long before = parakern_cpu::launches;
    const int status = transpose_0_dispatch_tuned({N}, {B0}, {B1}, {S}, &a[0][0], &c[0][0]);
    int wrong = 0;
    for (int i = 0; i < {N}; i++)
        for (int j = 0; j < {N}; j++) wrong += c[j][i] != a[i][j];
    printf("%d %ld %d\\n", status, parakern_cpu::launches - before, wrong);
}}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """(the driver's path, the fingerprint of transpose's kernels)."""
    analysis = analyze((SAMPLES / "transpose.c").read_text(), "samples/transpose.c")
    emitted = emit(analysis)
    (code,) = emitted.schedules
    registers = "\n".join(f"parakern_cpu_set_registers((const void *)transpose_0_case{k}, "
                          f"{int(c.counter('registers'))});" for k, c in enumerate(analysis.results[0].tree.cases, 1))
    folder = tmp_path_factory.mktemp("tuned_cache")
    source = folder / "driver.cpp"
    source.write_text(emitted.text + MAIN.replace("REGISTERS", registers))
    build = subprocess.run([GXX, "-std=c++17", "-O1", "-include", str(HEADER), str(source), "-o", str(folder / "driver"),
                            "-pthread"], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[:3000]
    assert len(analysis.results[0].tree.cases) > 2   # several cases that fit: a measurement has a choice
    return folder / "driver", fingerprint(code.kernels)


def _run(driver, cache: "str | None") -> tuple:
    """(status, launches, wrong elements, stderr) of one process."""
    env = {k: v for k, v in os.environ.items() if k != CACHE_VARIABLE}
    if cache is not None:
        env[CACHE_VARIABLE] = cache
    done = subprocess.run([str(driver)], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    status, launches, wrong = (int(x) for x in done.stdout.split())
    assert wrong == 0
    return status, launches, done.stderr


def _line(fp: str, case: int, device: str = DEVICE, cc: str = "8.0", values: str = f"{N},{B0},{B1},{S}") -> str:
    return "\t".join(["transpose_0_dispatch_tuned", fp, device, cc, values, str(case)]) + "\n"


def test_a_second_process_launches_what_the_first_measured(program, tmp_path):
    driver, fp = program
    cache = tmp_path / "tuned.txt"
    status, launches, _ = _run(driver, str(cache))
    assert status >= 1 and launches > 2                   # measured: each case once untimed, then timed
    assert cache.read_text() == CACHE_HEADER + "\n" + _line(fp, status)
    again, launches, _ = _run(driver, str(cache))
    assert (again, launches) == (status, 1)              # at once: one launch, the case kept
    assert cache.read_text().count("\n") == 2             # nothing measured, nothing added


def test_the_file_decides_not_a_new_measurement(program, tmp_path):
    """A line written by hand for one case or another: the process launches that case, measuring nothing."""
    driver, fp = program
    cache = tmp_path / "tuned.txt"
    for case in (1, 3):
        cache.write_text(CACHE_HEADER + "\n" + _line(fp, case))
        assert _run(driver, str(cache))[:2] == (case, 1)


@pytest.mark.parametrize("other", ["device", "capability", "fingerprint", "values"])
def test_a_line_for_another_key_is_no_answer(program, tmp_path, other):
    driver, fp = program
    line = {"device": _line(fp, 1, device="NVIDIA H100 80GB HBM3"), "capability": _line(fp, 1, cc="9.0"),
            "fingerprint": _line("0123456789abcdef", 1), "values": _line(fp, 1, values=f"{N},{B0},{B1},4")}[other]
    cache = tmp_path / "tuned.txt"
    cache.write_text(CACHE_HEADER + "\n" + line)
    status, launches, err = _run(driver, str(cache))
    assert launches > 2 and not err                       # measured again, silently
    assert cache.read_text() == CACHE_HEADER + "\n" + line + _line(fp, status)   # and kept beside it


@pytest.mark.parametrize("text, said", [
    ("cudnn benchmark results\n1 2 3\n", "is not a parakern dispatch_tuned file: it is ignored"),
    (CACHE_HEADER + "\ntranspose_0_dispatch_tuned\tgarbage\n", "line 2 is not a measurement: the file is ignored"),
    (CACHE_HEADER + "\n" + "transpose_0_dispatch_tuned\tx\ty\t8.0\t1,2\tseven\n", "line 2 is not a measurement"),
    (CACHE_HEADER + "\n" + "transpose_0_dispatch_tuned\tx\ty\t8.0\t1,2", "line 2 is cut or too long"),
])
def test_a_foreign_or_corrupt_file_is_ignored_with_a_message_and_left_alone(program, tmp_path, text, said):
    driver, fp = program
    cache = tmp_path / "tuned.txt"
    cache.write_text(text)
    status, launches, err = _run(driver, str(cache))
    assert status >= 1 and launches > 2                   # measured, as without a file
    assert f"{CACHE_VARIABLE}={cache}" in err and said in err and err.count("\n") == 1
    assert cache.read_text() == text                      # never written


def test_without_the_variable_nothing_is_written(program, tmp_path, monkeypatch):
    driver, _ = program
    monkeypatch.chdir(tmp_path)
    status, launches, err = _run(driver, None)
    assert status >= 1 and launches > 2 and not err
    assert list(tmp_path.iterdir()) == []


def test_the_dispatcher_names_its_file_key():
    """The key the C writes is the one these tests read: the dispatcher's own name."""
    analysis = analyze((SAMPLES / "transpose.c").read_text(), "samples/transpose.c")
    (code,) = emit(analysis).schedules
    assert tuned_name(code.schedule) == "transpose_0_dispatch_tuned"
    assert f'"transpose_0_dispatch_tuned", "{fingerprint(code.kernels)}"' in code.tuned
