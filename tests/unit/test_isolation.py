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

import importlib.metadata
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from parakern.process import isolation

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "lsp"))
from wire import Wire, environment  # noqa: E402

SCRIPT = Path(sys.executable).with_name("parakern")
needs_script = pytest.mark.skipif(not SCRIPT.exists(), reason="the parakern script is not installed beside python")
needs_compilers = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None,
                                     reason="verify needs gcc and g++")
# Writes the marker, then puts the real module in its place (or fails as the real import
# would); only modules every interpreter has loaded before it runs code are used.
HANDOVER = '''import os as _os, sys as _sys
import _frozen_importlib as _bootstrap, _frozen_importlib_external as _external
with open(_os.path.join({markers!r}, __name__ + "-" + str(_os.getpid())), "w") as _f:
    _f.write(repr(_sys.argv))
_elsewhere = [p for p in _sys.path if p not in ("", ".") and _os.path.realpath(p) != {workspace!r}]
_spec = _external.PathFinder.find_spec(__name__, _elsewhere)
if _spec is None:
    raise ModuleNotFoundError("No module named " + repr(__name__), name=__name__)
_bootstrap._load(_spec)
'''


def module_names() -> set[str]:
    """Every top-level module the server or a command could import: the standard library's
    and the installed distributions' (builtin modules cannot be shadowed)."""
    names = set(sys.stdlib_module_names) - set(sys.builtin_module_names)
    names |= {n for n in importlib.metadata.packages_distributions() if n.isidentifier()}
    return names


def interpreter_imports() -> set[str]:
    """What `python -m PACKAGE` imports before the package's __main__ runs (runpy's imports)."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        package = Path(tmp) / "probe_of_runpy"
        package.mkdir()
        (package / "__init__.py").write_text("")
        (package / "__main__.py").write_text("import sys\nprint(' '.join(sorted(sys.modules)))\n")
        out = subprocess.run([sys.executable, "-m", package.name], cwd=tmp, capture_output=True, text=True,
                             check=True).stdout
    return {name.split(".")[0] for name in out.split()}


def plant(workspace: Path, markers: Path, names) -> None:
    code = HANDOVER.format(markers=str(markers.resolve()), workspace=os.path.realpath(workspace))
    packages = {n for n in names for p in sys.path if p and os.path.isfile(os.path.join(p, n, "__init__.py"))}
    for name in sorted(names):
        if name in packages:                                                  # a package, as `multiprocessing/`
            (workspace / name).mkdir()
            (workspace / name / "__init__.py").write_text(code)
        else:                                                                 # a module, as `shutil.py`
            (workspace / f"{name}.py").write_text(code)


@pytest.fixture
def workspace(tmp_path):
    """(workspace, markers, planter): the workspace holds saxpy.c; `planter(python_m)` plants."""
    root, markers = tmp_path / "workspace", tmp_path / "markers"
    root.mkdir()
    markers.mkdir()
    shutil.copy(ROOT / "samples" / "saxpy.c", root / "saxpy.c")

    def planter(python_m: bool = False) -> None:
        names = module_names() | {"parakern"}
        if python_m:            # the package run, and what the interpreter imports before it
            names -= interpreter_imports() | {"parakern"}
        plant(root, markers, names)
    return root, markers, planter


def imported(markers: Path) -> list[str]:
    return sorted(f"{m.name}: {m.read_text()}" for m in markers.iterdir())


def test_scrub_drops_the_current_directory_and_keeps_parakerns_own(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", ".", "relative/dir", str(tmp_path), str(tmp_path / "src"), "/usr/lib/x"])
    isolation.scrub_sys_path()
    assert sys.path == [str(tmp_path / "src"), "/usr/lib/x"]
    monkeypatch.chdir(isolation.OWN_ROOT)     # run from a source checkout: parakern stays importable
    monkeypatch.setattr(sys, "path", ["", isolation.OWN_ROOT])
    isolation.scrub_sys_path()
    assert sys.path == [isolation.OWN_ROOT]


def _serve(root: Path, command: list) -> None:
    """The server started in `root` as an editor starts it, opened on saxpy.c until its case
    diagnostics come (the analysis processes and the resource tracker ran), then shut down."""
    env = environment(TMPDIR=str(root.parent / "tmp"))
    (root.parent / "tmp").mkdir()
    wire = Wire(env=env, command=command, cwd=root)
    try:
        uri = (root / "saxpy.c").as_uri()
        wire.open(uri, (root / "saxpy.c").read_text())
        wire.wait_published(uri, 1, lambda ds: any("case" in d["message"] and d["severity"] == 3 for d in ds),
                            timeout=240)
    finally:
        wire.close()
    deadline = time.monotonic() + 10        # its private directory goes with it
    while list((root.parent / "tmp").iterdir()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert list((root.parent / "tmp").iterdir()) == []


COMMANDS = {"emit": ["emit", "saxpy.c", "-o", "saxpy.cu"], "optimize": ["optimize", "saxpy.c"],
            "tune": ["tune", "saxpy.c", "--profile", "h100", "--data", "n=100000"], "verify": ["verify", "saxpy.c", "--points", "1"]}

