"""The one rule that picks the case of a case tree that runs, for given machine and parameter values.

Every consumer uses it: the generated C dispatchers are printed from the description here
(codegen/tree_dispatcher.py), verify computes the case a dispatcher must return with
`choose`, the bench plans its sweep with it, tune searches through it, the editor's hover and
`optimize` say which case runs on which GPU profile with it.

The machine values are those the dispatcher reads: R_B = regsPerBlock, Z =
sharedMemPerBlockOptin, T = maxThreadsPerBlock. A case *fits* at the call's values where its
launch is within CUDA's limits (`LAUNCH_BOUNDS`) and its compiled kernel fits the device
(`fits`: its registers per block as the hardware allocates them <= R_B, shared bytes <= Z,
threads <= T), its constraints aside.

The default rule (`<function>_<index>_dispatch`): among the cases that fit, the one the time
model predicts fastest on the device (tuning/time_model.py: `predict`, FORMULA's `ranked`; the
device's SMs, clocks, bandwidth and L2, read once per device), a case later in the tree's order
taking the place of an earlier one only where it is predicted faster by more than TIE
(relative): ties go to the tree's order. Predicted time is the tree's performance counter (the
paper's P_i). Where no case that fits has a prediction (no block can be resident, or the
device lacks a fact the model reads), the tree's rule decides.

The tree's rule (the paper's, `<function>_<index>_dispatch_tree`): the cases in the tree's
order, in two passes:

  1. the first case whose constraints hold (the tree's order of preference) and that fits;
  2. when none, the first case that fits, its constraints aside: the tree's constraints were
     derived from the IR's register counts, which nvcc's kernel need not match, and a hole of
     the tree is often where another leaf's kernel fits (the tree's uncovered regions are where
     none does).

The tree still proves coverage and the regions where no kernel fits: where no case fits, both
rules launch nothing. The compiled register counts are cudaFuncGetAttributes' in the C (and
cudaOccupancyMaxActiveBlocksPerMultiprocessor's blocks per SM, from the same kernels); a
Python caller may give them, otherwise the IR's counts of the cases are used. blockDim.x and
.y need no test of their own: threads <= T, and T <= 1024 = maxThreadsDim.x = .y on every GPU.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping, Sequence

import sympy

from parakern.symbolic import constraints as cs
from parakern.symbolic import exact
from parakern.symbolic.exact import truth
from parakern.analysis.facts import substitutions
from parakern.launch import Launch, launch_of
from parakern.counters.registers import MAX_REGISTERS, registers_per_block
from parakern.machine.devices import PROFILES, Device, get_profile, machine_values
from parakern.machine.limits import BLOCK_LIMITS, GRID_LIMITS
from parakern.symbolic.printing import to_text
from parakern.symbolic.symbols import R_B, T, Z
from parakern.tuning import time_model

BLOCK_Z_LIMIT = BLOCK_LIMITS[2]          # blockDim.z (x and y: within T, which is at most 1024)
MACHINE_SYMBOLS = (R_B, Z, T)
FIRST_PASS, SECOND_PASS = "constraints", "fit"    # the tree's passes: what each tests beside the fit
FASTEST = "fastest"                               # the default rule: the model's fastest of those that fit
# Relative: a case later in the tree's order is taken for one predicted faster by more than this
# (far above the rounding by which C's doubles and Python's floats of FORMULA can differ).
TIE = 1e-9


# ------------------------------------------------------------------ the description

@dataclass(frozen=True)
class Pass:
    by_fit: bool                         # the constraints aside: nvcc's kernel's fit decides

    @property
    def name(self) -> str:
        return SECOND_PASS if self.by_fit else FIRST_PASS


@dataclass(frozen=True)
class Bound:
    """A launch size CUDA accepts only within [low, high] (None: no limit on that side)."""
    name: str                            # the size bounded: grid_x, grid_y, grid_z, threads, block_z
    low: "int | None"
    high: "int | None"

    def holds(self, value: int) -> bool:
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)


# The launch limits, in the order the dispatcher tests them (the same for every case).
LAUNCH_BOUNDS = tuple(Bound(f"grid_{axis}", 1, top) for axis, top in zip("xyz", GRID_LIMITS)) + \
    (Bound("threads", 1, None), Bound("block_z", None, BLOCK_Z_LIMIT))


@dataclass(frozen=True)
class Fit:
    """The compiled kernel needs at most the machine value: `need <= machine`."""
    need: str                            # "registers" (per block, allocated) | "shared_bytes" | "threads"
    machine: str                         # "R_B" | "Z" | "T"


@dataclass(frozen=True)
class CaseRule:
    """What the dispatcher tests for one case."""
    number: int                          # 1-based: what the dispatcher returns when it launches it
    launch: Launch
    relations: tuple                     # the case's constraints
    fits: tuple                          # Fit
    machine_free: tuple = ()             # per relation: it holds no machine symbol (R_B, Z, T)
    tests: tuple = ()                    # per relation: env -> True / False / None (`_compile`)

    def tested(self, by_fit: bool) -> tuple:
        """The constraints a pass tests (the second, none: the fit alone decides)."""
        return () if by_fit else self.relations


def passes(tree) -> tuple:
    """The passes of the dispatcher: a second, by the fit, wherever some case has a
    constraint (elsewhere it would test the same as the first)."""
    constrained = any(c.constraints.relations for c in tree.cases)
    return (Pass(False), Pass(True)) if constrained else (Pass(False),)


_RULES: dict = {}        # id(tree) -> (tree, its rules): the tuner asks for them at every candidate
_RULES_KEPT = 64


def case_rules(tree) -> tuple:
    """One rule per case, in the order the dispatcher tries them."""
    known = _RULES.get(id(tree))
    if known is not None and known[0] is tree:
        return known[1]
    rules = []
    for k, case in enumerate(tree.cases, 1):
        launch = launch_of(case)
        shared = sympy.sympify(launch.shared_bytes) != 0
        fits = (Fit("registers", "R_B"),) + ((Fit("shared_bytes", "Z"),) if shared else ()) + (Fit("threads", "T"),)
        relations = tuple(sympy.sympify(r) for r in case.constraints.relations)
        free = tuple(not r.free_symbols & set(MACHINE_SYMBOLS) for r in relations)
        rules.append(CaseRule(k, launch, relations, fits, free, tuple(_test(r) for r in relations)))
    if len(_RULES) >= _RULES_KEPT:
        _RULES.pop(next(iter(_RULES)))
    _RULES[id(tree)] = (tree, tuple(rules))
    return tuple(rules)


# ------------------------------------------------------------------ the choice

@dataclass(frozen=True)
class Sizes:
    """A case's launch at given parameter values (None where not an integer there)."""
    grid: tuple
    block: tuple
    shared_bytes: "int | None"
    threads: "int | None"


