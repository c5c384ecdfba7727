"""Every sample is also plain serial C: metafork.h turns the constructs into C."""
import shutil
import subprocess

import pytest

from conftest import SAMPLES, sample_files


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
@pytest.mark.parametrize("path", sample_files(), ids=lambda p: p.name)
def test_sample_compiles_as_serial_c(path):
    result = subprocess.run(
        ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
         "-include", str(SAMPLES / "metafork.h"), str(path)],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
