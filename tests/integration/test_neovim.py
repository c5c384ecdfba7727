"""A real editor: headless Neovim (Debian's 0.7) talks to `parakern serve`."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, SAMPLES, WRONG

NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="Neovim is not installed (.ci/run installs it)")


def run_nvim(path, tmp_path):
    out = tmp_path / "received.json"
    env = dict(os.environ, PARAKERN_NVIM_OUT=str(out), PARAKERN_NVIM_FILE=str(path),
               PARAKERN_PYTHON=sys.executable, HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path))
    subprocess.run([NVIM, "--headless", "--clean", "-u", str(ROOT / "tests" / "neovim" / "init.lua")],
                   cwd=ROOT, env=env, timeout=180, check=True, capture_output=True)
    return json.loads(out.read_text())


def all_diagnostics(received, path):
    latest = {}
    for published in received["diagnostics"]:
        if published["uri"].endswith(path.name):
            latest = published
    return latest.get("diagnostics", [])


def test_neovim_shows_the_cases_and_lenses_of_a_sample(tmp_path):
    path = SAMPLES / "matadd.c"
    received = run_nvim(path, tmp_path)
    diagnostics = all_diagnostics(received, path)
    cases = [d for d in diagnostics if d["message"].startswith("case ")]
    # one case: 12 and 16 registers a thread take the same registers per block
    assert len(cases) == 1 and all(d["severity"] == 3 and d["source"] == "parakern" for d in cases)
    # On the meta_schedule keyword (line 10, 0-based 9, columns 4..17).
    assert all(d["range"]["start"] == {"line": 9, "character": 4} for d in cases)
    titles = [lens["command"]["title"] for lens in received["lenses"] if lens.get("command")]
    # the case count first, then (once the time model has ranked the cases) what runs on each GPU
    assert any(t.startswith(("1 case · ", "runs case 1 on h100, a100, t4 · ")) for t in titles), titles
    assert "Insert dispatcher" in titles and "Bench" in titles


def test_neovim_shows_an_error_at_its_exact_place(tmp_path):
    path = WRONG / "write_param.c"
    received = run_nvim(path, tmp_path)
    (error,) = [d for d in all_diagnostics(received, path) if d["severity"] == 1]
    assert error["code"] == "PK004"
    assert error["range"] == {"start": {"line": 6, "character": 16}, "end": {"line": 6, "character": 17}}
