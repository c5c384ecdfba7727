"""Compile-time block sizes (issue 16, point 5): where a program parameter is fixed (an
assertion `B == 128`, or values chosen with `emit --fix`), each case that can run there gets
an instance with the values as constants beside its parametric kernel, and the dispatcher
launches the instance when the run-time values are those (analysis/fixed.py,
codegen/kernel_source.py, codegen/tree_dispatcher.py). The CPU emulation runs both (test_verify's
Session); nvcc and ptxas compile them where installed."""
from __future__ import annotations

import re
import shutil
from types import SimpleNamespace

import pytest
import sympy

from conftest import KERNEL_HEAD, SAMPLES
from parakern.analysis.fixed import asserted, case_points, fixed_points
from parakern.codegen import emit_file
from parakern.pipeline import analyze
from parakern.symbolic.symbols import sym

NVCC = shutil.which("nvcc")
MATMUL = (SAMPLES / "matmul.c").read_text()
SAXPY_ASSERTED = """#include <assert.h>
void saxpy(int n, int B, float alpha, float x[n], float y[n])
{
    assert(B == 128);
    assert(n % B == 0);
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                y[i * B + j] = alpha * x[i * B + j] + y[i * B + j];
    }
}
"""
FIX = ({"B0": 16, "ub1": 32},)


def _kernels(text: str) -> dict:
    """name -> (parameters, body) of each __global__ function."""
    out = {}
    for m in re.finditer(KERNEL_HEAD + r"(\w+)\(([^)]*)\)\s*\{(.*?)\n\}", text, re.S):
        out[m.group(1)] = (" ".join(m.group(2).split()), m.group(3))
    return out


@pytest.mark.parametrize("condition", ["B == 128", "128 == B", "2 * B == 256", "B - 128 == 0"])
def test_an_assertion_fixes_a_parameter_however_it_is_written(condition):
    """`2 * B == 256` and `B - 128 == 0` fixed nothing: only `B == 128` was read (bug hunt)."""
    s = analyze(SAXPY_ASSERTED.replace("B == 128", condition), "a.c").results[0].schedule
    assert asserted(s) == {"B": 128}


def test_an_asserted_block_size_gets_its_instance_without_being_asked():
    text = emit_file(analyze(SAXPY_ASSERTED, "a.c"))
    kernels = _kernels(text)
    assert {"saxpy_0_case1", "saxpy_0_case1_B_128"} <= set(kernels)
    assert "const int B = 128;" in kernels["saxpy_0_case1_B_128"][1]


def test_a_case_whose_constraints_fail_at_the_values_gets_no_instance():
    tree = analyze(MATMUL, "m.c").results[0].tree
    points = ((("B0", 16), ("ub1", 32)),)             # B0 * ub1 <= T: T is the device's, still open
    assert all(case_points(c, points) == points for c in tree.cases)
    case = tree.cases[0]
    only_small = SimpleNamespace(kernel=case.kernel, constraints=SimpleNamespace(
        relations=case.constraints.relations + (sympy.Le(sym("B0") * sym("ub1"), 256),)))
    assert case_points(only_small, points) == ()
    assert case_points(only_small, ((("B0", 8), ("ub1", 32)),)) == ((("B0", 8), ("ub1", 32)),)
    # 4096 threads: beyond every known GPU's 1024, whatever T the device has
    assert case_points(case, ((("B0", 64), ("ub1", 64)),)) == ()


def test_a_fixed_negative_value_names_its_instance_with_an_identifier():
    shift = """void shift(int n, int B, int d, float a[n], float b[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                if (i * B + j + d >= 0 && i * B + j + d < n)
                    b[i * B + j] = a[i * B + j + d];
    }
}
"""
    text = emit_file(analyze(shift, "shift.c"), ({"B": 32, "d": -1},))
    assert "shift_0_case1_B_32_d_m1(" in text and "_-1" not in text


# ------------------------------------------------------------------ on the CPU emulation
@pytest.fixture(scope="module")
def session():
    from parakern.verify import Session
    path = SAMPLES / "matmul.c"
    with Session(path.read_text(), str(path), emit=lambda analysis: emit_file(analysis, FIX)) as s:
        yield s


ASSERTED_S = """#include <assert.h>
void g(int n, int B, int s, float x[n], float y[n])
{
    assert(s == 2);
    assert(n % (s * B) == 0);
    meta_schedule {
        meta_for (int i = 0; i < n / (s * B); i++)
            meta_for (int j = 0; j < B; j++)
                for (int k = 0; k < s; k++) {
                    int p = (i * s + k) * B + j;
                    y[p] = 2.0f * x[p];
                }
    }
}
"""

