"""The command line: exit codes, the JSON contract, the readable report."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLES, WRONG, cli
from parakern.commands.cli import main
from unit.test_cli import SPIN

sys.path.insert(0, str(ROOT / "tests" / "lsp"))
from wire import alive, children_of, cmdline  # noqa: E402


def test_optimize_prints_each_schedule(capsys):
    assert main(["optimize", str(SAMPLES / "jacobi1d.c")]) == 0
    out = capsys.readouterr().out
    assert "jacobi1d:0" in out
    assert "i in [0, dim) -> blockIdx.x" in out and "j in [0, B) -> threadIdx.x" in out
    assert "data parameters     N" in out and "program parameters  s, B, t" in out
    assert "array a: int[2*N]  read, written, cached" in out


def test_unreadable_file_is_exit_2_with_one_line():
    result = cli("optimize", "no/such/file.c")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "cannot read no/such/file.c" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("args", [[], ["optimize"], ["frobnicate"], ["optimize", "x.c", "--target", "sm_1"]])
def test_bad_usage_is_exit_2(args):
    result = cli(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "usage:" in result.stderr


@pytest.mark.parametrize("command", [["optimize"], ["optimize", "--json"], ["profile"], ["emit"]])
def test_a_loop_variable_declared_again_is_one_diagnostic_and_no_code(command):
    """Issue 34: a meta_for redeclaring the variable of the enclosing one made optimize exit 1 with
    a traceback (sympy: duplicate argument 'ty'), profile exit 1, and emit write CUDA that nvcc
    refused ("ty" has already been declared). Now: exit 0, the PK024 at its place, no kernel."""
    path = WRONG / "redeclared_loop_variable.c"
    done = cli(command[0], str(path), *command[1:])
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    where = f"{path}:6:27: error: 'ty' is already the variable of an enclosing loop"
    if command[1:] == ["--json"]:
        (d,) = json.loads(done.stdout)["diagnostics"]
        assert d["code"] == "PK024" and d["range"]["start"] == {"line": 5, "character": 26}
        assert json.loads(done.stdout)["schedules"] == []
    else:
        assert where in done.stdout + done.stderr
    if command[0] == "emit":
        assert "__global__ void" not in done.stdout and "f_0" not in done.stdout


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_full_standard_output_is_one_line():
    """`> /dev/full`: before, a traceback ending in OSError: [Errno 28]."""
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "parakern", "emit", "samples/saxpy.c"], stdout=full,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 1
    assert done.stderr.strip() == "parakern emit: cannot write the output: No space left on device"


def test_directory_is_exit_2():
    result = cli("optimize", "samples")
    assert result.returncode == 2 and "cannot read samples" in result.stderr


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None, reason="needs gcc and g++")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_killed_verify_leaves_no_runner_and_no_directory(tmp_path, signum):
    """Killing `parakern verify` left its runner spinning at 100 % CPU (in the user's code)
    and its temporary directory behind."""
    source = tmp_path / "spin.c"
    source.write_text(SPIN)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    verify = subprocess.Popen([sys.executable, "-m", "parakern", "verify", str(source)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        runner = None
        while runner is None and time.monotonic() < deadline and verify.poll() is None:
            runner = next((p for p in children_of(verify.pid) if "runner.py" in cmdline(p)), None)
            time.sleep(0.2)
        assert runner is not None, "the runner never started"
        assert [p.name for p in scratch.iterdir()], "verify works in a temporary directory"
        time.sleep(1.0)                              # in the user's loop now
        os.kill(verify.pid, signum)
        _, err = verify.communicate(timeout=30)
        deadline = time.monotonic() + 5
        while alive(runner) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(runner), "the runner outlived verify"
        while list(scratch.iterdir()) and time.monotonic() < deadline + 5:
            time.sleep(0.1)
        assert list(scratch.iterdir()) == []
        assert "Traceback" not in err
        assert verify.returncode != 0
    finally:
        if verify.poll() is None:
            verify.kill()
            verify.wait()


# ------------------------------------------------------------------ what a command writes
def test_emit_never_writes_over_its_input(tmp_path):
    """`emit in.c -o in.c` (or a link to it) replaced the C source with the CUDA, exit 0."""
    source = tmp_path / "in.c"
    text = (SAMPLES / "saxpy.c").read_text()
    source.write_text(text)
    (tmp_path / "link.cu").symlink_to(source)
    for output in (source, tmp_path / "link.cu", tmp_path / "." / "in.c"):
        done = cli("emit", str(source), "-o", str(output))
        assert done.returncode == 2 and "is the input file" in done.stderr, done.stderr
        assert source.read_text() == text
    done = cli("emit", str(source), "-o", str(tmp_path / "out.cu"))
    assert done.returncode == 0 and (tmp_path / "out.cu").read_text().startswith("/*")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.c", "link.cu", "out.cu"]   # no file left beside


@pytest.mark.parametrize("fix", ["", ","])
def test_an_empty_fix_is_bad_usage(fix):
    done = cli("emit", str(SAMPLES / "saxpy.c"), "--fix", fix)
    assert done.returncode == 2 and "--fix takes NAME=INTEGER pairs" in done.stderr


def test_verify_writes_only_into_a_folder_of_its_own(tmp_path):
    """`verify source.c --build-dir .` in a project replaced its source.c and metafork.h (and then
    failed every point: the runner loaded serial.so by a relative name)."""
    (tmp_path / "source.c").write_text((SAMPLES / "saxpy.c").read_text())
    mine = (SAMPLES / "metafork.h").read_text() + "/* mine */\n"
    (tmp_path / "metafork.h").write_text(mine)
    done = subprocess.run([sys.executable, "-m", "parakern", "verify", "source.c", "--build-dir", "."],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 2 and "holds files of its own" in done.stderr
    assert (tmp_path / "metafork.h").read_text() == mine and sorted(p.name for p in tmp_path.iterdir()) == [
        "metafork.h", "source.c"]
    for _ in range(2):   # a folder it made is its own: it may build there again
        done = subprocess.run([sys.executable, "-m", "parakern", "verify", "source.c", "--build-dir", "build",
                               "--points", "1"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "metafork.h").read_text() == mine


def test_profile_at_a_value_beyond_its_c_type_is_bad_usage():
    """--at n=99999999999999 for an int n was profiled (and --emulate ran for minutes)."""
    done = cli("profile", str(SAMPLES / "saxpy.c"), "--at", "n=99999999999999")
    assert done.returncode == 2 and "beyond the range of its type int" in done.stderr


def test_dot_output_says_why_a_schedule_has_no_graph():
    """--format dot printed an empty line, and the syntax error nowhere."""
    done = cli("optimize", "--format", "dot", str(WRONG / "syntax_error.c"))
    assert done.returncode == 0 and "expected ';' after '0.0f' [PK001]" in done.stderr


def test_tune_asks_for_a_parameter_only_a_fact_reads():
    """polydiv's P (its `% P`, fact P != 0) was taken as 0: every configuration 'infeasible'."""
    done = cli("tune", str(SAMPLES / "polydiv.c"), "--profile", "h100", "--data", "N=1000", "--data", "M=1000")
    assert done.returncode == 2 and "no value for P; give --data P=..." in done.stderr


def test_tune_says_the_whole_fact_a_configuration_violates():
    """'violates dim >= 1 (loop bound, line 10): dim =' was cut at the derived value's parenthesis."""
    done = cli("tune", str(SAMPLES / "jacobi1d.c"), "--profile", "h100", "--data", "N=0")
    assert done.returncode == 1 and "violates dim >= 1: dim = (N - 2)/(B*s)" in done.stdout + done.stderr


@pytest.mark.parametrize("options, words", [
    (["--log-file", "/proc/no/such"], "cannot write --log-file /proc/no/such"),
    (["--tcp", "localhost:99999"], "a port from 1 to 65535"),
])
def test_serve_refuses_options_it_cannot_use_at_once(options, words):
    """A traceback (a log file in no folder), or a silent hang (port 99999)."""
    done = subprocess.run([sys.executable, "-m", "parakern", "serve", *options], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr


def test_gpu_names_are_taken_in_any_case_by_every_option(capsys):
    """--staging H100 and tune --profile H100 were taken; --occupancy H100 and bench --profile
    H100 were refused as invalid choices."""
    assert main(["optimize", str(SAMPLES / "saxpy.c"), "--occupancy", "H100"]) == 0
    assert main(["bench", str(SAMPLES / "saxpy.c"), "--plan-only", "--profile", "H100", "--data", "n=4096",
                 "--sweep", "B=64"]) == 0
    assert main(["optimize", str(SAMPLES / "saxpy.c"), "--occupancy", "X100"]) == 2
    assert "unknown GPU profile x100; known: a10" in capsys.readouterr().err
