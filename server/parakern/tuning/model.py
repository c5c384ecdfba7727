"""The time model of a case: predicted seconds of one launch at given program and data
parameters on a device.

Per case, a few quantities in the parameters (sympy, derived scalars replaced by their
definitions): the launch (blocks, threads, dynamic shared bytes, from codegen.launch), the
registers per thread (the tree's counter, or nvcc's in the C), the global bytes one block
moves (`global_bytes_per_block`), the arithmetic of one thread (`arithmetic`: 32-bit and
64-bit operations) and the bytes one block's threads read and write through the SM's
L1/shared memory (`l1_traffic`). The device gives its SM count, memory bandwidth, clock, arithmetic lanes
per SM (devices.py, with sources) and, through the occupancy calculator
(counters/occupancy.py, cudaOccupancyMaxActiveBlocksPerMultiprocessor in the C), the blocks
resident per SM. Then `FORMULA`, the same text evaluated here and printed in the generated C:

    waves       = ⌈blocks / (SMs · resident)⌉            blocks that run at once, in turns
    active      = min(blocks, SMs · resident)            blocks of one wave
    per_sm      = ⌈active / SMs⌉                          blocks of one wave on the busiest SM
    efficiency  = min(1, active · threads / (SMs · threads_per_SM / 2))
                  half the SM's threads hide the memory latency; fewer use the bandwidth less
    t_global    = waves · active · global_bytes / (bandwidth · efficiency)
    t_compute   = waves · per_sm · threads · (ops32 / lanes32 + ops64 / lanes64) / clock
    t_l1        = waves · per_sm · l1_traffic / (bytes_per_clock · clock)
                  L1 and shared memory are one memory of bytes_per_clock per SM
    t_blocks    = ⌈blocks / SMs⌉ · block_time             an SM starts one block at a time
    time        = launch_overhead + max(t_global, t_compute, t_l1, t_blocks)

Everything is per launch; a schedule inside a host loop launches once per iteration.
"""
from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

import sympy

from parakern import exact, syntax
from parakern.codegen.launch import in_parameters, launch_of
from parakern.counters.occupancy import occupancy_detail
from parakern.devices import DeviceProfile

# One launch's fixed cost: the order of a kernel launch's latency on current GPUs and
# drivers (a few microseconds, as the CUDA Best Practices Guide and the bench's empty
# launches show); the same on every device, so it only weighs against very short kernels.
LAUNCH_OVERHEAD_S = 3e-6
# What an SM spends on each block it starts and retires, whatever its threads: measured on the
# H100 run of docs/bench (matadd with 32-thread blocks and saxpy with 64-thread blocks: 2^20
# blocks take 634 us in both, 2^19 blocks 319-321 us, i.e. 80 ns a block per SM, while a
# copy of those bytes takes under 200 us). It makes very small blocks slow, which the other
# terms do not see; the same value is used on every device.
BLOCK_TIME_S = 80e-9


class ModelError(ValueError):
    """The device lacks a fact the model reads (bandwidth, clock)."""


@dataclass(frozen=True)
class ModelDevice:
    """What the model reads of a device: the occupancy calculator's profile and its speeds."""
    key: str
    profile: DeviceProfile
    sms: int
    bandwidth: float                 # bytes per second, DRAM
    clock: float                     # Hz, the SM's boost clock
    lanes32: int                     # 32-bit arithmetic results per clock per SM
    lanes64: int                     # 64-bit
    threads_per_sm: int
    shared_bytes_per_clock: int      # per SM
    launch_overhead: float = LAUNCH_OVERHEAD_S
    block_time: float = BLOCK_TIME_S

    def values(self) -> dict:
        """The device's names in FORMULA, as floats."""
        return {"sms": float(self.sms), "bandwidth": float(self.bandwidth), "clock": float(self.clock),
                "lanes32": float(self.lanes32), "lanes64": float(self.lanes64),
                "threads_per_sm": float(self.threads_per_sm),
                "shared_bytes_per_clock": float(self.shared_bytes_per_clock),
                "launch_overhead": float(self.launch_overhead), "block_time": float(self.block_time)}


def model_device(profile: DeviceProfile, key: str = "") -> ModelDevice:
    if not profile.memory_bandwidth_gbps or not profile.boost_clock_mhz:
        raise ModelError(f"{profile.name} has no memory bandwidth or clock in devices.py")
    return ModelDevice(key or profile.name, profile, profile.sm_count, profile.memory_bandwidth_gbps * 1e9,
                       profile.boost_clock_mhz * 1e6, profile.fp32_lanes_per_sm, profile.fp64_lanes_per_sm,
                       profile.max_threads_per_sm, profile.shared_memory_bytes_per_clock)


