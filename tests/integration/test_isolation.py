"""No module from the workspace or the current directory in any process parakern starts.

A workspace gets a module, or a package, under the name of every module of the standard
library and of every installed distribution (`multiprocessing/`, `shutil.py`, `sympy/`,
`z3/`, `parakern/`...): each writes a marker when it is imported, then hands over to the real
module, so that the run goes on to its end. The server, started as VS Code starts it (the
`parakern` script in the workspace folder) and opened on a C file, its analysis processes,
multiprocessing's resource tracker, `verify`'s runner and clean-up process, and the commands
`emit`, `optimize`, `tune` run there: no marker may appear.

`python -m` itself imports a few modules (runpy's) through sys.path before any of
parakern's code runs; those are not planted for the `python -m` runs (the interpreter's,
not parakern's), everything after them is.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from parakern.process import lifeline
from unit.test_isolation import (  # fixtures, found by their names
    COMMANDS,
    ROOT,
    SCRIPT,
    _serve,
    imported,
    module_names,
    needs_compilers,
    needs_script,
    plant,
    workspace,  # noqa: F401
)

sys.path.insert(0, str(ROOT / "tests" / "lsp"))


def test_the_planted_modules_are_seen():
    """The check can fail: a `python -c` child in the workspace imports them (as
    multiprocessing's children did), an isolated one does not."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        root, markers = Path(tmp) / "w", Path(tmp) / "m"
        root.mkdir()
        markers.mkdir()
        plant(root, markers, {"shutil", "multiprocessing"})
        subprocess.run([sys.executable, "-c", "import shutil, multiprocessing"], cwd=root, check=True)
        assert {m.name.split("-")[0] for m in markers.iterdir()} == {"shutil", "multiprocessing"}
        for m in markers.iterdir():
            m.unlink()
        subprocess.run(lifeline.python_command("-c", "import shutil, multiprocessing"), cwd=root, check=True)
        assert imported(markers) == []


def test_janitor_imports_nothing_from_the_current_directory(tmp_path, monkeypatch):
    """verify's clean-up process: `shutil` from the current directory ran (issue 34)."""
    root, markers = tmp_path / "w", tmp_path / "m"
    root.mkdir()
    markers.mkdir()
    plant(root, markers, module_names())
    doomed = tmp_path / "doomed"
    doomed.mkdir()
    (doomed / "file").write_text("x")
    monkeypatch.chdir(root)
    lifeline.Janitor(str(doomed)).close()      # as when this process ends: the janitor removes it
    assert not doomed.exists()
    assert imported(markers) == []


@pytest.mark.slow
@pytest.mark.editor
@needs_script
def test_server_in_a_hostile_workspace(workspace):
    root, markers, planter = workspace
    planter()
    _serve(root, [str(SCRIPT), "serve", "--log-file", "server.log"])
    assert imported(markers) == []
    assert (root / "server.log").is_file()     # named from the editor's directory, not the server's own


@pytest.mark.slow
@pytest.mark.editor
@pytest.mark.parametrize("module", ["parakern", "parakern.lsp"])
def test_server_by_python_m_in_a_hostile_workspace(workspace, module):
    root, markers, planter = workspace
    planter(python_m=True)
    _serve(root, [sys.executable, "-m", module] + (["serve"] if module == "parakern" else []))
    assert imported(markers) == []


@pytest.mark.slow
@needs_script
@pytest.mark.parametrize("name", ["verify", "emit", "optimize", "tune"])
def test_commands_in_a_hostile_workspace(workspace, name):
    if name == "verify" and (shutil.which("gcc") is None or shutil.which("g++") is None):
        pytest.skip("verify needs gcc and g++")
    root, markers, planter = workspace
    planter()
    done = subprocess.run([str(SCRIPT), *COMMANDS[name]], cwd=root, capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr[-2000:]
    assert imported(markers) == []


@pytest.mark.slow
@needs_compilers
def test_verify_by_python_m_in_a_hostile_workspace(workspace):
    root, markers, planter = workspace
    planter(python_m=True)
    done = subprocess.run([sys.executable, "-m", "parakern", *COMMANDS["verify"]], cwd=root, capture_output=True,
                          text=True, timeout=280)
    assert done.returncode == 0, done.stderr[-2000:]
    assert imported(markers) == []
