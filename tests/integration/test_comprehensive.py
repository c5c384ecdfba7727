"""Algorithms 1 and 2, Definition 2 and Lemma 1 on synthetic counters and on the paper's samples."""
import pytest

from conftest import same
from parakern.symbolic.printing import to_text
from unit.test_comprehensive import has_all, shared, tree_of


@pytest.mark.parametrize("name, expected", [
    ("jacobi1d", ["4*(2*s*B + 2)", "4*(2*B + 2)", "0"]),
    # the paper's 8*s*B0*B1 and 8*B0*B1 with c's rows padded to odd (analysis/padding.py)
    ("transpose", ["4*s*B0*B1 + 4*s*B1*(2*floor(B0/2) + 1)", "4*B0*B1 + 4*B1*(2*floor(B0/2) + 1)", "0"]),
    ("polydiv", ["4*(2*s*B + 1)", "4*(2*B + 1)", "0"]),
])
def test_shared_memory_cases_of_the_paper(name, expected):
    tree = tree_of(name)
    values = shared(tree)
    assert has_all(values, expected), values
    assert all(any(same(v, e) for e in expected) for v in values)
    # The case using the most shared memory kept the granularity; the others reduced it or dropped the cache.
    assert all(("(3b)" in c.decisions) or ("(4b)" in c.decisions) or same(v, expected[0])
               for c, v in zip(tree.cases, values))


def test_matmul_tree():
    tree = tree_of("matmul")
    assert tree.cases and all(same(v, "0") for v in shared(tree))
    # as written where the block fits T; thread coarsening, (6), where it does not (test_coarsen)
    assert all("B0*ub1 <= T" in [to_text(r) for r in c.constraints.relations] for c in tree.cases
               if "(6)" not in c.decisions)
    assert all("T < B0*ub1" in [to_text(r) for r in c.constraints.relations] for c in tree.cases
               if "(6)" in c.decisions)


def test_occupancy_creates_a_branch():
    tree = tree_of("jacobi1d", "a100")
    mentions = [any("P_occ" in to_text(r) for r in c.constraints.relations) for c in tree.cases]
    assert any(mentions)
    # Below the target is still a case (the kernel runs), never a hole in the coverage.
    assert all(u.counter != "occupancy" for u in tree.uncovered)
    assert tree.coverage.status == "proved"
