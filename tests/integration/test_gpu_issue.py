"""The rehearsal of issue 33's one command (bench/gpu_issue.sh) on the emulated GPU of tests/fakes,
its cheap parts: the plan, a serial C prefill in the background that the bench part then reads
from the serial cache instead of running the serial C again, a new size as a named part with the
default dispatcher at every point, and the page written whatever the deadline. The whole command
(PPCG's build and register tiles take minutes here) is rehearsed by hand: docs/bench/README.md."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

ROOT = Path(__file__).resolve().parents[2]
FAKES = ROOT / "tests" / "fakes"

pytestmark = pytest.mark.timeout(240)


def test_the_rehearsal_of_the_cheap_parts(tmp_path):
    results = tmp_path / "res"
    env = dict(os.environ, QUICK="1", RESULTS=str(results), DEADLINE="400", PYTHON=sys.executable,
               PATH=os.pathsep.join([str(FAKES / "bin"), os.environ.get("PATH", "")]),
               PYTHONPATH=os.pathsep.join(p for p in (str(FAKES), os.environ.get("PYTHONPATH", "")) if p))
    env.pop("OUT", None)
    done = subprocess.run(["bash", str(ROOT / "bench" / "gpu_all.sh"), "serial:jacobi1d@N1048578_T4",
                           "jacobi1d@N1048578_T4", "page"], capture_output=True, text=True, env=env, timeout=230)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # the plan: the real sizes' estimates, from the committed runs
    plan = (results / "plan.txt").read_text()
    assert "jacobi1d@N1048578_T4" in plan and "from h100/jacobi1d_N32770_T4 (x32 the work)" in plan
    assert "in the background from the start" in plan
    # the prefill ran the serial C of both points; the bench read them (the same times), ran none
    assert "serial_prefill jacobi1d N1048578_T4: 2 points" in (results / "serial_prefill.log").read_text()
    cached = sorted((results / "serial-cache").glob("*.npz"))
    assert len(cached) == 2
    doc = json.loads((results / "jacobi1d_N1048578_T4.json").read_text())
    prefilled = sorted(float(numpy.median(numpy.load(p)["__times__"])) for p in cached)
    assert sorted({r["serial_s"] for r in doc["results"]}) == pytest.approx(prefilled, rel=0, abs=0)
    # every case and the default dispatcher at every point, right against the serial C
    assert all(r["correct"] for r in doc["results"]) and len(doc["dispatcher_default"]) == 2
    assert all(d["correct"] for d in doc["dispatcher_default"])
    page = (results / "GPU.md").read_text()
    assert "| jacobi1d: default dispatcher >= 90 % of the best case, every point |" in page
    assert "gpu_all: done in" in done.stdout