# ------------------------------------------------------------------ the formula

# (name, expression): the same text is Python (min, max, ceil) and C (fmin, fmax, ceil) over
# doubles. Inputs: the case's quantities at the point (QUANTITY_NAMES) and the device's values.
FORMULA = (
    ("concurrent", "sms * resident"),
    ("waves", "ceil(blocks / concurrent)"),
    ("active", "min(blocks, concurrent)"),
    ("per_sm", "ceil(active / sms)"),
    ("efficiency", "min(1.0, active * threads / (sms * threads_per_sm / 2.0))"),
    ("t_global", "waves * active * global_bytes / (bandwidth * efficiency)"),
    ("t_compute", "waves * per_sm * threads * (ops32 / lanes32 + ops64 / lanes64) / clock"),
    ("t_l1", "waves * per_sm * l1_traffic / (shared_bytes_per_clock * clock)"),
    ("t_blocks", "ceil(blocks / sms) * block_time"),
    ("time", "launch_overhead + max(max(t_global, t_compute), max(t_l1, t_blocks))"),
)
QUANTITY_NAMES = ("blocks", "threads", "resident", "global_bytes", "ops32", "ops64", "l1_traffic")
DEVICE_NAMES = ("sms", "bandwidth", "clock", "lanes32", "lanes64", "threads_per_sm", "shared_bytes_per_clock",
                "launch_overhead", "block_time")
TERMS = ("t_global", "t_compute", "t_l1", "t_blocks")
_COMPILED = tuple((name, compile(text, name, "eval")) for name, text in FORMULA)
_BUILTINS = {"__builtins__": {}, "min": min, "max": max, "ceil": math.ceil}


def evaluate(inputs: dict) -> dict:
    """Every step of FORMULA at these inputs (names -> numbers); the result has them all."""
    env = {k: float(v) for k, v in inputs.items()}
    for name, code in _COMPILED:
        env[name] = float(eval(code, _BUILTINS, env))   # noqa: S307 - our own constant text
    return env


def formula_c(indent: str = "") -> list[str]:
    """FORMULA as C statements (`const double name = ...;`), over doubles of the same names."""
    out = []
    for name, text in FORMULA:
        text = re.sub(r"\bmin\(", "fmin(", re.sub(r"\bmax\(", "fmax(", text))
        out.append(f"{indent}const double {name} = {text};")
    return out


# ------------------------------------------------------------------ a case's quantities

@dataclass(frozen=True)
class Quantities:
    """A case's inputs to FORMULA as expressions in the parameters (derived scalars replaced)."""
    blocks: sympy.Expr
    threads: sympy.Expr
    shared_bytes: sympy.Expr         # dynamic shared memory per block (the occupancy calculator's)
    registers: int                   # per thread, the tree's counter
    global_bytes: sympy.Expr         # per block
    ops32: sympy.Expr                # per thread
    ops64: sympy.Expr                # per thread
    l1_traffic: sympy.Expr           # per block, bytes through L1 and shared memory

    def expressions(self) -> dict:
        return {"blocks": self.blocks, "threads": self.threads, "shared_bytes": self.shared_bytes,
                "global_bytes": self.global_bytes, "ops32": self.ops32, "ops64": self.ops64,
                "l1_traffic": self.l1_traffic}


def quantities(case) -> Quantities:
    s = case.kernel.schedule
    launch = launch_of(case)
    ops32, ops64 = arithmetic(case)
    return Quantities(sympy.Mul(*launch.grid), launch.threads, launch.shared_bytes,
                      int(case.counter("registers")), global_bytes_per_block(case),
                      in_parameters(ops32, s), in_parameters(ops64, s), l1_traffic(case))


def _trips(s) -> dict:
    """Serial loop variable -> its trip count (in parameters)."""
    return {lp.var: in_parameters(lp.trip_count, s) for lp in (*s.between, *s.serial)}


def _between_trips(s):
    return sympy.Mul(*(in_parameters(lp.trip_count, s) for lp in s.between))