@dataclass(frozen=True)
class Choice:
    case: "int | None"                   # 1-based case the default dispatcher launches; None: it returns
                                         # PARAKERN_NO_CASE_FITS
    by: str                              # what chose it: FASTEST, or the tree's pass (FIRST_PASS, SECOND_PASS)
                                         # where no case that fits has a prediction; "" when none fits
    holds: tuple                         # cases the first pass accepts: constraints hold, kernel fits
    fits: tuple                          # cases that fit (their kernel and launch, constraints aside):
                                         # the second pass's and the default rule's candidates
    can_run: tuple                       # cases whose kernel fits the device here, machine constraints
                                         # dropped and registers aside (the bench's --every-case)
    launches: tuple                      # Sizes per case, in the tree's order
    refusals: tuple                      # per case why the first pass refuses it ('' where it accepts)
    limits: tuple = ()                   # per case the device limit its launch exceeds ('' where none)
    tree: "int | None" = None            # the case the tree's rule launches (dispatch_tree)
    tree_by: str = ""                    # the tree's pass that chose it
    predictions: tuple = ()              # per case its time_model.Prediction (None: it does not fit, or
                                         # the model has no time for it here)

    @property
    def accepted(self) -> tuple:
        """The cases the choosing rule chose among (`case` is one of them)."""
        return self.fits if self.by in (FASTEST, SECOND_PASS) else self.holds

    @property
    def reason(self) -> str:
        """Why no case fits ('' when one does): a device limit that every case's launch exceeds
        first (4096 threads > 1024 per block), not the first constraint that happens to fail."""
        if self.case is not None:
            return ""
        limits = tuple(self.limits) or ("",) * len(self.refusals)
        if limits and all(limits) and len(set(limits)) == 1:
            return f"{limits[0]} (every case)"
        return "; ".join(f"case {k}: {limit or why}" for k, (why, limit) in enumerate(zip(self.refusals, limits), 1))

    def prediction(self, k: int) -> "time_model.Prediction | None":
        """Case k's predicted launch (1-based), where it fits and the model has a time for it."""
        return self.predictions[k - 1] if self.predictions else None

    # `limits` holds, per case, what its kernel's own fit or launch lacks on this device
    # (registers, shared memory, threads, launch limits), whatever its constraints say.


