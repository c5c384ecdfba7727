"""Parameter points and emulated devices that make the tree's dispatcher pick a given case.

For case k of a schedule a point is (values of the schedule's parameters that
the caller passes, machine values R_B, Z, T) such that the schedule's facts
hold, case k's constraints hold, its kernel fits, and no earlier case is
picked first. The tree's rule is parakern.dispatch's: with R_B =
regsPerBlock, Z = sharedMemPerBlockOptin, T = maxThreadsPerBlock, the first
case whose launch is within CUDA's limits, whose constraints hold and whose
kernel fits; when none, the first whose kernel fits. The points are searched
for the first pass (the second never applies where case k is picked by the
first) and call `<function>_<index>_dispatch_tree` (rule TREE): that is how
verify forces every case. `expected_case` is the whole rule of either
dispatcher (TREE, or DEFAULT: the model's fastest case that fits), with the IR's
register counts, which the emulation reports as the kernels' (cudaFuncGetAttributes). The
emulated device of a point has regsPerBlock = R_B, sharedMemPerBlockOptin = Z,
maxThreadsPerBlock = T, and an H100's SMs, per-SM limits and speeds
(`profile_arguments`: what the default dispatcher's model reads).

Parameters set by the host code between the function's entry and the schedule (`hidden`:
a loop variable, or a grid extent changed after its definition, `g = n / B; if (n % B) g++;`)
are unknown before the call: a fact that reads one is checked at run time, on the values
each dispatcher call received (`host_check`), which also give the case each call must pick;
before the call they count as 1 (a grid they size is not empty).

Parameters are sampled (seeded), facts checked by evaluation, and the machine
values found by z3 for the sampled parameters; where sampling finds nothing,
z3 solves parameters and machine values together within small bounds, raised where
the facts require more (`assert(Bx >= 32)`: Bx up to 32). The
first two points of a case are realistic where the facts and the case allow:
block sizes as programmers write them (32 to 1024 threads per block, the
emulation runs up to 1024), several blocks, data sizes up to 300 (at most
MAX_ELEMENTS array elements); the first of them has sizes that do not divide
evenly. Later points are small and may be degenerate (a block of 1, one tile).
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace

import sympy

from parakern.symbolic import constraints as cs
from parakern.symbolic.cinteger import LAMBDIFY_MODULES
from parakern import dispatch
from parakern.codegen import status
from parakern.machine.devices import Device, emulated, get_profile
from parakern.symbolic.printing import to_c
from parakern.symbolic.symbols import R_B, T, Z, sym
from parakern.launch import launch_of

MAX_SIZE = 300        # any other integer parameter
MAX_THREADS = 1024    # threads per block, as on every GPU (the emulation runs them as fibers)
MAX_ELEMENTS = 1 << 20  # elements of all arrays together at a point (the serial C and the emulation run it)
REALISTIC_THREADS = 32  # a realistic block has at least a warp
MAX_RB, MAX_Z, MAX_T = 1 << 16, 1 << 18, 1024   # registers per block, shared bytes, threads
SHARED_DEFAULT = 48 * 1024
SAMPLES = 4000        # random parameter draws per point

# Which dispatcher a point calls: the default (the model's fastest case that fits) or the tree's
# (the paper's rule, which verify's points steer to each case in turn through the device's limits).
DEFAULT, TREE = "default", "tree"


SOLVES = 24           # z3 calls for machine values per point before z3 solves everything


@dataclass(frozen=True)
class Point:
    case: int                          # 1-based case the point was chosen for
    values: dict                       # schedule parameter -> value (the function's arguments)
    device: Device
    expected: "int | None"             # case the dispatcher should pick; None: depends on host state
    uneven: bool                       # some size is not a multiple of a block size
    origin: str                        # "sampled" or "z3"
    threads: int = 0                   # threads per block of case k's launch
    realistic: bool = False            # a warp or more per block, more than one block
    rule: str = DEFAULT                # the dispatcher it calls: DEFAULT (the model's fastest) or TREE


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
    facts: list = field(default_factory=list)       # (function of the values -> bool, hidden names it reads, Fact)
    floors: list = field(default_factory=list)      # (numerator, denominator) functions
    threads: list = field(default_factory=list)     # per case: function of the values
    registers: list = field(default_factory=list)   # per case: int
    elements: list = field(default_factory=list)    # per array: function of the values -> its element count

    @property
    def host_dependent(self) -> bool:
        """A case constraint reads a parameter the host code sets: the case may vary per call."""
        names = set(self.hidden)
        return any(s.name in names for c in self.tree.cases for r in c.constraints.relations
                   for s in r.free_symbols)


def _function(expr, names):
    f = sympy.lambdify([sym(n) for n in names], expr, modules=LAMBDIFY_MODULES)
    return lambda values: f(*(values.get(n, 0) for n in names))


def build_model(schedule, tree, argument_names) -> Model:
    ints = [p.name for p in schedule.params if p.ctype not in ("float", "double")]
    # A fact of the function may name an argument this schedule does not use (another
    # schedule's size in `assert(nk > 0)`): it is set at every point too, or the fact fails.
    known = set(ints) | {p.name for p in schedule.params} | {d.name for d in schedule.derived}
    outside = sorted({s.name for f in schedule.facts for s in sympy.sympify(f.relation).free_symbols} - known)
    ints += [n for n in outside if n in argument_names]
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
    for f in schedule.facts:
        reads = {s.name for s in sympy.sympify(f.relation).free_symbols}
        for d in schedule.derived:   # a derived scalar reads what its definition reads
            if d.name in reads:
                reads |= {s.name for s in sympy.sympify(d.value).free_symbols}
        model.facts.append((_function(f.relation, names), frozenset(reads & set(hidden)), f))
    for case in tree.cases:
        model.threads.append(_function(sympy.sympify(case.counter("threads")), names))
        model.registers.append(int(case.counter("registers")))
    for array in schedule.arrays:
        if array.dims and all(d is not None for d in array.dims):
            model.elements.append(_function(sympy.Mul(*[sympy.sympify(d) for d in array.dims]), names))
    return model


HOST_UNKNOWN = 1   # a host-set parameter before the call: a grid it sizes is not empty


def _complete(model: Model, values: dict) -> "dict | None":
    """The values with the derived scalars, or None when a fact fails (or C would divide by 0).
    A fact reading a host-set parameter that `values` does not give waits for the call."""
    full = dict(values)
    for name in model.hidden:
        full.setdefault(name, HOST_UNKNOWN)
    try:
        for name, f in model.derived:
            full[name] = int(f(full))
        if _failed_fact(model, full, set(values)) is not None:
            return None
        if sum(max(0, int(f(full))) for f in model.elements) > MAX_ELEMENTS:
            return None
    except (ZeroDivisionError, ValueError, OverflowError, TypeError):
        return None
    return full


def _failed_fact(model: Model, full: dict, given: set):
    """The first fact false at `full` among those whose host-set parameters are `given`:
    (its function, the host-set names it reads, the Fact), or None."""
    for entry in model.facts:
        f, reads, _fact = entry
        if reads <= given and not bool(f(full)):
            return entry
    return None


def host_check(model: Model, values: dict, calls: list, device: "Device", rule: str = DEFAULT) -> tuple:
    """(what each dispatcher call must return, in order; problem) from the values each call
    received (parameter -> value): the case, status.NO_CASE_FITS, or status.NOTHING_TO_DO where the values leave a
    meta_for empty (its loop bound fact fails: the serial C runs nothing there either); any
    other fact the host's values break is the problem ('' if none)."""
    expected = []
    names = set(model.hidden) | set(model.settable)   # an argument the host changed too (polydiv's N--)
    for n, call in enumerate(calls, 1):
        host = {h: int(call[h]) for h in call if h in names}
        full = dict(values, **host)
        try:
            for name, f in model.derived:
                full[name] = int(f(full))
            fact = _failed_fact(model, full, set(full))
        except (ZeroDivisionError, ValueError, OverflowError, TypeError):
            fact = None
        if fact is not None and fact[2].origin == "loop bound":
            expected.append(status.NOTHING_TO_DO)
            continue
        if fact is not None:
            _, reads, fact = fact
            direct = {s.name for s in fact.relation.free_symbols}
            told = ", ".join(f"{h} = {full[h]}" for h in list(host) + [d for d, _ in model.derived]
                             if h in reads or h in direct) or ", ".join(f"{h} = {v}" for h, v in host.items())
            line = f"{fact.span.line}:{fact.span.col}" if fact.span else ""
            return tuple(expected), (f"at call {n} of the schedule the host code set {told}, where the analysis "
                                     f"assumes {to_c(fact.relation)} ({fact.origin}"
                                     f"{', line ' + line if line else ''}): the kernels are not meant for it")
        expected.append(expected_case(model, dict(values, **host), device, rule) or status.NO_CASE_FITS)
    return tuple(expected), ""


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


