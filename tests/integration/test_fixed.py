"""Compile-time block sizes (issue 16, point 5): where a program parameter is fixed (an
assertion `B == 128`, or values chosen with `emit --fix`), each case that can run there gets
an instance with the values as constants beside its parametric kernel, and the dispatcher
launches the instance when the run-time values are those (analysis/fixed.py,
codegen/kernel_source.py, codegen/tree_dispatcher.py). The CPU emulation runs both (test_verify's
Session); nvcc and ptxas compile them where installed."""
from __future__ import annotations

import re
import subprocess

import pytest

from conftest import SAMPLES
from parakern.analysis.fixed import asserted, fixed_points
from parakern.codegen import emit_file
from parakern.commands.cli import main
from parakern.pipeline import analyze
from unit.test_fixed import (  # fixtures, found by their names
    ASSERTED_S,
    FIX,
    KEPT,
    MATMUL,
    NVCC,
    PLAIN,
    SAXPY_ASSERTED,
    _kernels,
    session,  # noqa: F401
)


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


def test_a_chosen_instance_is_tried_before_the_asserted_values_alone():
    """assert(s == 2) gives an instance at s = 2; --fix B=32 one at B = 32, s = 2. The
    dispatcher takes the first whose values hold: the more specific must come first, or it
    would never launch (found on a program of a bug hunt)."""
    s = analyze(ASSERTED_S, "g.c").results[0].schedule
    assert fixed_points(s, ({"B": 32},)) == ((("B", 32), ("s", 2)), (("s", 2),))
    text = emit_file(analyze(ASSERTED_S, "g.c"), ({"B": 32},))
    assert "const int instance = B == 32 && s == 2 ? 1 : s == 2 ? 2 : 0;" in text


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