def _test(relation):
    """truth(relation.xreplace(env)) as a function of (exact.numbers(env), env): compiled where it
    can be, sympy's substitution where a value is missing or not a number, or x/0."""
    if relation is sympy.true or relation is sympy.false:
        value = relation is sympy.true
        return lambda numbers, env: value
    compiled = exact.compiled(relation)
    if compiled is None:
        return lambda numbers, env: truth(relation.xreplace(env))

    def test(numbers, env):
        try:
            return bool(compiled(numbers))
        except (KeyError, ZeroDivisionError):
            return truth(relation.xreplace(env))
    return test


def _sizes(launch: Launch, subs: dict) -> Sizes:
    """The launch at these values (None where a size is not an integer there)."""
    return _sizes_at(launch, frozenset(subs.items()))


@functools.lru_cache(maxsize=8192)
def _sizes_at(launch: Launch, items: frozenset) -> Sizes:
    # the same on every device: tune asks each point once per GPU profile
    subs = dict(items)
    given = exact.numbers(subs)
    size = lambda expr: exact.integer(expr, subs, given)   # noqa: E731
    return Sizes(tuple(size(g) for g in launch.grid), tuple(size(b) for b in launch.block),
                 size(launch.shared_bytes), size(launch.threads))


@dataclass(frozen=True)
class _Verdict:
    """One case at one point: what holds, and why not."""
    sizes: Sizes
    refusal: str                         # why the first pass refuses it ('' where it accepts)
    fits_anyway: bool                    # the second pass accepts it
    can_run: bool
    limit: str = ""                      # a device limit the launch exceeds whatever the constraints say


def _judge(rule: CaseRule, subs: dict, device: Device, registers: int) -> _Verdict:
    launch = rule.launch
    items = frozenset(subs.items())
    sizes = _sizes_at(launch, items)
    threads = sizes.threads
    if threads is None or threads < 1:
        return _Verdict(sizes, f"{threads} threads per block", False, False, f"{threads} threads per block")
    env = {**subs, R_B: sympy.Integer(device.R_B), Z: sympy.Integer(device.Z), T: sympy.Integer(device.T)}
    numbers = exact.numbers(env)
    truths = tuple(test(numbers, env) for test in rule.tests) if rule.tests else \
        tuple(truth(rel.xreplace(env)) for rel in rule.relations)
    need = {"registers": int(registers_per_block(registers, threads)) if registers <= MAX_REGISTERS else None,
            "registers per thread": registers, "shared_bytes": sizes.shared_bytes or 0, "threads": threads}
    have = {"R_B": device.R_B, "Z": device.Z, "T": device.T}
    too_much = [f for f in rule.fits if need[f.need] is None or need[f.need] > have[f.machine]]
    beyond = _launch_refusal(launch, items)
    machine_free = [t for t, free in zip(truths, rule.machine_free) if free]
    device_fit = not any(f.need != "registers" for f in too_much)
    refusal = ""
    for t, rel in zip(truths, rule.relations):
        if t is not True:
            refusal = _text(rel) + (" is false" if t is False else " cannot be evaluated")
            break
    else:
        if too_much:
            refusal = _too_much(too_much[0], need, have)
        elif beyond:
            refusal = beyond
    limit = beyond or (_too_much(too_much[0], need, have) if too_much else "")
    return _Verdict(sizes, refusal, not too_much and not beyond,
                    all(t is True for t in machine_free) and device_fit and not beyond, limit)


@functools.lru_cache(maxsize=4096)
def _text(relation) -> str:
    """to_text, once per relation: the tuner's candidates refuse the same ones again and again."""
    return to_text(relation)


