"""A variant the case tree reaches by several paths has its subtree grown once, under the union
of those paths (comprehensive._joined): register tiles, refused by their registers or by their
shared memory at each tile size, reach the kernel as written by up to four paths. Synthetic
counters and strategies (no compiler); z3 proves what the joined tree still says."""
from __future__ import annotations

import collections
import functools
import itertools

import sympy

from conftest import SAMPLES
from parakern.comprehensive import comprehensive_optimization
from parakern.frontend import analyze_file
from parakern.kernel import Kernel
from parakern.reports.casetree import tree_dot
from parakern.strategies.base import Strategy
from parakern.symbolic import constraints as cs
from parakern.symbolic.symbols import R, Z, sym
from unit.test_comprehensive import TableCounter

B0 = sym("B0")
# a large tile, a smaller one, none: registers and shared memory fall with each step
REGISTERS = {(): 100, ("(j)",): 50, ("(j)", "(jj)"): 20}
SHARED = {(): 64 * B0, ("(j)",): 32 * B0, ("(j)", "(jj)"): 8 * B0}


class Smaller(Strategy):
    """One step down the tiles: (j) from the large one, (jj) from (j); lowers both counters."""
    applies_to = "source"
    improves = frozenset({"registers", "shared_memory"})

    def __init__(self, code, after, joins):
        self.code, self.name, self.after, self.joins = code, code, after, joins

    def changes(self, kernel):
        return {} if kernel.decisions == self.after else None


@functools.lru_cache(maxsize=None)
def _kernel():
    return Kernel.initial(analyze_file(SAMPLES / "matadd.c").schedules[0])


def tree(joins: bool):
    counters = [TableCounter("registers", R, REGISTERS), TableCounter("shared_memory", Z, SHARED)]
    steps = [Smaller("(j)", (), joins), Smaller("(jj)", ("(j)",), joins)]
    return comprehensive_optimization(_kernel(), counters, steps)


def fits(decisions):
    return sympy.And(sympy.Le(REGISTERS[decisions], R), sympy.Le(SHARED[decisions], Z))


def same_region(a, b, facts) -> bool:
    system = cs.System((), facts)
    return cs.implies(system, sympy.And(sympy.Implies(a, b), sympy.Implies(b, a))) == "proved"


def test_without_joining_the_kernel_as_written_is_a_case_once_per_path():
    """The tree as it was: the smaller tile's subtree twice, the last variant's four times."""
    decisions = [c.kernel.decisions for c in tree(joins=False).cases]
    assert decisions.count(("(j)", "(jj)")) > 1 and decisions.count(("(j)",)) > 1


def test_each_variant_is_one_case_under_the_union_of_the_paths_that_reach_it():
    t = tree(joins=True)
    assert [c.kernel.decisions for c in t.cases] == [(), ("(j)",), ("(j)", "(jj)")]
    large, small, plain = (sympy.And(*c.constraints.relations) for c in t.cases)
    # the paper's granularity: the large tile where it fits, the smaller where only it does,
    # the kernel as written where neither does, whichever resource refused each
    assert same_region(large, fits(()), t.facts)
    assert same_region(small, sympy.And(sympy.Not(fits(())), fits(("(j)",))), t.facts)
    assert same_region(plain, sympy.And(sympy.Not(fits(())), sympy.Not(fits(("(j)",))),
                                        fits(("(j)", "(jj)"))), t.facts)
    assert t.joins     # the paths that joined another's subtree, for the picture
    picture = tree_dot(t, "joined")
    assert picture.count("shape=ellipse") == 3
    heads = collections.Counter(line.split("->")[1].split()[0] for line in picture.splitlines() if "->" in line)
    assert max(heads.values()) >= 2      # a joined subtree: one node, its paths' edges all lead to it
    assert t.coverage.status == "proved"


def test_the_joined_cases_are_disjoint_and_cover_what_the_repeated_ones_covered():
    joined, repeated = tree(joins=True), tree(joins=False)
    assert len(joined.cases) == 3 < len(repeated.cases)
    regions = [sympy.And(*c.constraints.relations) for c in joined.cases]
    for a, b in itertools.combinations(regions, 2):
        assert cs.consistent(cs.System((a, b), joined.facts)).status == "unsat"
    before = sympy.Or(*(sympy.And(*c.constraints.relations) for c in repeated.cases))
    assert same_region(sympy.Or(*regions), before, joined.facts)
    # where no kernel fits is the same region
    nowhere = [sympy.Or(*(sympy.And(*u.constraints.relations) for u in t.uncovered)) for t in (joined, repeated)]
    assert same_region(*nowhere, joined.facts)


def test_the_union_of_paths_keeps_their_shared_relations_and_one_clause_per_difference():
    n8, z8, n4, z4 = 1000 * B0, 800 * B0, 400 * B0, 300 * B0
    refused_by_registers = cs.System((sympy.Le(B0, 64), sympy.Lt(R, n8)))
    refused_by_shared_memory = cs.System((sympy.Le(B0, 64), sympy.Le(n8, R), sympy.Lt(Z, z8)))
    union = cs.union([refused_by_registers, refused_by_shared_memory])
    assert union.relations == (sympy.Le(B0, 64), sympy.Or(sympy.Lt(R, n8), sympy.Lt(Z, z8)))
    # four paths to the kernel without a tile: neither tile fits
    paths = [cs.System(p) for p in [
        (sympy.Lt(R, n8), sympy.Lt(R, n4)),
        (sympy.Lt(R, n8), sympy.Le(n4, R), sympy.Lt(Z, z4)),
        (sympy.Le(n8, R), sympy.Lt(Z, z8), sympy.Lt(R, n4)),
        (sympy.Le(n8, R), sympy.Lt(Z, z8), sympy.Le(n4, R), sympy.Lt(Z, z4))]]
    union = cs.union(paths)
    assert len(union.relations) == 2 and all(isinstance(r, sympy.Or) for r in union.relations)
    assert same_region(sympy.And(*union.relations), sympy.Or(*(sympy.And(*p.relations) for p in paths)), ())
    # a path that is the shared part alone: the union is that part
    assert cs.union([cs.System((sympy.Le(B0, 64),)), refused_by_registers]).relations == (sympy.Le(B0, 64),)


def test_a_point_separates_two_regions_only_where_it_lies_in_one_and_outside_the_other():
    inside, outside = (sympy.Le(B0, 8),), (sympy.Lt(R, 100 * B0),)
    assert cs.separates({"B0": 4, "R": 1000}, inside, outside)
    assert not cs.separates({"B0": 4, "R": 10}, inside, outside)
    assert not cs.separates({"B0": 16, "R": 1000}, inside, outside)
    # R free at the point: at its top end (H1 allows any value) it fails R < 100*B0
    assert cs.separates({"B0": 4}, inside, outside)
    assert not cs.separates({"B0": 4}, inside, (sympy.Le(B0, 8),))
