"""Algorithms 1 and 2, Definition 2 and Lemma 1 on synthetic counters and on the paper's samples."""
import functools

import pytest
import sympy

from conftest import SAMPLES, same
from parakern.comprehensive import comprehensive_optimization
from parakern.counters.base import Counter, Measure
from parakern.frontend import analyze_file
from parakern.kernel import Kernel
from parakern.pipeline import Options, optimize_schedule
from parakern.strategies.base import Strategy
from parakern.symbolic import constraints as cs
from parakern.symbolic.printing import to_text
from parakern.symbolic.symbols import R, T, Z, sym


def schedule(name):
    return analyze_file(SAMPLES / f"{name}.c").schedules[0]


# ------------------------------------------------------------ synthetic doubles
class TableCounter(Counter):
    """A counter whose value depends only on the decisions taken so far."""
    kind = "resource"
    unit = "units"

    def __init__(self, name, symbol, table):
        self.name, self.symbol, self.table = name, symbol, table

    def measure(self, kernel):
        return Measure(self.table[kernel.decisions], True, "table")


class Tag(Strategy):
    """A strategy that only records its code; the counters read the trail."""
    applies_to = "source"

    def __init__(self, code, improves):
        self.code, self.name, self.improves = code, code, frozenset(improves)

    def changes(self, kernel):
        return None if self.code in kernel.decisions else {}  # idempotent, like the real ones


@functools.lru_cache(maxsize=None)
def _matadd_kernel():
    return Kernel.initial(schedule("matadd"))


def test_paper_figure_1_shape_with_an_improving_strategy():
    """14 registers, then 10 after granularity reduction: two cases, R < 10 uncovered."""
    regs = TableCounter("registers", R, {(): 14, ("(3b)",): 10})
    threads = TableCounter("threads", T, {(): sym("B0") * sym("B1"), ("(3b)",): sym("B0") * sym("B1")})
    tree = comprehensive_optimization(_matadd_kernel(), [regs, threads], [Tag("(3b)", {"registers"})])
    systems = [set(map(to_text, c.constraints.relations)) for c in tree.cases]
    assert systems == [{"14 <= R", "B0*B1 <= T"}, {"10 <= R", "R < 14", "B0*B1 <= T"}]
    assert [c.kernel.decisions for c in tree.cases] == [(), ("(3b)",)]
    uncovered = sorted(to_text(r) for u in tree.uncovered for r in u.constraints.relations)
    assert "R < 10" in uncovered and "T < B0*B1" in uncovered
    assert tree.coverage.status == "proved"


def test_strategy_that_does_not_improve_is_pruned():
    """R < 10, the strategy leaves 10 registers: 10 <= R contradicts R < 10 and is dropped."""
    regs = TableCounter("registers", R, {(): 10, ("(1')",): 10})
    tree = comprehensive_optimization(_matadd_kernel(), [regs], [Tag("(1')", {"registers"})])
    assert [c.kernel.decisions for c in tree.cases] == [()]
    assert tree.pruned >= 1
    assert [to_text(r) for r in tree.uncovered[0].constraints.relations] == ["R < 10"]
    assert tree.coverage.status == "proved"


def test_strategy_outside_sigma_is_not_used():
    regs = TableCounter("registers", R, {(): 10})
    tree = comprehensive_optimization(_matadd_kernel(), [regs], [Tag("(4b)", {"shared_memory"})])
    assert len(tree.cases) == 1 and len(tree.holes) == 1
    # no threads counter here: the block's extents must also be within blockDim's limits
    assert {u.counter for u in tree.uncovered} == {"registers", "launch"}


def test_coverage_check_can_fail():
    regs = TableCounter("registers", R, {(): 14, ("(3b)",): 10})
    tree = comprehensive_optimization(_matadd_kernel(), [regs], [Tag("(3b)", {"registers"})])
    facts = [f.relation for f in _matadd_kernel().schedule.facts]
    without_second = cs.covers(facts, [tree.cases[0].constraints], [u.constraints for u in tree.uncovered])
    assert without_second.status == "refuted"
    assert 10 <= without_second.witness["R"] < 14


