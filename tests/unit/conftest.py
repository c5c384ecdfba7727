"""The unit tier: in process. No test here starts a process (ptxas's register counts come from
tests/golden/ptxas.json, recorded; g++, nvcc, editors and servers are the integration tier's),
and every analysis of a sample is made once for the whole test run (conftest.analysed)."""
import multiprocessing.process
import subprocess

import pytest

from conftest import RECORDING, use_recorded_ptxas


class ProcessStarted(AssertionError):
    pass


@pytest.fixture(autouse=True)
def in_process(monkeypatch):
    use_recorded_ptxas(monkeypatch)
    if RECORDING:            # recording ptxas's answers: ptxas runs
        yield
        return
    def refuse(self, args=None, *rest, **options):
        raise ProcessStarted(f"a unit test started a process ({args or self!r}): it belongs in tests/integration")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse)
    yield
