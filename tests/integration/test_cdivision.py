"""C's `/` and `%` truncate toward zero: the analysis reads them so wherever an operand may be
negative (`(p - 1) % 2` at p = 0 is -1, `(p - 1) / 2` is 0), as floor / Mod where the signs
allow (symbolic/cinteger.py, frontend/signs.py). Races that only truncation makes are refused with a
witness that really collides; legal code with negative operands is accepted and verifies."""
from __future__ import annotations

import shutil
import subprocess

import pytest
import sympy
import z3

from parakern.symbolic import exact
from parakern.symbolic.cinteger import cdiv, cmod
from parakern.symbolic.constraints import Env, to_z3
from parakern.symbolic.symbols import sym
from unit.test_cdivision import NEGATIVE_OPERANDS, ROOT


# ------------------------------------------------------------------ the functions
@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_values_are_c_values_in_exact_and_z3(tmp_path):
    """cdiv / cmod at every sign of both operands, as gcc computes them; z3 pins the same."""
    dividends, divisors = range(-7, 8), (-3, -2, 2, 3)
    program = tmp_path / "div.c"
    program.write_text('#include <stdio.h>\nint main(void) { for (int a = -7; a < 8; a++) '
                       'for (int k = 0; k < 4; k++) { int b = (int[]){-3, -2, 2, 3}[k]; '
                       'printf("%d %d\\n", a / b, a % b); } return 0; }\n')
    subprocess.run(["gcc", str(program), "-o", str(tmp_path / "div")], check=True, timeout=60)
    lines = iter(subprocess.run([str(tmp_path / "div")], capture_output=True, text=True, check=True).stdout.split("\n"))
    a, b = sym("a"), sym("b")
    for x in dividends:
        for y in divisors:
            q, r = (int(v) for v in next(lines).split())
            values = {a: sympy.Integer(x), b: sympy.Integer(y)}
            assert exact.substituted(cdiv(a, b), values) == q and exact.substituted(cmod(a, b), values) == r
            assert cdiv(x, y) == q and cmod(x, y) == r     # numbers evaluate at once
            env = Env()
            solver = z3.Solver()
            solver.add(to_z3(sympy.Eq(sym("q"), cdiv(a - 10, b)), env), to_z3(sympy.Eq(sym("r"), cmod(a - 10, b)), env),
                       *env.side, env.variable(a) == x + 10, env.variable(b) == y)
            assert solver.check() == z3.sat
            model = solver.model()
            assert (model.eval(env.variable(sym("q"))).as_long(), model.eval(env.variable(sym("r"))).as_long()) == (q, r)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None, reason="verify needs gcc and g++")
def test_kernels_with_negative_operands_compute_what_the_serial_c_does(tmp_path):
    from parakern.verify import text, verify_file
    (tmp_path / "metafork.h").write_text((ROOT / "samples" / "metafork.h").read_text())
    source = tmp_path / "negative.c"
    source.write_text(NEGATIVE_OPERANDS)
    result = verify_file(source, points=3)
    assert result.ok and all(c.points for s_ in result.schedules for c in s_.cases), text(result)
