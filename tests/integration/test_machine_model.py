"""The tree describes the real machine (registers per block, launch limits): on every sample
and every program of the PolyBench-style corpus, z3 shows that no "no kernel fits" region
holds a point where some case's own kernel fits, that every case's kernel launches within
CUDA's limits, and that a case is listed on a GPU profile exactly when its kernel can run
there (the others flagged theoretical); on random machines and points, the
dispatcher refuses exactly inside the "no kernel fits" regions."""
from __future__ import annotations

import functools
import random
from pathlib import Path

import pytest
import sympy

from integration.test_dispatch import _point
from parakern import dispatch
from parakern.analysis.facts import substitutions
from parakern.machine.devices import PROFILES, Device, get_profile, machine_values
from parakern.machine.limits import launch_relations
from parakern.pipeline import analyze
from parakern.reports.casetree import tree_json
from parakern.symbolic import constraints as cs
from parakern.symbolic.symbols import R_B, T, Z
from parakern.verify.points import device

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "samples").glob("*.c")) + sorted((ROOT / "samples" / "polybench").glob("*.c"))
IDS = [str(p.relative_to(ROOT / "samples")).removesuffix(".c") for p in PROGRAMS]


@functools.lru_cache(maxsize=None)
def _trees(path: Path) -> tuple:
    analysis = analyze(path.read_text(), str(path))
    return tuple(r for r in analysis.results if r.tree is not None and r.tree.cases)


def _system(relations, facts) -> cs.System:
    return cs.System(tuple(r for r in relations if r is not sympy.true), tuple(facts))


@pytest.mark.parametrize("path", PROGRAMS, ids=IDS)
def test_no_kernel_fits_only_where_none_does(path):
    results = _trees(path)
    assert results
    for result in results:
        tree = result.tree
        for region in tree.uncovered:
            for k, case in enumerate(tree.cases, 1):
                both = _system(region.constraints.relations + case.needs.relations, region.constraints.facts)
                verdict = cs.consistent(both)
                assert verdict.status == "unsat", (
                    f"{result.schedule.id}: case {k}'s kernel fits at {verdict.witness} inside "
                    f"'no kernel fits where {region.constraints.relations}'")


@pytest.mark.parametrize("path", PROGRAMS, ids=IDS)
def test_every_case_kernel_launches_within_cuda_limits(path):
    for result in _trees(path):
        tree = result.tree
        for k, case in enumerate(tree.cases, 1):
            for relation in launch_relations(case.kernel.schedule):   # its own levels ((6) coarsens one)
                assert cs.implies(_system(case.needs.relations, case.needs.facts), relation) == "proved", (
                    f"{result.schedule.id} case {k}: {case.needs.relations} does not imply {relation}")
            # the block never asks more than a GPU's 1024 threads where the dispatcher picks it
            picked = _system(case.constraints.relations + case.needs.relations, case.constraints.facts)
            assert cs.implies(picked, sympy.Le(T, 1024)) == "proved"


@pytest.mark.parametrize("path", PROGRAMS, ids=IDS)
def test_profiles_and_theoretical_cases(path):
    """A case is on a profile iff what its kernel needs, at the profile's R_B, Z, T, has a
    solution in the program parameters (its constraints aside: the default dispatcher launches
    any case that fits; checked here with the machine symbols bound by equations, not
    substituted); a case on none is flagged theoretical in the JSON."""
    for result in _trees(path):
        report = tree_json(result.tree)
        for k, (case, shown) in enumerate(zip(result.tree.cases, report["cases"]), 1):
            on = []
            for key in sorted(PROFILES):
                values = machine_values(get_profile(key))
                machine = [sympy.Eq(R_B, values["R_B"]), sympy.Eq(Z, values["Z"]), sympy.Eq(T, values["T"])]
                system = _system(case.needs.relations + tuple(machine), case.constraints.facts)
                if cs.consistent(system).status != "unsat":
                    on.append(key)
            assert sorted(shown["profiles"]) == on, f"{result.schedule.id} case {k}"
            assert shown["theoretical"] == (not on)


def _random_machine(rng: random.Random) -> Device:
    regs = rng.choice([65536, 65536, 32768, rng.randint(1, 70000), rng.randint(1, 4096)])
    shared = rng.choice([232448, 101376, 49152, rng.randint(0, 1 << 18), rng.randint(0, 4096)])
    threads = rng.choice([1024, 1024, rng.randint(1, 1024), 64])
    return device(regs, shared, threads)