def _too_much(fit: Fit, need: dict, have: dict) -> str:
    if fit.need == "registers":
        if need["registers"] is None:
            return f"{need['registers per thread']} registers > {MAX_REGISTERS} per thread"
        return (f"{need['registers per thread']} registers x {need['threads']} threads take "
                f"{need['registers']} > {have['R_B']} per block")
    if fit.need == "shared_bytes":
        return f"{need['shared_bytes']} bytes of shared memory > {have['Z']} per block"
    return f"{need['threads']} threads > {have['T']} per block (the device's maximum)"


@functools.lru_cache(maxsize=8192)
def _launch_refusal(launch: Launch, items: frozenset) -> str:
    """Why CUDA or the kernel refuses the launch at these values, whatever the device ('' if not)."""
    return _beyond_limits(_sizes_at(launch, items)) or _unmet(launch, dict(items))


def _beyond_limits(sizes: Sizes) -> str:
    """'' when CUDA accepts the launch, else why not."""
    if any(v is None for v in sizes.grid + sizes.block) or sizes.shared_bytes is None:
        return "the launch configuration is not an integer here"
    values = {**{f"grid_{a}": g for a, g in zip("xyz", sizes.grid)}, "threads": sizes.threads,
              "block_z": sizes.block[2]}
    refused = [b for b in LAUNCH_BOUNDS if not b.holds(values[b.name])]
    if any(b.low is not None and values[b.name] < b.low for b in refused):
        return f"empty grid {tuple(sizes.grid)}"    # threads < 1 was refused before
    return next((f"{b.name.replace('_', ' ')} = {values[b.name]} exceeds {b.high}" for b in refused), "")


def _unmet(launch: Launch, subs: dict) -> str:
    """'' when what the kernel needs of the parameters holds (Launch.requires), else the first
    relation that does not."""
    for relation in launch.requires:
        if truth(sympy.sympify(relation).xreplace(subs)) is not True:
            return f"{_text(relation)} does not hold (the kernel computes whole register tiles only)"
    return ""


def launch_refusal(tree, k: int, values: Mapping) -> str:
    """Why case k's launch (1-based) is refused at these values whatever the device ('' if it
    is not): an empty or too large grid, a block deeper than 64, what the kernel needs of the
    parameters (Launch.requires)."""
    rule = case_rules(tree)[k - 1]
    subs = substitutions(tree.schedule, values)
    launch = rule.launch
    sizes = _sizes(launch, subs)
    if sizes.threads is None or sizes.threads < 1:
        return f"{sizes.threads} threads per block"
    return _beyond_limits(sizes) or _unmet(launch, subs)


def choose(tree, device: Device, values: Mapping, registers: "Sequence[int] | None" = None) -> Choice:
    """The case the default dispatcher launches at these parameter values (names or symbols ->
    ints; derived scalars not given are computed) on this machine, and the tree's (`tree`).
    registers: the compiled register count of each case (cudaFuncGetAttributes' numRegs); the
    IR's counts when None."""
    rules = case_rules(tree)
    counts = list(registers) if registers is not None else [int(c.counter("registers")) for c in tree.cases]
    subs = substitutions(tree.schedule, values)
    verdicts = [_judge(rule, subs, device, n) for rule, n in zip(rules, counts)]
    holds = tuple(k for k, v in enumerate(verdicts, 1) if not v.refusal)
    fits = tuple(k for k, v in enumerate(verdicts, 1) if v.fits_anyway) if len(passes(tree)) > 1 else holds
    tree_case, tree_by = (holds[0], FIRST_PASS) if holds else (fits[0], SECOND_PASS) if fits else (None, "")
    predictions = _predictions(tree, device, subs, fits, counts)
    best = fastest(fits, predictions)
    case, by = (best, FASTEST) if best is not None else (tree_case, tree_by)
    return Choice(case, by, holds, fits, tuple(k for k, v in enumerate(verdicts, 1) if v.can_run),
                  tuple(v.sizes for v in verdicts), tuple(v.refusal for v in verdicts),
                  tuple(v.limit for v in verdicts), tree_case, tree_by, predictions)


def fastest(fits: Sequence[int], predictions: Sequence) -> "int | None":
    """The default rule's pick among the cases that fit (in the tree's order): the least ranked
    time, a later case taking an earlier one's place only where faster by more than TIE; None
    where none has a prediction. The C prints the same comparison."""
    best, best_time = None, 0.0
    for k in fits:
        p = predictions[k - 1] if predictions else None
        if p is None:
            continue
        if best is None or p.ranked < best_time * (1 - TIE):
            best, best_time = k, p.ranked
    return best