def global_bytes_per_block(case) -> sympy.Expr:
    """Bytes of global memory one block of the case reads and writes.

    THE one home of this figure in the model. For now from the footprint analysis
    (analysis/footprint.py): each element a block reads loaded once and each element it
    writes stored once, staged arrays included (their tile loads and stores); an array
    whose region moves with a serial loop between the grid and block levels (matmul's k)
    counts once per iteration. Where a footprint is unbounded, every access of the array is
    counted. Each element costs what its warp requests cost in 32-byte sectors
    (`_sector_bytes`): by the stride between consecutive lanes along threadIdx.x and the
    lanes a warp has along x. It stays a formula in the parameters (dispatch_auto prints it
    in C); analysis/traffic.py measures the same requests exactly at one point (`parakern
    profile`)."""
    from parakern.analysis.footprint import footprints
    s = case.kernel.schedule
    between = {lp.var for lp in s.between}
    moving = _between_trips(s)
    total = sympy.S.Zero
    for kind in ("is_read", "is_write"):
        accesses = tuple(a for a in s.accesses if getattr(a, kind))
        names = tuple(dict.fromkeys(a.array for a in accesses))
        if not names:
            continue
        part = dataclasses.replace(s, accesses=accesses)
        for fp in footprints(part, names):
            array = s.array(fp.array)
            mine = [a for a in accesses if a.array == fp.array]
            if fp.elements is sympy.oo or fp.elements.has(sympy.oo):
                elements = sum((_executions(a, s) for a in mine), sympy.S.Zero) * _threads(case)
            else:
                moves = any(set(map(str, sympy.Tuple(*a.indices).free_symbols)) & between for a in mine)
                elements = fp.elements * (moving if moves else 1)
            staged = fp.array in case.kernel.cached   # copy loops: consecutive threads, consecutive elements
            total += _sector_bytes(in_parameters(elements, s), array.element_size,
                                   0 if staged else _worst_stride(mine, array, s), _lanes(case))
    return sympy.expand(total)


def _lanes(case) -> sympy.Expr:
    """Threads of a warp along threadIdx.x: consecutive lanes, consecutive x."""
    return sympy.Min(launch_of(case).block[0], 32)


def _worst_stride(accesses, array, s):
    """The largest stride, in elements, between the elements two consecutive lanes (threadIdx.x)
    touch over the array's accesses: 0 (one element for the warp), a number, or None when it
    is not a constant (a row per lane: `A[x][j]` strides by a row of unknown length). An access
    that walks its elements one by one along its innermost serial loop counts as 0 for DRAM:
    the sectors a warp fetches for one iteration serve the next ones from L1 (a row per lane of
    matvec reads each sector of A from DRAM once, not once per element)."""
    worst = 0
    for a in accesses:
        stride = _lane_stride(a, array, s)
        if stride == 0 or _walks_along_serial_loop(a, array, s):
            continue
        if stride is None:
            return None
        worst = max(worst, stride)
    return worst


def _flat_index(a, array, s) -> sympy.Expr:
    dims = tuple(array.dims) if len(array.dims) == len(a.indices) else (sympy.S.One,) * len(a.indices)
    flat = sum((i * sympy.Mul(*dims[k + 1:]) for k, i in enumerate(a.indices)), sympy.S.Zero)
    return sympy.expand(in_parameters(flat, s))


def _lane_stride(a, array, s):
    """Elements between what consecutive lanes (threadIdx.x) touch at access `a`: 0, a number,
    or None (not a constant)."""
    x = next((lp for lp in s.block if lp.axis == "x"), None)
    if x is None:
        return 0
    var = sympy.Symbol(x.var, integer=True)
    flat = _flat_index(a, array, s)
    if not flat.has(var):
        return 0
    stride = flat.coeff(var) if flat.is_polynomial(var) and sympy.degree(flat, var) == 1 else None
    if stride is None or not stride.is_number or stride.free_symbols:
        return None
    return abs(int(stride))


def _walks_along_serial_loop(a, array, s) -> bool:
    """The access moves by one element per iteration of its innermost serial loop."""
    if not a.loops:
        return False
    flat = _flat_index(a, array, s)
    var = sympy.Symbol(a.loops[-1], integer=True)
    return flat.is_polynomial(var) and sympy.degree(flat, var) == 1 and abs(flat.coeff(var)) == 1


def _sector_bytes(elements, size: int, stride, lanes) -> sympy.Expr:
    """Bytes moved between DRAM and the SMs for `elements` elements of `size` bytes that warps
    request `lanes` at a time, consecutive lanes `stride` elements apart: each request costs
    its 32-byte sectors (NOTES.md), so a block of one thread along x moves 8 floats for one,
    and a row per lane a sector per element."""
    if stride == 0:
        return elements * size
    if stride is None:
        return elements * max(size, 32)
    requests = sympy.ceiling(elements / lanes)
    return requests * 32 * sympy.Min(lanes, sympy.ceiling(lanes * stride * size / sympy.Integer(32)))


def _threads(case):
    return launch_of(case).threads


