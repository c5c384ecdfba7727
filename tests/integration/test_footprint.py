"""Block footprints: the formulas of the paper's examples, and a brute-force check
that every element a block touches lies in the regions and that the counts
bound (exact: equal) the number of distinct elements."""
import pytest

from conftest import SAMPLES
from parakern.analysis.footprint import footprints
from parakern.frontend import analyze_file
from unit.test_footprint import VALUES, _env, _region_set, _touched, schedule_of


def test_expressions_use_only_fixed_variables_and_parameters():
    for path in sorted(SAMPLES.glob("*.c")):
        s = analyze_file(path).schedules[0]
        params = {p.name for p in s.params} | {d.name for d in s.derived}
        fixed = {lp.var for lp in s.grid + s.between}
        for fp in footprints(s):
            assert {x.name for x in fp.elements.free_symbols} <= params, (path, fp)
            for choice in fp.regions:
                for cluster in choice.clusters:
                    for d in cluster.dims:
                        assert {x.name for x in d.lower.free_symbols} <= params | fixed
                        assert {x.name for x in d.extent.free_symbols} <= params
                        for stride, count in d.repeats:
                            assert {x.name for x in (stride * count).free_symbols} <= params


@pytest.mark.parametrize("name", sorted(VALUES))
def test_regions_cover_and_counts_bound_the_brute_force(name):
    s = schedule_of(name)
    for params in VALUES[name]:
        env = _env(s, params)
        for fp in footprints(s):
            choice = next(c for c in fp.regions
                          if all(bool(cond.subs(env)) == taken for cond, taken in c.when))
            touched = set()
            for cluster in choice.clusters:
                region = _region_set(cluster, env)
                for i in cluster.accesses:
                    elements = _touched(s, s.accesses[i], env)
                    assert elements <= region, (name, fp.array, s.accesses[i].indices)
                    touched |= elements
            counted = int(choice.elements.subs(env))
            assert len(touched) <= counted <= int(fp.elements.subs(env))
            if choice.exact:
                assert len(touched) == counted, (name, fp.array)