# block sizes as CUDA programmers write them, and a few odd ones
_BLOCK_SIZES = (2, 4, 8, 16, 32, 64, 128, 256) + (3, 6, 12, 24, 48, 96)


def _sample(model: Model, rng: random.Random, realistic: bool = False) -> dict:
    """Parameter values. realistic: block sizes from those programmers use (a warp or more per
    block is checked by the caller) and data sizes of a few blocks, not multiples of them."""
    values = {}
    for name in model.settable:
        if name in model.block:
            u = rng.random()
            if realistic:
                values[name] = rng.choice(_BLOCK_SIZES)
            else:
                values[name] = 1 if u < 0.1 else rng.randint(2, 8) if u < 0.8 else rng.randint(9, 16)
        else:
            top = MAX_SIZE if realistic else 64
            values[name] = max(1, min(top, round(2 ** rng.uniform(0, math.log2(top)))))
    return values


def realistic(model: Model, k: int, full: dict) -> bool:
    """A launch a GPU programmer would write: at least a warp per block, more than one block
    (a grid the host code sizes counts as several)."""
    return model.threads[k](full) >= REALISTIC_THREADS and _blocks(model, k, full) > 1


def _blocks(model: Model, k: int, full: dict) -> float:
    count = 1
    subs = {sym(n): sympy.Integer(v) for n, v in full.items() if n not in model.hidden}
    for g in launch_of(model.tree.cases[k]).grid:
        value = sympy.sympify(g).xreplace(subs)
        count *= int(value) if value.is_Integer else math.inf if value.free_symbols else 1
    return count


