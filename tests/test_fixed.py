"""Compile-time block sizes (issue 16, point 5): where a program parameter is fixed (an
assertion `B == 128`, or values chosen with `emit --fix`), each case that can run there gets
an instance with the values as constants beside its parametric kernel, and the dispatcher
launches the instance when the run-time values are those (analysis/fixed.py,
codegen/kernel_source.py, codegen/tree_dispatcher.py). The CPU emulation runs both (test_verify's
Session); nvcc and ptxas compile them where installed."""
from __future__ import annotations

import re
import shutil
import subprocess
from types import SimpleNamespace

import pytest
import sympy

from conftest import KERNEL_HEAD, SAMPLES
from parakern.analysis.fixed import asserted, case_points, fixed_points
from parakern.commands.cli import main
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


def test_an_assertion_fixes_a_program_parameter_and_a_choice_adds_a_point():
    s = analyze(SAXPY_ASSERTED, "a.c").results[0].schedule
    assert asserted(s) == {"B": 128}
    assert fixed_points(s) == ((("B", 128),),)
    assert fixed_points(s, ({"B": 128, "n": 4096},)) == ((("B", 128),),)    # a data size is not fixed
    assert fixed_points(s, ({"B": 64},)) == ((("B", 128),),)                 # contradicts the assertion
    m = analyze(MATMUL, "m.c").results[0].schedule
    assert asserted(m) == {} and fixed_points(m) == ()
    assert fixed_points(m, FIX + ({"ub1": 32, "B0": 16}, {"nothing": 1})) == ((("B0", 16), ("ub1", 32)),)


def test_each_case_gets_an_instance_with_the_values_as_constants():
    text = emit_file(analyze(MATMUL, "samples/matmul.c"), FIX)
    kernels = _kernels(text)
    for k in range(1, 4):        # matmul's three cases
        params, _ = kernels[f"matmul_0_case{k}"]
        fixed, body = kernels[f"matmul_0_case{k}_B0_16_ub1_32"]
        assert "int B0" in params and "int B0" not in fixed and "int ub1" not in fixed and "int s" in fixed
        assert "const int B0 = 16;" in body and "const int ub1 = 32;" in body
    assert "B0 == 16 && ub1 == 32 ? 1 : 0" in text
    assert "PARAKERN_LAUNCH(matmul_0_case3_B0_16_ub1_32, grid, block, 0, c, a, b, (int)n, (int)s);" in text
    # without a fixed value, the translation unit is the parametric one
    assert "_B0_16" not in emit_file(analyze(MATMUL, "samples/matmul.c"))


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


def test_emit_fix_on_the_command_line(tmp_path, capsys):
    out = tmp_path / "m.cu"
    assert main(["emit", str(SAMPLES / "matmul.c"), "--fix", "B0=16,ub1=32", "-o", str(out)]) == 0
    assert "matmul_0_case1_B0_16_ub1_32" in out.read_text()
    assert main(["emit", str(SAMPLES / "matmul.c"), "--fix", "B0=x"]) == 2


@pytest.mark.parametrize("fix, message", [
    ("B0=-4", "--fix B0=-4: violates B0 >= 1 (loop bound, line 16) in matmul:0 (FILE:12:5)"),
    ("B0=0", "--fix B0=0: violates B0 >= 1 (loop bound, line 16) in matmul:0 (FILE:12:5)"),
    ("B0=16,ub1=2,s=1", "--fix B0=16,ub1=2,s=1: violates B0 <= s*ub1 (assert, line 9) in matmul:0 (FILE:12:5)"),
    ("B0=65536,ub1=65536,s=1", "--fix B0=65536,ub1=65536,s=1: no kernel of matmul:0 (FILE:12:5) can run at these "
                               "values on any known GPU (case 1 needs B0*ub1 <= T)"),
    ("B0=16,B0=32", None),
    ("B0=1_6", None),
    ("B0=99999999999", "--fix B0=99999999999: B0 = 99999999999 is beyond the range of its type int "
                       "(-2147483648 to 2147483647) in matmul:0 (FILE:12:5)"),
    ("zz=4", "--fix zz=4: zz is no schedule's parameter; the parameters it fixes: B0, s, ub1"),
    ("n=64", "--fix n=64: n is not an integer program parameter (data sizes and floats stay run-time values); "
             "the parameters it fixes: B0, s, ub1"),
])
def test_emit_fix_says_which_value_cannot_be_compiled_in(tmp_path, capsys, fix, message):
    """Before: B0 = -4 made an instance named ..._B0_-4 (nvcc: error), B0 = 0 one that divides by
    zero, and an unknown name or a value against an assertion was left out without a word."""
    out = tmp_path / "m.cu"
    path = str(SAMPLES / "matmul.c")
    assert main(["emit", path, "--fix", fix, "-o", str(out)]) == 2
    if message is None:   # a name twice, Python's 1_6: not NAME=INTEGER pairs
        message = "--fix takes NAME=INTEGER pairs separated by commas, each name once"
    assert capsys.readouterr().err.strip() == "parakern emit: " + message.replace("FILE", path)
    assert not out.exists()


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


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("name, fixed", [("matmul", FIX), ("stencil2d", ({"Bx": 32, "By": 8},)),
                                         ("jacobi1d", ({"B": 32, "s": 2},))])
