"""The command line: exit codes, the JSON contract, the readable report."""
import json
import signal
import sys

import pytest

from conftest import ROOT, SAMPLES, WRONG
from parakern.commands.cli import main


def test_a_serial_loop_shows_its_start_and_step(tmp_path, capsys):
    """`for (int di = -R; di <= R; di++)` was printed `serial di < 3`: two of its five trips hidden."""
    source = tmp_path / "g.c"
    source.write_text("""#define R 2
void g(int n, int B, float a[n], float b[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++) {
                float s = 0.0f;
                for (int di = -R; di <= R; di++)
                    s += a[(i * B + j + di + n) % n];
                for (int k = 1; k < 9; k += 2)
                    s += 1.0f;
                b[i * B + j] = s;
            }
    }
}
""")
    assert main(["optimize", str(source)]) == 0
    out = capsys.readouterr().out
    assert "serial -2 <= di < 3 inside each thread" in out and "serial 1 <= k < 9 step 2 inside each thread" in out


def test_json_document_follows_the_contract(capsys):
    assert main(["optimize", str(SAMPLES / "jacobi1d.c"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["file"].endswith("jacobi1d.c") and doc["target"] == "sm_80"
    (s,) = doc["schedules"]
    assert s["id"] == "jacobi1d:0"
    assert s["range"]["start"] == {"line": 8, "character": 8}  # 0-based, LSP style
    assert s["parameters"] == {"data": ["N"], "program": ["s", "B", "t"]}
    assert s["arrays"] == [{"name": "a", "type": "int", "dims": ["2*N"], "read": True,
                            "written": True, "cached": True}]
    assert s["grid"] == ["dim"] and s["block"] == ["B"]
    assert s["cache"] == ["a"]
    assert doc["diagnostics"] == []
    shared = {c["counters"]["shared_bytes"] for c in s["cases"]}
    assert {"8*B*s + 8", "8*B + 8", 0} <= shared
    for case in s["cases"]:
        assert case["constraints"] and case["decisions"] and case["verified"]
        assert set(case["counters"]) == {"registers", "shared_bytes", "threads"}
        assert isinstance(case["counters"]["registers"], int)
        assert {"R_B", "Z", "T"} <= set(case["witness"])
        assert case["needs"] and isinstance(case["profiles"], list) and case["theoretical"] == (not case["profiles"])
        assert case["kernel"].count("__global__ void jacobi1d_0_case") == 1
        assert "<<<" in case["launch"] and "dim3 block(" in case["launch"]
    assert s["coverage"]["proven"] is True
    assert all("T < B" in u or "R_B <" in u or "Z <" in u or "65536 <= s" in u for u in s["coverage"]["uncovered"])


def test_errors_are_diagnostics_with_exit_zero(capsys):
    assert main(["optimize", str(WRONG / "write_param.c"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (d,) = doc["diagnostics"]
    assert d["code"] == "PK004" and d["severity"] == "error"
    assert d["range"] == {"start": {"line": 6, "character": 16}, "end": {"line": 6, "character": 17}}
    assert doc["schedules"] == []


def test_text_report_shows_diagnostics_gcc_style(capsys):
    assert main(["optimize", str(WRONG / "undeclared.c")]) == 0
    out = capsys.readouterr().out
    assert "undeclared.c:6:32: error: 'scale' is not declared before this meta_schedule [PK010]" in out


@pytest.mark.parametrize("command", [["tune", "--profile", "h100", "--data", "N=64"],
                                     ["bench", "--plan-only", "--profile", "h100", "--data", "N=64"]])
def test_a_command_that_needs_a_tree_says_why_there_is_none(command, capsys):
    """tune and bench on a file whose schedule is rejected: the rejection with its position,
    then the one line; before, only "no schedule with a case tree ... (schedules: none)"."""
    assert main([command[0], str(WRONG / "loop_variable_write.c"), *command[1:]]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].endswith("loop_variable_write.c:7:17: error: 'j' is a loop variable and cannot be assigned "
                           "in the loop body [PK017]")
    assert err[1].startswith(f"parakern {command[0]}: no schedule with a case tree in ")
    assert err[1].endswith("(schedules: none); the diagnostics above say why")


def test_a_size_beyond_its_c_type_is_said(capsys):
    """tune --data n=10**12 for an int n: C would wrap it; before, tune ranked configurations."""
    assert main(["tune", str(SAMPLES / "saxpy.c"), "--profile", "h100", "--data", "n=1000000000000"]) == 1
    captured = capsys.readouterr()
    assert "infeasible: 11 × n = 1000000000000 is beyond the range of its type int" in captured.out
    assert "Traceback" not in captured.err


BOM_SOURCE = """void f(int n, int B, float a[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                a[i * B + j] = zz;
    }
}
"""


def test_a_byte_order_mark_is_skipped_as_gcc_does(tmp_path, capsys):
    """A file saved with a UTF-8 BOM: before, 'Illegal character' at 1:1; now the real error,
    at gcc's column; an editor that keeps U+FEFF in the text gets the same position."""
    path = tmp_path / "bom.c"
    path.write_bytes(b"\xef\xbb\xbf" + BOM_SOURCE.encode())
    assert main(["optimize", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{path}:6:32: error: 'zz' is not declared before this meta_schedule [PK010]" in out
    from parakern.pipeline import analyze
    (d,) = analyze("\ufeff" + BOM_SOURCE, "bom.c").diagnostics
    assert (d.code, d.span.line, d.span.col) == ("PK010", 6, 32)


SPIN = """#include "metafork.h"

void spin(int n, int B, float alpha, float *x, float *y)
{
    int blocks = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < blocks; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n)
                    for (int k = 0; k < 2000000000; k++)
                        y[i] = alpha * y[i] + x[i];
            }
    }
}
"""


def test_an_interrupt_a_library_turned_into_an_error_is_an_interrupt(monkeypatch):
    """Ctrl-C while ptxas ran (PtxasError: ptxas failed (exit -2)) or while ctypes called
    (ArgumentError: KeyboardInterrupt) became PK099 and a complete-looking .cu with exit 0; z3
    took SIGINT for itself while solving, and the command went on as if nothing had happened."""
    import z3

    from parakern.frontend import analyze_source
    from parakern.pipeline import _failed
    from parakern.process import interrupts
    schedule = analyze_source((SAMPLES / "saxpy.c").read_text(), "s.c").schedules[0]
    assert _failed(schedule, RuntimeError("ptxas failed (exit -2)")).diagnostics[0].code == "PK099"
    monkeypatch.setattr(interrupts, "_received", True)
    with pytest.raises(KeyboardInterrupt):
        _failed(schedule, RuntimeError("ptxas failed (exit -2)"))
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        interrupts.install()
        assert z3.get_param("ctrl_c") == "false" and signal.getsignal(signal.SIGINT) is interrupts.handler
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        z3.set_param("ctrl_c", True)
        sys.unraisablehook = sys.__unraisablehook__


@pytest.mark.parametrize("page, marker, lines", [
    ("README.md", "`parakern optimize samples/jacobi1d.c` prints its case tree", 7),
    ("docs/cli.md", "For example (`samples/jacobi1d.c`):", 15)])
def test_the_documented_example_is_what_optimize_prints(capsys, page, marker, lines):
    """The documented jacobi1d example had drifted (a bound of 31 where the tool says 35). Its lines
    are the tool's, z3's witnesses and the seconds aside (they depend on z3's version and the machine)."""
    import re
    text = (ROOT / page).read_text()
    start = text.index(marker)
    block = text[text.index("```\n", start) + 4:]
    block = block[:block.index("```")]
    assert main(["optimize", str(SAMPLES / "jacobi1d.c")]) == 0
    out = capsys.readouterr().out

    def comparable(text):
        return [re.sub(r", [\d.]+ s$", "", line) for line in text.splitlines() if "witness:" not in line]
    expected = comparable(block)
    assert len(expected) >= lines and all(line in comparable(out) for line in expected)


def test_every_diagnostic_code_is_registered_and_documented():
    """diagnostics.CODES, the stable registry, lacked PK019, PK023 and PK040."""
    import re

    from parakern.source.diagnostics import CODES
    used = set()
    for path in (ROOT / "server" / "parakern").rglob("*.py"):
        used |= set(re.findall(r'"(PK\d{3})"', path.read_text()))
    documented = {code for cell in re.findall(r"^\| (PK[^|]*)\|", (ROOT / "docs" / "diagnostics.md").read_text(), re.M)
                  for code in re.findall(r"PK\d{3}", cell)}
    assert used <= set(CODES), sorted(used - set(CODES))
    assert set(CODES) <= documented, sorted(set(CODES) - documented)