def _case_relations(model: Model, k: int, full: dict) -> list:
    """Case k's constraints and needs hold (its kernel, at the IR's register count that the
    emulation reports, fits R_B, Z, T), and no earlier case's both do: the first pass picks k."""
    subs = {sym(n): sympy.Integer(v) for n, v in full.items()}
    relations = []
    for case in model.tree.cases[:k]:
        holds = [r.xreplace(subs) for r in case.constraints.relations + case.needs.relations]
        relations.append(sympy.Not(sympy.And(*holds)))
    case = model.tree.cases[k]
    relations += [r.xreplace(subs) for r in case.constraints.relations + case.needs.relations]
    return relations


_BOUNDS = (sympy.Le(1, R_B), sympy.Le(R_B, MAX_RB), sympy.Le(Z, MAX_Z), sympy.Le(1, T), sympy.Le(T, MAX_T))


def _machine(model: Model, k: int, full: dict, rng: random.Random, interior: bool) -> "dict | None":
    """R_B, Z, T for the sampled parameters (None when there are none)."""
    threads_k = int(model.threads[k](full))
    if threads_k < 1 or threads_k > MAX_THREADS:
        return None
    relations = _case_relations(model, k, full) + list(_BOUNDS)
    if any(r is sympy.false for r in relations):
        return None
    if interior:  # away from the boundaries, when the case allows it
        hints = [sympy.Le(rng.randint(1, MAX_RB), R_B), sympy.Le(rng.randint(0, 1 << 16), Z),
                 sympy.Le(rng.randint(1, MAX_T), T)]
        verdict = cs.consistent(cs.System(tuple(relations + hints)))
        if verdict.status == "sat":
            return verdict.witness
    verdict = cs.consistent(cs.System(tuple(relations)))
    return verdict.witness if verdict.status == "sat" else None