def test_the_instances_compile_with_nvcc_and_ptxas_without_warnings(tmp_path, name, fixed):
    source = tmp_path / f"{name}.cu"
    source.write_text(emit_file(analyze((SAMPLES / f"{name}.c").read_text(), f"samples/{name}.c"), fixed))
    done = subprocess.run([NVCC, "-arch=sm_80", "-c", "-Xptxas", "-v", "-Werror", "all-warnings", str(source),
                           "-o", str(tmp_path / "out.o")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "_B" in done.stderr and "Used" in done.stderr      # ptxas reported the instances' registers


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_an_instance_keeps_its_registers_within_what_its_own_block_can_hold(tmp_path):
    """Where the point fixes the block's size, the instance carries it as __launch_bounds__:
    matmul with cache(a, b) at B0 = 128, ub1 = 32 ((6): 1024 threads) took 76 registers without,
    more than a block of 1024 threads can have, and no dispatcher could launch it on an H200."""
    text = MATMUL.replace("meta_schedule {", "meta_schedule cache(a, b) {")
    source = tmp_path / "matmul.cu"
    source.write_text(emit_file(analyze(text, "matmul.c"), ({"B0": 128, "ub1": 32, "s": 4},)))
    cu = source.read_text()
    bounded = re.findall(r"__launch_bounds__\((\d+)\) (\w+)\(", cu)
    assert bounded and all(b == "1024" and n.endswith("_B0_128_ub1_32_s_4") for b, n in bounded), bounded
    assert not re.search(r"__launch_bounds__\(\d+\) \w+_case\d+\(", cu)    # parametric kernels: no bound
    done = subprocess.run([NVCC, "-arch=sm_90", "-cubin", "-Xptxas", "-v", str(source), "-o", str(tmp_path / "m.cubin")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    used = dict(re.findall(r"Compiling entry function '_Z\d+(\w+?_s_4)\w*' for 'sm_90'\n.*?Used (\d+) registers",
                           done.stderr, re.S))
    assert len(used) == len(bounded), (used, bounded)
    assert all(int(r) * 1024 <= 65536 for r in used.values()), used


# ------------------------------------------------------------------ on the CPU emulation

@pytest.fixture(scope="module")
def session():
    from parakern.verify import Session
    path = SAMPLES / "matmul.c"
    with Session(path.read_text(), str(path), emit=lambda analysis: emit_file(analysis, FIX)) as s:
        yield s


@pytest.mark.parametrize("values", [dict(n=64, B0=16, ub1=32, s=2),     # the instance
                                    dict(n=64, B0=8, ub1=32, s=2),      # the parametric kernel
                                    dict(n=96, B0=16, ub1=16, s=2)])
def test_both_kernels_verify_with_no_mismatch(session, values):
    from parakern.verify.points import device
    groups = -(-values["B0"] * values["ub1"] // 128)
    for R_B in (65536, 5 * 1024 * groups):   # the first case fits, then only the register-pressure one
        point = session.run("matmul:0", values, device(R_B, 1 << 16, 1024))
        assert point.ok and not point.mismatches, (point.error, point.mismatches)
        assert point.chosen and set(point.chosen) == {point.expected}


def test_the_instance_is_what_runs_where_the_values_match():
    from parakern.verify import Session
    from parakern.verify.points import device
    path = SAMPLES / "matmul.c"

    def broken(text: str) -> str:   # the instances compute nothing
        return text.replace("    const int B0 = 16;  /* fixed at compile time */",
                            "    return;\n    const int B0 = 16;  /* fixed at compile time */")
    with Session(path.read_text(), str(path), emit=lambda a: emit_file(a, FIX), transform_cu=broken) as s:
        machine = device(65536, 1 << 16, 1024)
        assert s.run("matmul:0", dict(n=64, B0=16, ub1=32, s=2), machine).mismatches
        assert not s.run("matmul:0", dict(n=64, B0=8, ub1=32, s=2), device(65536, 1 << 16, 1024)).mismatches


def test_an_instance_keeps_the_accumulators_of_a_loop_it_unrolls_across_the_between_loops():
    """matmul's case 1 keeps its s coefficients in c_acc inside `for (w < s)`, loaded and stored
    once per k in the parametric kernel. At s = 4 (and ub1 fixed: the elements differ by
    constants) the instance unrolls w, its four accumulators loaded before the k loop and
    stored after it; the parametric kernel is unchanged, and where ub1 is a run-time value
    the elements are ub1 apart, which the facts prove nonzero: unrolled alike."""
    analysis = analyze(MATMUL, "samples/matmul.c")
    kernels = _kernels(emit_file(analysis, ({"B0": 16, "ub1": 16, "s": 4},)))
    _, body = kernels["matmul_0_case1_B0_16_ub1_16_s_4"]
    head, rest = body.split("for (int k = 0;", 1)
    loop, tail = rest.rsplit("\n    }\n", 1)
    assert [line.strip() for line in head.splitlines() if "c_acc_w" in line] == [
        f"float c_acc_w{w} = c[(long long)(16 * i + v) * n + (64 * j + u{f' + {16 * w}' if w else ''})];"
        for w in range(4)]
    assert [line.strip() for line in tail.splitlines() if "c_acc_w" in line] == [
        f"c[(long long)(16 * i + v) * n + (64 * j + u{f' + {16 * w}' if w else ''})] = c_acc_w{w};"
        for w in (3, 2, 1, 0)]
    assert "c[" not in loop and [f"int w = {w};" in loop for w in range(4)] == [True] * 4
    assert [loop.count(f"c_acc_w{w} += ") for w in range(4)] == [1] * 4 and "c_acc " not in loop
    assert "c_acc_w" not in kernels["matmul_0_case1"][1]
    _, only_s = _kernels(emit_file(analysis, ({"s": 4},)))["matmul_0_case1_s_4"]
    # ub1 at run time: the coefficients are ub1 apart, and ub1 >= 1 is a fact, so they are
    # distinct and lifted all the same
    assert len(re.findall(r"float c_acc_w\d = c\[", only_s)) == 4 and "for (int w = 0; w < s; w++)" not in only_s


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


def test_a_chosen_instance_is_tried_before_the_asserted_values_alone():
    """assert(s == 2) gives an instance at s = 2; --fix B=32 one at B = 32, s = 2. The
    dispatcher takes the first whose values hold: the more specific must come first, or it
    would never launch (found on a program of a bug hunt)."""
    s = analyze(ASSERTED_S, "g.c").results[0].schedule
    assert fixed_points(s, ({"B": 32},)) == ((("B", 32), ("s", 2)), (("s", 2),))
    text = emit_file(analyze(ASSERTED_S, "g.c"), ({"B": 32},))
    assert "const int instance = B == 32 && s == 2 ? 1 : s == 2 ? 2 : 0;" in text


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


@pytest.mark.parametrize("change", [
    {},                                                               # the plain program: unrolled
    {"ELEM": "int"},                          # a float sum of an int array: C truncates at each store
    {"COLUMN": "q + 1 + (2 * w - 1) / 2"},    # C's / of a negative operand: not the analysis' floor
    {"START": "(1 - s) / s"},                 # a trip count through C's /: 0 at s = 3, floor says -1
    {"INNER": "float acc = 2.0f; d[p][q] = acc;"},   # a declaration the renaming must not reach
    {"LOCAL": "int s = 4;", "BOUND": "s"},    # a local named like the fixed parameter decides the trips
], ids=["plain", "int-element", "c-division", "c-division-bound", "shadowed-accumulator", "shadowed-parameter"])
def test_an_instance_unrolls_only_where_the_copies_do_what_the_loop_did(change):
    """Found by a bug hunt on the instances (each gave WRONG results on the emulated GPU, or
    NOT verified): the accumulators of an unrolled loop stay in registers across k only where
    the C of every copy is the loop's."""
    text = KEPT
    for key, value in {**PLAIN, **change}.items():
        text = text.replace(key, value)
    if "LOCAL" in change:   # a local s shadows the parameter inside the thread's body only
        text = text.replace("n / (ub1 * s)", "n / (ub1 * 2)")
    analysis = analyze(text, "m.c")
    kernels = _kernels(emit_file(analysis, ({"B0": 4, "ub1": 2, "s": 3},)))
    unrolled = "c_acc" in "".join(body for name, (_, body) in kernels.items() if "_B0_4" in name) or \
        "acc_w0" in "".join(body for name, (_, body) in kernels.items() if "_B0_4" in name)
    assert unrolled == (not change), text
    if change.get("ELEM") == "int":   # nor across k in the parametric kernels
        from parakern.analysis.lifted import lifted
        assert all(lifted(case.kernel).arrays == () for case in analysis.results[0].tree.cases)


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
