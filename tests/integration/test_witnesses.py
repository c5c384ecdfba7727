"""The witness shown beside each case: a point of the case's region (checked here by exact
substitution, not by z3), small where small values exist (issue 39: `N=2147450882` beside
jacobi1d's second case). That it is the same whatever z3 was asked before in the process:
tests/integration/test_witness_processes.py."""
from __future__ import annotations

import pytest

from parakern.machine.limits import launch_relations
from unit.test_witnesses import PAPER, holds, tree_of


@pytest.mark.parametrize("name", PAPER)
def test_each_witness_is_a_small_point_of_its_case(name: str):
    tree = tree_of(name)
    for k, case in enumerate(tree.cases, 1):
        assert case.verified and case.witness, f"{name} case {k}"
        point = case.witness
        wanted = case.constraints.all() + launch_relations(tree.schedule)
        failed = [str(r) for r in wanted if not holds(r, point)]
        assert not failed, f"{name} case {k}: {point} is not in its region: {failed}"
        parameters = {p.name for p in tree.schedule.params} | {d.name for d in tree.schedule.derived}
        large = {n: v for n, v in point.items() if n in parameters and v > 65536}
        assert not large, f"{name} case {k}: {large} where small values exist"
