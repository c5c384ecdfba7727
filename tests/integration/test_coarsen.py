"""(6) Thread coarsening: where it applies and why not elsewhere, the threads it needs
(sympy), the region of its cases (z3), one staged tile for a thread's rows, the instance's
settled guards and accumulators, and the semantics on the CPU emulation against the serial C."""
from __future__ import annotations

import re

import pytest
import sympy

from parakern.codegen import emit_file
from parakern.pipeline import Options, analyze
from parakern.strategies import OPT_IN
from parakern.strategies.decisions import strategy_codes
from parakern.symbolic import constraints as cs
from unit.test_coarsen import B0, MATMUL, MATMUL_CACHED, ROWDOT, ROWS_THREADS, T, _kernel, coarsened, s, tree, ub1


def test_matmul_gets_coarsened_cases_exactly_where_its_block_has_too_many_threads():
    t = tree(MATMUL, "samples/matmul.c")
    without = tree(MATMUL, "samples/matmul.c",
                   Options(strategies=tuple(c for c in strategy_codes() if c not in ("(6)",) + OPT_IN)))
    assert [c.decisions for c in t.cases if "(6)" not in c.decisions] == [c.decisions for c in without.cases]
    assert len(coarsened(t)) >= 2
    for case in coarsened(t):
        assert sympy.simplify(sympy.sympify(case.counter("threads")) - ROWS_THREADS) == 0
        assert cs.implies(case.constraints.with_facts(t.facts), sympy.Lt(T, B0 * ub1)) == "proved"
        assert cs.implies(case.constraints.with_facts(t.facts), sympy.Le(ROWS_THREADS, T)) == "proved"
    # the block too large for the device was a region no kernel fitted; a quarter of it now fits
    assert all(cs.implies(u.constraints.with_facts(t.facts), sympy.Lt(T, ROWS_THREADS)) == "proved"
               for u in t.uncovered if u.counter == "threads")


def test_the_rows_of_a_thread_are_one_staged_tile():
    t = tree(MATMUL_CACHED)
    staged = [c for c in coarsened(t) if "(4a)" in c.decisions and "(3a)" in c.decisions]
    assert staged
    for case in staged:
        expected = 4 * B0 * s * ub1 + 16 * B0 * sympy.floor((B0 + 3) / 4)   # 4*B0*B0 + ... where 4 | B0
        assert sympy.simplify(sympy.sympify(case.counter("shared_memory")) - expected) == 0
    kernel = _kernel(emit_file(analyze(MATMUL_CACHED, "t.c")), f"matmul_0_case{t.cases.index(staged[0]) + 1}")
    assert kernel.count("tile of a") == 1 and "runs of" not in kernel


def test_an_instance_drops_the_row_guards_its_values_settle_and_keeps_every_row_in_registers():
    analysis = analyze(MATMUL_CACHED, "t.c")
    t = analysis.results[0].tree
    k = t.cases.index(next(c for c in coarsened(t) if c.kernel.ir_level == 0 and "(4a)" in c.decisions
                           and "(3a)" in c.decisions)) + 1
    source = emit_file(analysis, ({"B0": 16, "ub1": 16, "s": 4}, {"B0": 6, "ub1": 16, "s": 4}))
    settled = _kernel(source, f"matmul_0_case{k}_B0_16_ub1_16_s_4")
    head, rest = settled.split("for (int k = 0;", 1)
    loop, tail = rest.rsplit("\n    }\n", 1)
    assert not re.search(r"if \(v_\d < B0\)", settled) and "?" not in settled   # 4 rows of 16: all exist
    lifted = re.findall(r"float (c_acc\w*_w\d) = c\[", head)
    assert len(lifted) == 16 and len(set(lifted)) == 16      # 4 rows x 4 coefficients, loaded once
    assert "c[" not in loop and len(re.findall(r"= c_acc\w*_w\d;", tail)) == 16
    unsettled = _kernel(source, f"matmul_0_case{k}_B0_6_ub1_16_s_4")
    # 6 rows, 2 threads: rows 4*v + 1 exist (1, 5), rows 4*v + 2 and + 3 not for v = 1 (6, 7)
    assert "if (v_1 < B0)" not in unsettled and "if (v_2 < B0)" in unsettled and "if (v_3 < B0)" in unsettled
    assert "if (v_1 < B0)" in _kernel(source, f"matmul_0_case{k}")


def test_each_row_reads_its_own_part_of_a_flattened_staged_array():
    from parakern.verify import Session
    from parakern.verify.points import TREE, device
    values = dict(ni=20, nj=24, nk=6, B0=8, B1=8)
    with Session(ROWDOT, "t.c") as session:
        tree_ = session.analysis.results[0].tree
        staged = [k for k, c in enumerate(tree_.cases, 1) if "(6)" in c.decisions and "(4a)" in c.decisions]
        assert staged
        # the tree's order launches the staged case here (the default dispatcher may prefer another)
        point = session.run("rowdot:0", values, device(65536, 1 << 16, 63), rule=TREE)
        assert point.expected in staged and point.ok and not point.mismatches, (point.error, point.mismatches)


@pytest.mark.parametrize("text", [MATMUL, MATMUL_CACHED], ids=["global", "cached"])
@pytest.mark.parametrize("values", [dict(n=48, B0=6, ub1=4, s=2),      # 2 threads of 4 rows, 2 rows missing
                                    dict(n=64, B0=16, ub1=8, s=2)])    # rows in whole groups of 4
def test_the_coarsened_cases_compute_what_the_serial_c_does(text, values):
    from parakern.verify import Session
    from parakern.verify.points import device
    threads = values["B0"] * values["ub1"]
    machine = device(65536, 1 << 16, threads - 1)   # the whole block does not fit, a quarter of it does
    with Session(text, "t.c", emit=lambda a: emit_file(a, (values,))) as session:
        point = session.run("matmul:0", values, machine)
        assert point.ok and not point.mismatches, (point.error, point.mismatches)
        case = session.analysis.results[0].tree.cases[point.expected - 1]
        assert "(6)" in case.decisions and set(point.chosen) == {point.expected}