def _executions(access, s) -> sympy.Expr:
    """How often one thread executes an access: the trip counts of its enclosing serial loops
    (and of the loops between grid and block levels)."""
    trips = _trips(s)
    count = sympy.Mul(*(trips.get(v, sympy.S.One) for v in access.loops))
    missing = [lp for lp in s.between if lp.var not in access.loops]
    return count * sympy.Mul(*(trips[lp.var] for lp in missing))


def l1_traffic(case) -> sympy.Expr:
    """Bytes one block's threads read and write through the SM's L1 and shared memory (one
    memory on sm_70 and later): every access every thread executes, of a staged array (shared
    memory) or not (a global load or store passes L1 even where DRAM is not touched again:
    matmul without cache() reads a and b there at every multiply-add), and the staging copies
    (the tile read from global and written to shared memory when loaded, the reverse when
    stored back). Accesses kept in a register (accumulators) are no longer accesses of the
    kernel's schedule."""
    s = case.kernel.schedule
    staged = set(case.kernel.cached)
    threads, lanes = _threads(case), _lanes(case)
    total = sympy.S.Zero
    for a in s.accesses:
        array = s.array(a.array)
        if a.array in staged:
            total += _executions(a, s) * threads * array.element_size
        else:   # L1 serves a warp's request a 32-byte sector at a time; a broadcast is one
            stride = _lane_stride(a, array, s)
            per_run = (sympy.ceiling(threads / lanes) * 32 if stride == 0
                       else _sector_bytes(threads, array.element_size, stride, lanes))
            total += _executions(a, s) * per_run
    for array, copied in _staging_copies(case):   # each copied element: global side and shared side
        total += copied * s.array(array).element_size * 2
    return sympy.expand(in_parameters(total, s))


def _staging_copies(case) -> tuple:
    """(array, elements the staging loops copy per block) of each staged array: its tile
    loaded, and stored back where the block writes it, once per iteration of the loops
    between the grid and block levels (a tile that is not bounded is not counted)."""
    from parakern.analysis.footprint import footprints
    s = case.kernel.schedule
    staged = tuple(sorted(case.kernel.cached))
    return tuple((fp.array, fp.elements * (1 + int(s.array(fp.array).written)) * _between_trips(s))
                 for fp in (footprints(s, staged) if staged else ()) if fp.elements is not sympy.oo)


_ARITHMETIC_ASSIGN = {"+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="}


# What a staging loop spends on each element it copies, in 32-bit arithmetic operations (the
# fp32 rate; integer instructions issue at half of it): a division and a remainder by the
# run-time tile width (no integer divider: about 20 instructions each), four bounds
# comparisons, 64-bit addressing and the loop itself, about 50 integer instructions. Where
# this sits in that range was read off the H100 run (docs/bench/model-vs-h100.md compares
# 20, 50 and 100 over every staged kernel of it): without it a staged kernel is predicted as
# fast as its unstaged sibling, measured 1.3-2x slower.
STAGING_OPS_PER_ELEMENT = 100


def arithmetic(case) -> tuple:
    """(32-bit, 64-bit) arithmetic operations of one thread: every operator, math call and
    compound assignment of its body (comparisons, logic and subscripts aside: addressing),
    times the trip counts of its serial loops and of the loops between grid and block
    levels; of an `if` with an `else` the larger branch where both are numbers; plus the
    thread's share of the staging copies (`STAGING_OPS_PER_ELEMENT` per element copied)."""
    s = case.kernel.schedule
    trips = _trips(s)
    ops32, ops64 = _ops(s.body, trips)
    between = _between_trips(s)
    return sympy.expand(ops32 * between + _staging_ops(case)), sympy.expand(ops64 * between)


def _staging_ops(case) -> sympy.Expr:
    copied = sum((n for _, n in _staging_copies(case)), sympy.S.Zero)
    # whole operations per thread (an integer in Python and in the C of dispatch_auto)
    return sympy.ceiling(in_parameters(copied, case.kernel.schedule) * STAGING_OPS_PER_ELEMENT / _threads(case))