# ------------------------------------------------------------ the paper's samples
@functools.lru_cache(maxsize=None)
def tree_of(name, occupancy=None):
    result = optimize_schedule(schedule(name), Options(occupancy=occupancy))
    assert result.tree is not None, [d.format() for d in result.diagnostics]
    return result.tree


def shared(tree):
    return [sympy.sympify(c.counter("shared_memory")) for c in tree.cases]


def has_all(values, expected):
    return all(any(same(v, e) for v in values) for e in expected)


def test_matrix_addition_one_case_where_figure_1_has_two():
    """The paper's Figure 1 has a second case after granularity reduction, with fewer registers
    per thread. The register file allocates them per warp in units of 256 (8 a thread): 16 and
    12 registers a thread both take 2048 per 128 threads, so the second case's region is empty
    on a real register file and z3 prunes it."""
    from parakern.counters.registers import registers_per_block
    from parakern.strategies.granularity import ReduceGranularity
    tree = tree_of("matadd")
    (case,) = tree.cases
    assert {to_text(r) for r in case.constraints.relations} == {"B0*B1 <= T", "2048*ceiling(B0*B1/128) <= R_B"}
    reduced = ReduceGranularity().apply(case.kernel)
    from parakern.counters.registers import RegisterCounter
    fewer = RegisterCounter().evaluate(reduced)
    assert fewer < case.counter("registers")
    threads = sym("B0") * sym("B1")
    assert registers_per_block(fewer, threads) == registers_per_block(case.counter("registers"), threads)


@pytest.mark.parametrize("name", ["matadd", "jacobi1d", "transpose", "polydiv", "matmul"])
def test_definition_2_and_lemma_1(name):
    tree = tree_of(name)
    facts = [f.relation for f in tree.schedule.facts]
    # (i) every case is consistent, with a z3 witness that really satisfies it.
    for case in tree.cases:
        assert case.verified and case.witness
        values = {sym(k) if k not in ("R", "Z", "T") else {"R": R, "Z": Z, "T": T}[k]: sympy.Integer(v)
                  for k, v in case.witness.items()}
        for relation in list(case.constraints.relations) + facts:
            assert relation.xreplace(values) == sympy.true, (relation, case.witness)
    # (iii) coverage: facts => some case or a listed uncovered region.
    assert tree.coverage.status == "proved"
    # (iv) for every counter some leaf where no strategy of sigma improves it.
    assert all(ok for _, ok in tree.optimal), tree.optimal
    # Lemma 1 (with the bound its proof gives).
    assert tree.height <= tree.bound


FLAT_GRID = """void w(int n, int Bz, int By, int Bx, float a[n], float b[n])
{
    int g = n / (Bz * By * Bx);
    meta_schedule {
        meta_for (int bi = 0; bi < g; bi++)
            meta_for (int tz = 0; tz < Bz; tz++)
                meta_for (int ty = 0; ty < By; ty++)
                    meta_for (int tx = 0; tx < Bx; tx++)
                        b[((bi * Bz + tz) * By + ty) * Bx + tx] = a[((bi * Bz + tz) * By + ty) * Bx + tx] + 1.0f;
    }
}
"""


def test_a_witness_lies_where_the_kernel_launches():
    """The witness a case shows (optimize, hover) satisfies the launch limits too where it can:
    before, g = 699736 beside 'no kernel fits where 65536 <= g (launch)'."""
    from parakern.machine.limits import launch_relations
    from parakern.pipeline import analyze
    (result,) = analyze(FLAT_GRID, "w.c").results
    for case in result.tree.cases:
        values = {sym(k) if k not in ("R", "Z", "T") else {"R": R, "Z": Z, "T": T}[k]: sympy.Integer(v)
                  for k, v in case.witness.items()}
        for relation in launch_relations(result.schedule):   # g <= 65535 (gridDim.y), ...
            assert relation.xreplace(values) == sympy.true, (relation, case.witness)