def _predictions(tree, device: Device, subs: dict, fits: tuple, counts: list) -> tuple:
    """Per case the model's prediction where it fits (None elsewhere, and everywhere on a device
    without the facts the model reads, as the C where it cannot read them)."""
    out: list = [None] * len(tree.cases)
    try:
        time_model.modelled(device)
    except time_model.ModelError:
        return tuple(out)
    quantities = time_model.tree_quantities(tree)
    for k in fits:
        out[k - 1] = time_model.predict(quantities[k - 1], subs, device, counts[k - 1])
    return tuple(out)


# ------------------------------------------------------------------ which case runs on which GPU

@dataclass(frozen=True)
class ProfileCases:
    key: str                             # "h100"
    name: str                            # "NVIDIA H100 SXM5 80GB"
    values: tuple                        # (("R_B", 65536), ("T", 1024), ("Z", 232448))
    conditions: tuple                    # ((case, relations or None), ...): None = cannot run there, () = always


def on_profile(tree, key: str, work: int = cs.DEFAULT_WORK) -> ProfileCases:
    """Under which condition on the program parameters each case runs on a GPU profile:
    R_B, Z, T replaced by the GPU's values in its constraints and in what its kernel needs
    (the dispatcher's first pass picks it there), then simplified by z3 (constraints.simplify).
    A case whose system becomes inconsistent cannot run there."""
    profile = get_profile(key)
    values = machine_values(profile)
    conditions = []
    for k, case in enumerate(tree.cases, 1):
        system = _on(case, values)
        if system is None or not cs.possible(system, work):
            conditions.append((k, None))
            continue
        conditions.append((k, tuple(cs.simplify(system, work).relations)))
    return ProfileCases(key, profile.name, tuple(sorted(values.items())), tuple(conditions))


def _on(case, values: dict) -> "cs.System | None":
    """Case's constraints and needs with the machine values of a GPU; None when false there."""
    return _with_values(case.constraints.relations + case.needs.relations, case.constraints.facts, values)


def _with_values(relations, facts, values: dict) -> "cs.System | None":
    """The system of `relations` under `facts`, the GPU's machine values put in; None when
    one of them is false there."""
    mapping = {s: sympy.Integer(values[s.name]) for r in (*relations, *facts)
               for s in r.free_symbols if s.name in values}
    relations = [r.xreplace(mapping) for r in relations]
    facts = [f.xreplace(mapping) for f in facts]
    if any(r is sympy.false for r in relations + facts):
        return None
    return cs.System(tuple(r for r in relations if r is not sympy.true), tuple(facts))


def reachable(tree, keys=None, work: int = cs.DEFAULT_WORK) -> tuple:
    """((case, (profile keys on which the dispatcher's first pass picks it for some program
    parameters)), ...); a case with none is theoretical: no known GPU reaches it
    (devices.PROFILES by default)."""
    return _profiles_per_case(tree, keys, work, _on)


def runnable(tree, keys=None, work: int = cs.DEFAULT_WORK) -> tuple:
    """((case, (profile keys whose limits let its kernel run for some values of the program
    parameters)), ...): R_B, Z, T of the GPU in what its kernel needs (`Case.needs`), its
    constraints aside, as the default rule takes any case that fits. A case with none is
    theoretical: no known GPU's limits let its kernel run (devices.PROFILES by default)."""
    return _profiles_per_case(tree, keys, work, _needs_on)


def _profiles_per_case(tree, keys, work: int, system_on) -> tuple:
    """((case, (profile keys where `system_on(case, the GPU's machine values)` may hold)), ...)."""
    keys = tuple(keys) if keys is not None else tuple(sorted(PROFILES))
    values = {key: machine_values(get_profile(key)) for key in keys}
    out = []
    for k, case in enumerate(tree.cases, 1):
        on = []
        for key in keys:
            system = system_on(case, values[key])
            if system is not None and cs.possible(system, work):
                on.append(key)
        out.append((k, tuple(on)))
    return tuple(out)


def _needs_on(case, values: dict) -> "cs.System | None":
    """What case's kernel needs, with the machine values of a GPU; None when false there."""
    return _with_values(case.needs.relations, case.constraints.facts, values)