def _ops(node, trips) -> tuple:
    zero = (sympy.S.Zero, sympy.S.Zero)
    if isinstance(node, syntax.Index) or node is None:
        return zero
    if isinstance(node, syntax.Loop):
        a, b = _ops(node.body, trips)
        n = trips.get(node.var, sympy.S.One)
        return a * n, b * n
    if isinstance(node, syntax.If):
        c = _ops(node.cond, trips)
        t = _ops(node.then, trips)
        e = _ops(node.other, trips) if node.other is not None else zero
        both = tuple(max(x, y) if (x.is_Number and y.is_Number) else x + y for x, y in zip(t, e))
        return c[0] + both[0], c[1] + both[1]
    own = 0
    ctype = getattr(node, "ctype", "")
    if isinstance(node, syntax.Binary) and node.op not in syntax.COMPARISONS | syntax.LOGICAL:
        own = 1
    elif isinstance(node, syntax.Unary) and node.op in ("-", "~"):
        own = 1
    elif isinstance(node, syntax.Call):
        own = 1
    elif isinstance(node, syntax.Assign) and node.op in _ARITHMETIC_ASSIGN:
        own, ctype = 1, node.target.ctype
    a, b = (sympy.S.Zero, sympy.S.Zero)
    if own:
        a, b = (sympy.S.Zero, sympy.S.One) if ctype == "double" else (sympy.S.One, sympy.S.Zero)
    for child in syntax.children(node):
        if isinstance(node, syntax.Assign) and child is node.target:
            continue   # the store's own subscripts are addressing
        x, y = _ops(child, trips)
        a, b = a + x, b + y
    return a, b


# ------------------------------------------------------------------ one prediction

@dataclass(frozen=True)
class Prediction:
    time: float                      # seconds, one launch
    steps: tuple                     # ((name, value), ...): the inputs and every step of FORMULA
    resident: int                    # blocks per SM (occupancy calculator)
    occupancy: float                 # active warps / max warps per SM
    limiting: str                    # the term of the max: "global", "compute", "l1" or "blocks"
    bytes_moved: int                 # global bytes of the whole launch (blocks x global_bytes)

    def step(self, name: str) -> float:
        return dict(self.steps)[name]


def at(q: Quantities, subs: dict) -> "dict | None":
    """The case's quantities at a point (symbol -> Integer), rounded up; None where one is
    not a number."""
    out = {}
    given = exact.numbers(subs)
    for name, expr in q.expressions().items():
        value = exact.ceiling(expr, subs, given)
        if value is None:
            return None
        out[name] = value
    return out


def predict(q: Quantities, subs: dict, device: ModelDevice, registers: "int | None" = None) -> "Prediction | None":
    """The predicted time of the case at `subs` on `device`; None where the block cannot be
    resident (the occupancy calculator gives 0 blocks) or a quantity is not a number.
    registers: nvcc's count per thread instead of the tree's."""
    values = at(q, subs)
    if values is None or values["threads"] < 1 or values["blocks"] < 1:
        return None
    regs = q.registers if registers is None else registers
    try:
        detail = occupancy_detail(regs, values["shared_bytes"], values["threads"], device.profile)
    except ValueError:
        return None
    if detail.active_blocks < 1:
        return None
    inputs = {**{n: values[n] for n in QUANTITY_NAMES if n != "resident"}, "resident": detail.active_blocks,
              **device.values()}
    env = evaluate(inputs)
    steps = tuple((n, env[n]) for n in (*QUANTITY_NAMES, *(name for name, _ in FORMULA)))
    terms = {t: env[t] for t in TERMS}
    limiting = max(TERMS, key=lambda t: terms[t]).removeprefix("t_")
    return Prediction(env["time"], steps, detail.active_blocks, float(detail.occupancy), limiting,
                      values["blocks"] * values["global_bytes"])


# ------------------------------------------------------------------ the formula for people

def _math(expr) -> str:
    from parakern.printing import to_math
    expr = sympy.sympify(expr)
    return str(int(expr)) if expr.is_Integer else to_math(expr)


def formula_text(q: Quantities, k: int) -> list[str]:
    """The case's model as lines of text: its quantities, then FORMULA."""
    e = {n: _math(x) for n, x in q.expressions().items()}
    lines = [f"case {k}: blocks = {e['blocks']}, threads = {e['threads']}, "
             f"shared = {e['shared_bytes']} B, registers {q.registers}",
             f"  global bytes per block = {e['global_bytes']}",
             f"  arithmetic per thread = {e['ops32']} (32-bit) + {e['ops64']} (64-bit)",
             f"  L1 and shared-memory bytes per block = {e['l1_traffic']}",
             "  resident = blocks per SM by the occupancy calculator (registers, shared, threads)"]
    return lines + [f"  {name} = {text}" for name, text in FORMULA]


_TREES: dict = {}          # id(tree) -> (tree, quantities): the tree kept, so its id is not reused
_KEEP = 32


def tree_quantities(tree) -> tuple:
    """quantities() of every case of a tree, computed once per tree."""
    hit = _TREES.get(id(tree))
    if hit is not None and hit[0] is tree:
        return hit[1]
    if len(_TREES) >= _KEEP:
        _TREES.pop(next(iter(_TREES)))
    found = tuple(quantities(c) for c in tree.cases)
    _TREES[id(tree)] = (tree, found)
    return found