def _device(model: Model, k: int, full: dict, machine: dict, index: int) -> Device:
    # sharedMemPerBlock is 48 KiB on every GPU and the opt-in limit Z at least that; a device
    # emulated with a smaller Z has both limits equal (see device()).
    return device(int(machine["R_B"]), int(machine["Z"]), int(machine["T"]))


# What the emulated devices are besides the limits a point sets: a current GPU (the dispatch rule
# and the emulation read nothing else of it).
EMULATED_BASE = get_profile("h100")


def device(R_B: int, Z: int, T: int, base: "Device | None" = None) -> Device:
    """The emulated device on which the dispatcher reads these machine values (the speeds, SMs and
    per-SM limits of `base`, an H100 by default)."""
    return as_emulated(emulated(base or EMULATED_BASE, R_B, Z, min(Z, SHARED_DEFAULT), T))


# The emulated memory bus, in bits: a memory clock of the bandwidth in GB/s times 1000 kHz then
# gives the bandwidth exactly (2 x clock x bus bytes, as the dispatchers read it).
BUS_BITS = 4000


def profile_arguments(device: Device) -> tuple:
    """parakern_cpu_set_profile's arguments that make the emulated GPU `device` for what the time
    model reads (SMs, capability, threads and blocks per SM, reserved shared memory, clock, memory
    clock and bus width, L2 bytes)."""
    memory_khz = round((device.memory_bandwidth_gbps or 0.0) * 1e9 / (2 * 1000 * (BUS_BITS // 8)))
    return (device.sm_count, *device.compute_capability, device.max_threads_per_sm, device.max_blocks_per_sm,
            device.reserved_shared_memory_per_block, (device.boost_clock_mhz or 0) * 1000, memory_khz, BUS_BITS,
            device.l2_cache_bytes or 0)


def as_emulated(device: Device) -> Device:
    """The device as the dispatchers read it on the emulation (profile_arguments): its bandwidth
    from the memory clock and bus, in the C's arithmetic."""
    memory_khz, bus_bits = profile_arguments(device)[7:9]
    bandwidth = 2.0 * memory_khz * 1000.0 * (bus_bits // 8)
    if device.memory_bandwidth_gbps and bandwidth == device.memory_bandwidth_gbps * 1e9:
        return device
    return replace(device, memory_bandwidth_gbps=bandwidth / 1e9 if memory_khz else None)


def device_json(device: Device) -> dict:
    """What the emulated device reports (cudaDeviceProp's names), its machine values and the
    arguments of parakern_cpu_set_profile that make it (`profile`)."""
    return {**device.properties(), "R_B": device.R_B, "Z": device.Z, "T": device.T,
            "name": device.name, "profile": list(profile_arguments(device))}


def expected_case(model: Model, values: dict, device: Device, rule: str = DEFAULT) -> "int | None":
    """The case the dispatcher of `rule` must pick (1-based), 0 when none fits; None if undecidable here."""
    full = _complete(model, values)
    if full is None:
        return None
    choice = dispatch.choose(model.tree, device, full)
    return (choice.tree if rule == TREE else choice.case) or 0


def find_points(model: Model, k: int, count: int, seed: int = 0) -> list[Point]:
    """Up to `count` distinct points for case k (0-based) whose device selects it."""
    rng = random.Random(f"{model.schedule.id}:{k}:{seed}")
    points: list[Point] = []
    seen: set = set()
    tops = None   # z3's bounds, found when sampling first fails
    for index in range(count):
        point = _sampled(model, k, rng, seen, index)
        if point is None:
            tops = _tops(model, k) if tops is None else tops
            point = None if tops is None else _solved(model, k, seen, index, tops)
        if point is None:
            break
        seen.add(tuple(point.values[n] for n in model.settable))
        points.append(point)
    return points


def _sampled(model: Model, k: int, rng: random.Random, seen: set, index: int) -> "Point | None":
    """The first points of a case are realistic (a warp or more per block, several blocks) and
    the first of all uneven, where the facts and the case's constraints allow; later ones and
    the fallbacks are small and may be degenerate (a block of 1, one tile)."""
    solves = 0
    want_uneven = index == 0
    want_realistic = index < 2
    for attempt in range(SAMPLES):
        if want_uneven and attempt == SAMPLES // 2:
            want_uneven = False  # the facts may force even sizes
        if want_realistic and attempt == 3 * SAMPLES // 4:
            want_realistic = False
        values = _sample(model, rng, want_realistic)
        if tuple(values[n] for n in model.settable) in seen:
            continue
        full = _complete(model, values)
        if full is None or (want_uneven and not _uneven(model, full)):
            continue
        if want_realistic and not realistic(model, k, full):
            continue
        if dispatch.launch_refusal(model.tree, k + 1, full):
            continue   # beyond CUDA's launch limits (a block deeper than 64): no device runs it
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


SMALL_BLOCK, SMALL_SIZE = 16, 64   # z3's bounds where the facts allow: small, cheap points


def _relations(model: Model, k: int) -> list:
    """Case k's constraints and needs, the machine's bounds, a launchable block, and no
    earlier case picked by the first pass: what every point of case k satisfies."""
    case = model.tree.cases[k]
    threads = sympy.sympify(case.counter("threads"))
    relations = list(case.constraints.relations + case.needs.relations) + list(_BOUNDS)
    relations += [sympy.Le(1, threads), sympy.Le(threads, MAX_THREADS)]
    for other in model.tree.cases[:k]:
        relations.append(sympy.Not(sympy.And(*other.constraints.relations, *other.needs.relations)))
    return relations


def _within(tops: dict) -> list:
    return [r for name, top in tops.items() for r in (sympy.Le(1, sym(name)), sympy.Le(sym(name), top))]


def _tops(model: Model, k: int) -> "dict | None":
    """Upper bounds of the settable parameters for z3: small (SMALL_BLOCK for a block size,
    SMALL_SIZE otherwise) where the facts and case k allow a point within them, else each
    raised to the least value the facts allow (`assert(Bx >= 32)`) and then doubled together
    until a point exists; None when none does with blocks of at most MAX_THREADS and other
    parameters of at most MAX_ELEMENTS (_complete then rejects arrays too large to emulate)."""
    case = model.tree.cases[k]
    relations = _relations(model, k)
    small = {n: SMALL_BLOCK if n in model.block else SMALL_SIZE for n in model.settable}
    most = {n: MAX_THREADS if n in model.block else MAX_ELEMENTS for n in model.settable}

    def sat(tops: dict) -> bool:
        system = cs.System(tuple(relations + _within(tops)), case.constraints.facts)
        return cs.consistent(system).status == "sat"

    if sat(small):
        return small
    if not sat(most):
        return None
    tops = {}
    for name in model.settable:   # the least value of each with the others free
        low, high = small[name], small[name]   # doubling, then halving: few calls for a small least
        while high < most[name] and not sat({**most, name: high}):
            low, high = high, min(most[name], 2 * high)
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if sat({**most, name: middle}) else (middle, high)
        tops[name] = high
    while tops != most and not sat(tops):
        tops = {n: min(most[n], 2 * top) for n, top in tops.items()}
    return tops


def _solved(model: Model, k: int, seen: set, index: int, tops: dict) -> "Point | None":
    """z3 on parameters and machine values together, each parameter within its top (_tops)."""
    case = model.tree.cases[k]
    relations = _relations(model, k) + _within(tops)
    for old in seen:
        relations.append(sympy.Or(*(sympy.Ne(sym(n), v) for n, v in zip(model.settable, old))))
    verdict = cs.consistent(cs.System(tuple(relations), case.constraints.facts), work=5 * cs.DEFAULT_WORK)
    if verdict.status != "sat":
        return None
    values = {n: int(verdict.witness.get(n, 1)) for n in model.settable}
    full = _complete(model, values)
    if full is None or dispatch.launch_refusal(model.tree, k + 1, full):
        return None
    return _point(model, k, values, full, verdict.witness, index, "z3")


def _point(model: Model, k: int, values: dict, full: dict, machine: dict, index: int, origin: str) -> Point:
    device = _device(model, k, full, machine, index)
    expected = None if model.host_dependent else expected_case(model, values, device, TREE)
    return Point(k + 1, dict(values), device, expected, _uneven(model, full), origin,
                 int(model.threads[k](full)), realistic(model, k, full), TREE)
