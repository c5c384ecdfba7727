"""Parameter points and emulated devices that make the dispatcher pick a given case.

For case k of a schedule a point is (values of the schedule's parameters that
the caller passes, machine values R, Z, T) such that the schedule's facts
hold, case k's constraints hold, its kernel fits, and no earlier case is
picked first. The dispatcher's rule is parakern.dispatch's: with T =
maxThreadsPerBlock, Z = sharedMemPerBlockOptin and, for case j, R_j = min(255,
regsPerBlock / threads_j), the first case whose launch is within CUDA's
limits, whose constraints hold and whose kernel fits; when none, the first
that fits with its constraints on R dropped. The points are searched for the
first pass (the second never applies where case k is picked by the first);
`expected_case` is the whole rule, with the IR's register counts, which the
emulation reports as the kernels' (cudaFuncGetAttributes). The emulated
device of a point has regsPerBlock = R * threads_k, sharedMemPerBlockOptin =
Z, maxThreadsPerBlock = T.

Parameters are sampled (seeded) within small bounds (block sizes <= 16,
threads per block <= 64, other sizes <= 64), facts checked by evaluation, and
the machine values found by z3 for the sampled parameters; where sampling
finds nothing, z3 solves parameters and machine values together. The first
point of a case has sizes that do not divide evenly where the facts allow.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

import sympy

from parakern import constraints as cs
from parakern import dispatch
from parakern.symbols import R, T, Z, sym

MAX_BLOCK = 16        # a parameter that sizes a block level
MAX_SIZE = 64         # any other integer parameter
MAX_THREADS = 64      # threads per block (each one a std::thread in the emulation)
MAX_R, MAX_Z, MAX_T = dispatch.MAX_REGISTERS, 1 << 18, 1024
SHARED_DEFAULT = 48 * 1024
SAMPLES = 4000        # random parameter draws per point
SOLVES = 24           # z3 calls for machine values per point before z3 solves everything


@dataclass(frozen=True)
class Device:
    """The emulated device of a point (what cudaGetDeviceProperties reports)."""
    regs_per_block: int
    shared_optin: int          # sharedMemPerBlockOptin = Z
    shared_default: int        # sharedMemPerBlock: above it the dispatcher must raise the attribute
    max_threads: int           # maxThreadsPerBlock = T
    R: int
    Z: int
    T: int

    def as_dict(self) -> dict:
        return {"regsPerBlock": self.regs_per_block, "sharedMemPerBlockOptin": self.shared_optin,
                "sharedMemPerBlock": self.shared_default, "maxThreadsPerBlock": self.max_threads,
                "R": self.R, "Z": self.Z, "T": self.T}


@dataclass(frozen=True)
class Point:
    case: int                          # 1-based case the point was chosen for
    values: dict                       # schedule parameter -> value (the function's arguments)
    device: Device
    expected: "int | None"             # case the dispatcher should pick; None: depends on host state
    uneven: bool                       # some size is not a multiple of a block size
    origin: str                        # "sampled" or "z3"


@dataclass
class Model:
    """What the search needs of one schedule and its case tree, compiled once."""
    schedule: object
    tree: object
    settable: tuple[str, ...]          # integer parameters that are arguments of the function
    floating: tuple[str, ...]          # float/double parameters that are arguments of the function
    hidden: tuple[str, ...]            # parameters set by the host code (loop variables, locals)
    block: tuple[str, ...]             # settable parameters that size a block level
    derived: list = field(default_factory=list)     # (name, function of the values)
    facts: list = field(default_factory=list)       # functions of the values -> bool
    floors: list = field(default_factory=list)      # (numerator, denominator) functions
    threads: list = field(default_factory=list)     # per case: function of the values
    registers: list = field(default_factory=list)   # per case: int

    @property
    def host_dependent(self) -> bool:
        """A case constraint reads a parameter the host code sets: the case may vary per call."""
        names = set(self.hidden)
        return any(s.name in names for c in self.tree.cases for r in c.constraints.relations
                   for s in r.free_symbols)


def _function(expr, names):
    f = sympy.lambdify([sym(n) for n in names], expr, modules="math")
    return lambda values: f(*(values.get(n, 0) for n in names))


def build_model(schedule, tree, argument_names) -> Model:
    ints = [p.name for p in schedule.params if p.ctype not in ("float", "double")]
    settable = tuple(n for n in ints if n in argument_names)
    floating = tuple(p.name for p in schedule.params if p.ctype in ("float", "double") and p.name in argument_names)
    hidden = tuple(n for n in ints if n not in argument_names)
    derived_values = {sym(d.name): d.value for d in schedule.derived}
    block_names = set()
    for loop in schedule.block:
        extent = sympy.sympify(loop.extent).xreplace(derived_values)
        block_names |= {s.name for s in extent.free_symbols}
    names = list(settable) + list(hidden) + [d.name for d in schedule.derived]
    model = Model(schedule, tree, settable, floating, hidden, tuple(n for n in settable if n in block_names))
    for d in schedule.derived:
        model.derived.append((d.name, _function(d.value, names)))
        for fl in sympy.sympify(d.value).atoms(sympy.floor):
            num, den = sympy.together(fl.args[0]).as_numer_denom()
            model.floors.append((_function(num, names), _function(den, names)))
    model.facts = [_function(f.relation, names) for f in schedule.facts]
    for case in tree.cases:
        model.threads.append(_function(sympy.sympify(case.counter("threads")), names))
        model.registers.append(int(case.counter("registers")))
    return model


def _complete(model: Model, values: dict) -> "dict | None":
    """The values with the derived scalars, or None when a fact fails (or C would divide by 0)."""
    full = dict(values)
    for name in model.hidden:
        full.setdefault(name, 0)
    try:
        for name, f in model.derived:
            full[name] = int(f(full))
        if not all(bool(f(full)) for f in model.facts):
            return None
    except (ZeroDivisionError, ValueError, OverflowError, TypeError):
        return None
    return full


def _uneven(model: Model, full: dict) -> bool:
    for x in model.settable:
        if x in model.block:
            continue
        if any(full[b] and full[x] % full[b] for b in model.block):
            return True
    for num, den in model.floors:
        try:
            d = den(full)
            if d > 1 and num(full) % d not in (0, d - 1):  # neither floor(X/d) nor ceil(X/d) exact
                return True
        except (ZeroDivisionError, TypeError):
            pass
    return False


def _sample(model: Model, rng: random.Random) -> dict:
    values = {}
    for name in model.settable:
        if name in model.block:
            u = rng.random()
            values[name] = 1 if u < 0.1 else rng.randint(2, 8) if u < 0.8 else rng.randint(9, MAX_BLOCK)
        else:
            values[name] = max(1, min(MAX_SIZE, round(2 ** rng.uniform(0, math.log2(MAX_SIZE)))))
    return values


def _case_relations(model: Model, k: int, full: dict, threads_k: int, regs) -> list:
    """Case k holds and fits, and no earlier case would be picked, with regsPerBlock = regs."""
    subs = {sym(n): sympy.Integer(v) for n, v in full.items()}
    relations = []
    for j, case in enumerate(model.tree.cases[:k]):
        tj = int(model.threads[j](full))
        rj = sympy.Min(MAX_R, sympy.floor(regs / tj)) if tj != threads_k else R
        holds = [r.xreplace(subs).xreplace({R: rj}) for r in case.constraints.relations]
        holds.append(sympy.Le(model.registers[j] * tj, regs))
        relations.append(sympy.Not(sympy.And(*holds)))
    relations += [r.xreplace(subs) for r in model.tree.cases[k].constraints.relations]
    relations.append(sympy.Le(model.registers[k], R))
    return relations


_BOUNDS = (sympy.Le(1, R), sympy.Le(R, MAX_R), sympy.Le(Z, MAX_Z), sympy.Le(1, T), sympy.Le(T, MAX_T))


def _machine(model: Model, k: int, full: dict, rng: random.Random, interior: bool) -> "dict | None":
    """R, Z, T for the sampled parameters (None when there are none)."""
    threads_k = int(model.threads[k](full))
    if threads_k < 1 or threads_k > MAX_THREADS:
        return None
    relations = _case_relations(model, k, full, threads_k, R * threads_k) + list(_BOUNDS)
    if any(r is sympy.false for r in relations):
        return None
    if interior:  # away from the boundaries, when the case allows it
        hints = [sympy.Le(rng.randint(1, MAX_R), R), sympy.Le(rng.randint(0, 1 << 16), Z),
                 sympy.Le(rng.randint(1, MAX_T), T)]
        verdict = cs.consistent(cs.System(tuple(relations + hints)))
        if verdict.status == "sat":
            return verdict.witness
    verdict = cs.consistent(cs.System(tuple(relations)))
    return verdict.witness if verdict.status == "sat" else None


def _device(model: Model, k: int, full: dict, machine: dict, index: int) -> Device:
    # sharedMemPerBlock is 48 KiB on every GPU and the opt-in limit Z at least that; a device
    # emulated with a smaller Z has both limits equal (see device()).
    threads_k = int(model.threads[k](full))
    r, z, t = int(machine["R"]), int(machine["Z"]), int(machine["T"])
    return device(r, z, t, threads_k)


def device(R: int, Z: int, T: int, threads: int) -> Device:
    """The emulated device on which the dispatcher reads these machine values for a launch
    of `threads` threads per block."""
    return Device(R * threads, Z, min(Z, SHARED_DEFAULT), T, R, Z, T)


def expected_case(model: Model, values: dict, device: Device) -> "int | None":
    """The case the dispatcher must pick (1-based), 0 when none fits; None if undecidable here."""
    full = _complete(model, values)
    if full is None:
        return None
    machine = dispatch.Machine(device.regs_per_block, device.shared_optin, device.max_threads)
    return dispatch.choose(model.tree, machine, full).case or 0


def find_points(model: Model, k: int, count: int, seed: int = 0) -> list[Point]:
    """Up to `count` distinct points for case k (0-based) whose device selects it."""
    rng = random.Random(f"{model.schedule.id}:{k}:{seed}")
    points: list[Point] = []
    seen: set = set()
    for index in range(count):
        point = _sampled(model, k, rng, seen, index) or _solved(model, k, seen, index)
        if point is None:
            break
        seen.add(tuple(point.values[n] for n in model.settable))
        points.append(point)
    return points


def _sampled(model: Model, k: int, rng: random.Random, seen: set, index: int) -> "Point | None":
    solves = 0
    want_uneven = index == 0
    for attempt in range(SAMPLES):
        if want_uneven and attempt == SAMPLES // 2:
            want_uneven = False  # the facts may force even sizes
        values = _sample(model, rng)
        if tuple(values[n] for n in model.settable) in seen:
            continue
        full = _complete(model, values)
        if full is None or (want_uneven and not _uneven(model, full)):
            continue
        threads_k = model.threads[k](full)
        if not 1 <= threads_k <= MAX_THREADS:
            continue
        solves += 1
        machine = _machine(model, k, full, rng, interior=index % 2 == 1)
        if machine is None:
            if solves >= SOLVES:
                return None
            continue
        return _point(model, k, values, full, machine, index, "sampled")
    return None


def _solved(model: Model, k: int, seen: set, index: int) -> "Point | None":
    """z3 on parameters and machine values together, within the same bounds."""
    case = model.tree.cases[k]
    threads = sympy.sympify(case.counter("threads"))
    relations = list(case.constraints.relations) + list(_BOUNDS)
    relations += [sympy.Le(1, threads), sympy.Le(threads, MAX_THREADS), sympy.Le(model.registers[k], R)]
    for name in model.settable:
        top = MAX_BLOCK if name in model.block else MAX_SIZE
        relations += [sympy.Le(1, sym(name)), sympy.Le(sym(name), top)]
    for j, other in enumerate(model.tree.cases[:k]):
        if sympy.simplify(sympy.sympify(other.counter("threads")) - threads) == 0:
            relations.append(sympy.Not(sympy.And(*other.constraints.relations,
                                                 sympy.Le(model.registers[j], R))))
    for old in seen:
        relations.append(sympy.Or(*(sympy.Ne(sym(n), v) for n, v in zip(model.settable, old))))
    verdict = cs.consistent(cs.System(tuple(relations), case.constraints.facts), timeout_ms=10000)
    if verdict.status != "sat":
        return None
    values = {n: int(verdict.witness.get(n, 1)) for n in model.settable}
    full = _complete(model, values)
    if full is None:
        return None
    return _point(model, k, values, full, verdict.witness, index, "z3")


def _point(model: Model, k: int, values: dict, full: dict, machine: dict, index: int, origin: str) -> Point:
    device = _device(model, k, full, machine, index)
    expected = None if model.host_dependent else expected_case(model, values, device)
    return Point(k + 1, dict(values), device, expected, _uneven(model, full), origin)