KEPT = """void m(int n, int B0, int ub1, int s, float a[n][n], float b[n][n], ELEM c[n][n], float d[n][n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B0; i++)
            meta_for (int j = 0; j < n / (ub1 * s); j++)
                for (int k = 0; k < n / B0; k++)
                    meta_for (int v = 0; v < B0; v++)
                        meta_for (int u = 0; u < ub1; u++) {
                            int p = i * B0 + v;
                            int q = j * ub1 * s + u;
                            LOCAL
                            for (int w = START; w < BOUND; w++) {
                                float acc = c[p][COLUMN];
                                for (int z = 0; z < B0; z++) {
                                    INNER
                                    acc += a[p][B0 * k + z] * b[B0 * k + z][q];
                                }
                                c[p][COLUMN] = acc;
                            }
                        }
    }
}
"""
PLAIN = {"ELEM": "float", "LOCAL": "", "START": "0", "BOUND": "s", "COLUMN": "q + w * ub1", "INNER": ""}


def test_a_local_declared_again_in_its_serial_loop_is_an_error():
    """`for (int w ...) { int w = 0; ... }`: valid C99, refused by C++ (the emitted CUDA failed
    to compile, and verify said so); one PK024 at the declared name."""
    text = KEPT
    for key, value in {**PLAIN, "INNER": "int z = 0; d[p][q] = z;"}.items():
        text = text.replace(key, value)
    result = analyze(text, "m.c")
    (d,) = result.diagnostics
    assert d.code == "PK024" and "'z' is already the variable of an enclosing loop" in d.message
    assert (d.span.line, d.span.col, d.span.end_col) == (15, 41, 42)


def test_an_assertion_under_a_condition_fixes_nothing():
    """`if (flag) assert(B == 32);` says nothing of B where flag is 0: before, it fixed B (emit
    --fix B=256 was refused, tune offered B = 32 alone). An assertion in the branch that holds
    the schedule still counts."""
    body = """    int g = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++)
                if (b * B + t < n)
                    y[b * B + t] = 2.0f * x[b * B + t];
    }
"""
    head = "#include <assert.h>\nvoid f(int n, int B, int flag, float x[n], float y[n])\n{\n"
    conditional = head + "    if (flag)\n        assert(B == 32);\n    while (flag--)\n        assert(B == 64);\n" + body + "}\n"
    s = analyze(conditional, "c.c").results[0].schedule
    assert asserted(s) == {} and fixed_points(s, ({"B": 256},)) == ((("B", 256),),)
    inside = head + "    if (flag) {\n        assert(B == 32);\n" + body + "    }\n}\n"
    assert asserted(analyze(inside, "i.c").results[0].schedule) == {"B": 32}


def test_an_assertion_on_a_scalar_the_schedule_does_not_read_is_on_its_definition():
    """`int h = n / B; assert(h >= 2048);` before a schedule that never reads h: the fact is on
    n / B (h stood as a free unknown: tune refused every B, verify found no point)."""
    text = """#include <assert.h>
void f(int n, int B, float x[n], float y[n])
{
    int h = n / B;
    assert(h >= 2048);
    int g = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++)
                if (b * B + t < n)
                    y[b * B + t] = 2.0f * x[b * B + t];
    }
}
"""
    s = analyze(text, "h.c").results[0].schedule
    (fact,) = [f for f in s.facts if f.origin == "assert"]
    assert {x.name for x in fact.relation.free_symbols} == {"n", "B"}
    n, B = sym("n"), sym("B")
    assert fact.relation.subs({n: 1 << 20, B: 256}) is sympy.true
    assert fact.relation.subs({n: 1 << 20, B: 1024}) is sympy.false


def test_an_assertion_that_a_block_is_a_multiple_of_a_warp_fixes_nothing():
    """`assert(B % 32 == 0)`: sympy cannot solve Mod(B, 32) == 0, and emit said PK099, the bench
    NotImplementedError, emit --fix a traceback."""
    from parakern.analysis.fixed import asserted
    from parakern.codegen import emit_file
    from parakern.pipeline import analyze
    source = """#include <assert.h>
void ab(int n, int B, float a[n], float b[n])
{
    assert(B % 32 == 0);
    assert(n % B == 0);
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                b[i * B + j] = a[i * B + j] + 1.0f;
    }
}
"""
    analysis = analyze(source, "ab.c")
    (result,) = analysis.results
    assert asserted(result.schedule) == {}
    text = emit_file(analysis, ({"B": 64},))
    assert "ab_0_dispatch(" in text and "ab_0_case1_B_64" in text