def _inside(region, point: dict) -> "bool | None":
    truths = [dispatch.truth(r.xreplace(point)) for r in region.constraints.relations]
    return None if None in truths else all(truths)


@pytest.mark.parametrize("path", PROGRAMS, ids=IDS)
def test_dispatcher_refuses_exactly_in_the_no_fit_regions(path):
    """With the IR's register counts, the one dispatch rule finds no case exactly at the
    points of a "no kernel fits" region (random machines, random parameters)."""
    rng = random.Random(f"model:{path.name}")
    checked = 0
    for result in _trees(path):
        tree = result.tree
        for _ in range(60):
            values = _point(rng, result)
            if values is None:
                break
            machine = _random_machine(rng)
            ints = {n: v for n, v in values.items() if isinstance(v, int)}
            choice = dispatch.choose(tree, machine, ints)
            point = substitutions(result.schedule, ints)
            point.update({R_B: sympy.Integer(machine.R_B), Z: sympy.Integer(machine.Z),
                          T: sympy.Integer(machine.T)})
            inside = [_inside(region, point) for region in tree.uncovered]
            if None in inside:
                continue                  # a relation C's arithmetic cannot decide here
            checked += 1
            assert (choice.case is None) == any(inside), (
                f"{result.schedule.id} at {ints} on {machine}: dispatcher {choice.case}, regions {inside}")
    assert checked, "no point decided"


# ------------------------------------------------------------------ staging's cost in occupancy

@functools.lru_cache(maxsize=None)
def _staged_jacobi():
    from parakern.pipeline import Options
    path = ROOT / "samples" / "jacobi1d.c"
    (result,) = analyze(path.read_text(), str(path), Options(staging=("h100",))).results
    return result


def _resident(case, blocks: int, s: int, staged: bool):
    from parakern.counters.occupancy import occupancy_detail
    regs = int(case.counter("registers"))
    smem = 8 * blocks * s + 8 if staged else 0
    return occupancy_detail(regs, smem, blocks, get_profile("h100")).active_blocks


def test_staging_counter_offers_the_unstaged_variant_where_staging_halves_occupancy():
    """With --staging h100 the tree has, where the tile fits, both the staged kernel and the
    one without shared memory; the tree's dispatcher picks the unstaged one exactly where staging
    leaves fewer than half the resident blocks of the unstaged one on an H100."""
    result = _staged_jacobi()
    tree = result.tree
    assert tree.coverage.status == "proved"
    offered = [k for k, c in enumerate(tree.cases, 1)
               if any(step.counter == "staging" and step.branch == "refuse" for step in c.path)]
    assert offered and all(not tree.cases[k - 1].kernel.cached for k in offered)
    machine = get_profile("h100")
    seen = set()
    for B in (32, 128, 256, 512):
        for s in (1, 2, 4, 8, 16, 32, 64):
            if 8 * B * s + 8 > machine.Z:
                continue
            values = {"N": 1 << 20, "B": B, "s": s}
            choice = dispatch.choose(tree, machine, values)
            case = tree.cases[choice.tree - 1]
            staged_case = next(c for c in tree.cases if c.kernel.cached)
            unstaged_case = tree.cases[offered[0] - 1]
            halves = 2 * _resident(staged_case, B, s, True) < _resident(unstaged_case, B, s, False)
            assert (not case.kernel.cached) == halves, (B, s, choice.tree)
            seen.add(halves)
    assert seen == {True, False}


def test_staging_counter_relations_print_as_c():
    """The dispatcher evaluates the staging relations in C: they print without symbols C lacks."""
    from parakern.symbolic.printing import to_c
    tree = _staged_jacobi().tree
    for case in tree.cases:
        for relation in case.constraints.relations:
            text = to_c(relation)
            assert "Min(" not in text and "floor(" not in text and "ceiling(" not in text, text


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None, reason="needs nvcc (CUDA toolkit)")
def test_staging_dispatcher_compiles(tmp_path):
    import subprocess

    from parakern.codegen import emit
    from parakern.pipeline import Options
    path = ROOT / "samples" / "jacobi1d.c"
    emitted = emit(analyze(path.read_text(), str(path), Options(staging=("h100",))))
    cu = tmp_path / "jacobi1d.cu"
    cu.write_text(emitted.text)
    done = subprocess.run(["nvcc", "-arch=sm_90", "-c", str(cu), "-o", str(tmp_path / "j.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
