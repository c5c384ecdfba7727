"""The time model of a case: predicted seconds of one launch at given program and data
parameters on a device.

Per case, a few quantities in the parameters (sympy, derived scalars replaced by their
definitions): the launch (blocks, threads, dynamic shared bytes, from launch), the
registers per thread (the tree's counter, or nvcc's in the C), the global bytes one block
moves (`global_traffic_per_block`) and what it reads per iteration of its between loops (its
window in L2), the bytes of the arrays the launch touches and reads, each once
(`array_bytes`), whether a block waits at barriers (`synchronised`: it stages), the
arithmetic of one thread (`arithmetic`: 32-bit and 64-bit operations, an integer division
by a run-time value as the instructions it compiles to, the staging copies of copies.py), the
bytes one block's threads read and write through the SM's L1/shared memory (`l1_traffic`),
and the waits on one thread's path (latency.py: global loads L1 misses or holds, shared
loads, barriers). The device gives its SM count, memory bandwidth, L2 size, clock, arithmetic
lanes per SM (machine/devices.py, with sources) and, through the occupancy calculator
(counters/occupancy.py, cudaOccupancyMaxActiveBlocksPerMultiprocessor in the C), the blocks
resident per SM. Then `FORMULA`, the same text evaluated here and printed in the generated C
(docs/time-model.md says where each constant comes from and how well it predicts the runs):

    waves       = ⌈blocks / (SMs · resident)⌉            blocks that run at once, in turns
    active      = min(blocks, SMs · resident)            blocks of one wave
    per_sm      = ⌈active / SMs⌉                          blocks of one wave on the busiest SM
    overlap     = 1 - synchronised / (resident + 1)      a block waiting at a barrier issues
                  nothing: the other resident blocks hide it (1024-thread staged blocks, 2 per SM,
                  ran transpose and stencil2d 1.2-2x slower than 256-thread ones on an H100)
    efficiency  = min(1, active · threads / (SMs · threads_per_SM / 2)) · overlap
                  half the SM's threads hide the memory latency; fewer use the bandwidth less
    requested   = waves · active · global_bytes           bytes the blocks ask of L2
    l2_holds    = min(active · window_bytes, read_bytes) ≤ L2 bytes
                  what the resident blocks read at once fits in L2 (or all the arrays read do)
    dram_bytes  = requested, or min(requested, unique_bytes) where L2 holds it: what blocks read
                  again (matmul's panels, a stencil's halo) comes from L2, not DRAM
    t_global    = dram_bytes / (bandwidth · efficiency)
    t_compute   = waves · per_sm · ⌈threads / 32⌉ · 32 · (ops32 / lanes32 + ops64 / lanes64) / clock
                  a warp issues its 32 lanes however few threads it has (4-thread blocks: 8x)
    t_l1        = waves · per_sm · l1_traffic / (bytes_per_clock · clock)
                  L1 and shared memory are one memory of bytes_per_clock per SM
    t_blocks    = ⌈blocks / SMs⌉ · block_time             an SM starts one block at a time
    t_l2        = waves · active · l2_lines / (l2_lines_per_clock · clock)
                  L2 serves a warp's request a 128-byte line at a time, whatever sectors of it are
                  asked: rows of 8 floats per block ask 4 lines per warp where rows of 32 ask 1
    t_atomic    = waves · active · atomics / (atomic_spread · clock)
                  atomic updates of one element are served one after another in its L2 slice,
                  about one a clock: a block's `atomics` updates (analysis/updates.py) spread over
                  at most `atomic_spread` elements, the updated arrays' (a 16-bin histogram of
                  2^24 values waits 2^20 clocks; a scatter-add over 10^6 elements, next to none:
                  its sectors are in global_bytes and l2_lines as the plain update's were)
    miss        = L2 latency, or DRAM latency for the share of the bytes DRAM moves
    path        = (misses · miss + hits · L1 latency + shared_waits · shared latency
                   + barriers · barrier latency + (ops32 + ops64) · op latency) / clock
                  one thread's chain of waits (latency.py), each a latency in cycles
    t_latency   = max(t_blocks, (waves - 1) · path) + path
                  a wave of blocks lasts at least one thread's path, the last block started
                  too: matmul without shared memory waits on L2 at every iteration of its z loop
    time        = launch_overhead + max(t_global, t_compute, t_l1, t_latency, t_l2, t_atomic)
    lanes       = threads / (⌈threads / 32⌉ · 32)         the lanes of its warps the block uses
    spread      = min(blocks, SMs) / SMs                   the SMs that get a block
    ranked      = time · (1 + 10⁻⁶ · (2 - lanes - spread))
                  what tune and dispatch_auto compare: where the terms tie (a launch bound by the
                  latency of one thread per row, as fast in any block shape), the shape with full
                  warps on every SM, not 1-thread blocks nor 4 blocks of 1024 on 4 SMs; millionths,
                  which no printed time shows

Everything is per launch; a schedule inside a host loop launches once per iteration.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import re
from dataclasses import dataclass

import sympy

from parakern.symbolic import exact
from parakern import syntax
from parakern.analysis.dependence import communicates
from parakern.analysis.updates import updates
from parakern.launch import in_parameters, launch_of
from parakern.counters.occupancy import occupancy_detail
from parakern.machine.devices import Device
from parakern.analysis.footprint import footprints
from parakern.analysis.prover import prover_for
from parakern.symbolic.extrema import maximum, minimum
from parakern.symbolic.printing import to_math
from parakern.tuning.counting import between_trips, executions, flat_index, threads_of, trip_counts, issued
from parakern.tuning.counting import counted_once, trip_count  # noqa: F401 - its callers read them here
from parakern.tuning.copies import INT_DIVISION_OPS, copy_loops
from parakern.tuning.latency import Path, path

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
# 128-byte lines L2 serves per SM clock (the whole GPU), whatever sectors of them a request asks:
# fitted on Nsight Compute's figures of matadd at N = 8192 on an H200 (docs/bench/h200): with
# 8-column blocks (4 lines of one sector each per warp request) L2 was 96 % busy and the
# kernel took 259 us, DRAM 64 % busy; with 16-column blocks (2 lines of 2 sectors) L2 70 %, 206
# us, DRAM 80 %. 24M line requests in 248 us of busy L2 at the 1.98 GHz boost clock: about 48
# per clock. The same value is used on every device (a lead where none was measured).
L2_LINES_PER_CLOCK = 48.0
# The waits of a thread's path (latency.py), in SM clock cycles, each the order that
# microbenchmarks of recent NVIDIA GPUs give (pointer chasing, one thread: Jia et al., "Dissecting
# the NVIDIA Volta GPU Architecture via Microbenchmarking", 2018; Luo et al., "Benchmarking and
# Dissecting the Nvidia Hopper GPU Architecture", 2024) and where a figure of the committed runs
# placed it in that order (docs/time-model.md: fitted on one GPU's runs, reported on the other's).
L1_LATENCY_CYCLES = 35.0        # a global load L1 holds
SHARED_LATENCY_CYCLES = 30.0    # a shared-memory load
L2_LATENCY_CYCLES = 270.0       # a global load L2 holds
DRAM_LATENCY_CYCLES = 500.0     # a global load from DRAM
BARRIER_CYCLES = 30.0           # a __syncthreads the block's warps all reached
OP_LATENCY_CYCLES = 4.0         # an arithmetic instruction that needs the one before's result

# The model's own constants, by their names in FORMULA (the C of dispatch_auto prints them).
CONSTANTS = {"launch_overhead": LAUNCH_OVERHEAD_S, "block_time": BLOCK_TIME_S,
             "l2_lines_per_clock": L2_LINES_PER_CLOCK, "l1_latency": L1_LATENCY_CYCLES,
             "shared_latency": SHARED_LATENCY_CYCLES, "l2_latency": L2_LATENCY_CYCLES,
             "dram_latency": DRAM_LATENCY_CYCLES, "barrier_latency": BARRIER_CYCLES,
             "op_latency": OP_LATENCY_CYCLES}


class ModelError(ValueError):
    """The device lacks a fact the model reads (bandwidth, clock)."""


def modelled(device: Device) -> Device:
    """The device, when it has every fact the model reads (ModelError where it lacks one)."""
    if not device.memory_bandwidth_gbps or not device.boost_clock_mhz:
        raise ModelError(f"{device.name} has no memory bandwidth or clock in machine/devices.py")
    return device


def device_values(device: Device) -> dict:
    """The device's names in FORMULA, as floats."""
    return {"sms": float(device.sm_count), "bandwidth": device.bandwidth, "clock": device.clock,
            "lanes32": float(device.fp32_lanes_per_sm),
            "lanes64": float(device.fp64_lanes_per_sm), "threads_per_sm": float(device.max_threads_per_sm),
            "shared_bytes_per_clock": float(device.shared_memory_bytes_per_clock),
            "l2_bytes": float(device.l2_cache_bytes or 0), **CONSTANTS}


# ------------------------------------------------------------------ the formula

# (name, expression): the same text is Python (min, max, ceil) and C (fmin, fmax, ceil) over
# doubles. Inputs: the case's quantities at the point (QUANTITY_NAMES) and the device's values.
FORMULA = (
    ("concurrent", "sms * resident"),
    ("waves", "ceil(blocks / concurrent)"),
    ("active", "min(blocks, concurrent)"),
    ("per_sm", "ceil(active / sms)"),
    ("overlap", "1.0 - synchronised / (resident + 1.0)"),
    ("efficiency", "min(1.0, active * threads / (sms * threads_per_sm / 2.0)) * overlap"),
    ("requested", "waves * active * global_bytes"),
    ("l2_holds", "min(active * window_bytes, read_bytes) <= l2_bytes"),
    ("dram_bytes", "requested - l2_holds * max(0.0, requested - unique_bytes)"),
    ("t_global", "dram_bytes / (bandwidth * efficiency)"),
    ("t_compute", "waves * per_sm * ceil(threads / 32.0) * 32.0 * (ops32 / lanes32 + ops64 / lanes64) / clock"),
    ("t_l1", "waves * per_sm * l1_traffic / (shared_bytes_per_clock * clock)"),
    ("t_blocks", "ceil(blocks / sms) * block_time"),
    ("t_l2", "waves * active * l2_lines / (l2_lines_per_clock * clock)"),
    ("t_atomic", "waves * active * atomics / (atomic_spread * clock)"),
    ("miss_latency", "l2_latency + (dram_latency - l2_latency) * dram_bytes / max(requested, 1.0)"),
    ("path", "(misses * miss_latency + hits * l1_latency + shared_waits * shared_latency"
             " + barriers * barrier_latency + (ops32 + ops64) * op_latency) / clock"),
    ("t_latency", "max(t_blocks, (waves - 1.0) * path) + path"),
    ("time", "launch_overhead + max(max(max(t_global, t_compute), max(t_l1, t_latency)), max(t_l2, t_atomic))"),
    ("lanes", "threads / (ceil(threads / 32.0) * 32.0)"),
    ("spread", "min(blocks, sms) / sms"),
    ("ranked", "time * (1.0 + 1e-6 * (2.0 - lanes - spread))"),
)
QUANTITY_NAMES = ("blocks", "threads", "resident", "global_bytes", "unique_bytes", "read_bytes", "window_bytes",
                  "synchronised", "ops32", "ops64", "l1_traffic", "l2_lines", "atomics", "atomic_spread", "misses",
                  "hits", "shared_waits", "barriers")
DEVICE_NAMES = ("sms", "bandwidth", "clock", "lanes32", "lanes64", "threads_per_sm", "shared_bytes_per_clock",
                "l2_bytes", *CONSTANTS)
TERMS = ("t_global", "t_compute", "t_l1", "t_latency", "t_l2", "t_atomic")
_COMPILED = tuple((name, compile(text, name, "eval")) for name, text in FORMULA)
_BUILTINS = {"__builtins__": {}, "min": min, "max": max, "ceil": math.ceil}


# what a schedule without atomic updates has (inputs may leave them out)
QUIET = {"atomics": 0.0, "atomic_spread": 1.0}
# what a schedule without a chain of waits has (inputs may leave them out)
UNWAITED = {"window_bytes": 0.0, "misses": 0.0, "hits": 0.0, "shared_waits": 0.0, "barriers": 0.0}


def evaluate(inputs: dict) -> dict:
    """Every step of FORMULA at these inputs (names -> numbers); the result has them all."""
    env = {**QUIET, **UNWAITED, **{k: float(v) for k, v in inputs.items()}}
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
    unique_bytes: sympy.Expr         # the launch's arrays, each read and each write once
    read_bytes: sympy.Expr           # the arrays the launch reads, each once
    synchronised: int                # 1 where the block waits at barriers (staging, threads that communicate), else 0
    l2_lines: sympy.Expr = sympy.S.Zero   # per block, 128-byte lines its warps' global requests touch
    atomics: sympy.Expr = sympy.S.Zero    # per block, atomic updates its threads make
    atomic_spread: sympy.Expr = sympy.S.One   # the elements those updates spread over, at most
    window_bytes: sympy.Expr = sympy.S.Zero   # per block, what it reads per iteration of its between loops
    path: "Path | None" = None                # one thread's waits (latency.py)

    def expressions(self) -> dict:
        return {"blocks": self.blocks, "threads": self.threads, "shared_bytes": self.shared_bytes,
                "global_bytes": self.global_bytes, "unique_bytes": self.unique_bytes, "read_bytes": self.read_bytes,
                "synchronised": sympy.Integer(self.synchronised), "ops32": self.ops32, "ops64": self.ops64,
                "l1_traffic": self.l1_traffic, "l2_lines": self.l2_lines, "atomics": self.atomics,
                "atomic_spread": self.atomic_spread, "window_bytes": self.window_bytes,
                **{name: getattr(self.path, field) if self.path else sympy.S.Zero for name, field in _WAITS}}


_WAITS = (("misses", "misses"), ("hits", "hits"), ("shared_waits", "shared"), ("barriers", "barriers"))


def quantities(case) -> Quantities:
    s = case.kernel.schedule
    launch = launch_of(case)
    copies = copy_loops(case)   # read by the arithmetic, the L1 bytes and the barriers
    ops32, ops64 = arithmetic(case, copies)
    blocks, (per_block, lines, window) = sympy.Mul(*launch.grid), global_traffic_per_block(case)
    whole = array_bytes(s)
    unique, read = whole if whole is not None else (blocks * per_block,) * 2
    atomics, spread = atomic_updates(case)
    return Quantities(blocks, launch.threads, launch.shared_bytes, int(case.counter("registers")), per_block,
                      in_parameters(ops32, s), in_parameters(ops64, s), l1_traffic(case, copies), unique, read,
                      int(bool(copies) or communicates(case.kernel)), lines, atomics, spread, window,
                      path(case, copies))


# where an updated array's size is not visible (a pointer): its updates may spread over any
# number of elements, and wait for none
UNBOUNDED_SPREAD = sympy.Integer(2) ** 40


def atomic_updates(case) -> tuple:
    """(atomic updates one block of the case makes: each atomic statement's executions by every
    thread, the fewest elements of the arrays they update), (0, 1) where it makes none."""
    s = case.kernel.schedule
    if not s.atomics:
        return sympy.S.Zero, sympy.S.One
    spans = {a.span for a in s.atomics}
    targets = {u.target.span for u in updates(s.body) if u.span in spans}
    per_thread = sum((executions(a, s) for a in s.accesses if a.is_write and a.span in targets), sympy.S.Zero)
    sizes = []
    for name in dict.fromkeys(a.array for a in s.atomics):
        array = s.array(name)
        known = array.dims and all(d is not None for d in array.dims)
        sizes.append(in_parameters(sympy.Mul(*array.dims), s) if known else UNBOUNDED_SPREAD)
    return in_parameters(per_thread * threads_of(case), s), minimum(*sizes)


def array_bytes(s) -> "tuple | None":
    """(bytes of the arrays the schedule touches, read ones counted once and written ones once
    more; bytes of the arrays it reads), or None where an array's size is not visible. DRAM
    moves no more than the first (L2 keeps what blocks read again) where the second fits in
    L2: the arrays read are what blocks share (matmul's a and b panels)."""
    unique = read = sympy.S.Zero
    for array in s.arrays:
        if not any(a.array == array.name for a in s.accesses):
            continue
        if not array.dims or any(d is None for d in array.dims):
            return None
        size = sympy.Mul(*array.dims) * array.element_size
        unique += size * (int(array.read) + int(array.written))
        read += size * int(array.read)
    return in_parameters(unique, s), in_parameters(read, s)


def global_traffic_per_block(case) -> tuple:
    """(bytes of global memory one block of the case reads and writes, the 128-byte lines its
    warps' requests touch: `_lines` beside each `_sector_bytes`, the bytes it reads per
    iteration of its between loops: what it needs in L2 at once, its window).

    THE one home of this figure in the model. For now from the footprint analysis
    (analysis/footprint.py): each element a block reads loaded once and each element it
    writes stored once, staged arrays included (their tile loads and stores); an array
    whose region moves with a serial loop between the grid and block levels (matmul's k)
    counts once per iteration. A block moves no more elements than its accesses request
    (`_requested`): the smaller of the two counts (`_at_most`), the requests alone where the
    footprint is unbounded. A subscript that is not affine (`a[(p + 1) % N]`, `in[i / 2][j / 2]`)
    makes its footprint the whole array, which every block would otherwise move (periodic at
    N = 2^24: 8.8 TB for 256 MB of arrays). Each element costs what its warp requests cost in
    32-byte sectors (`_sector_bytes`): by the stride between consecutive lanes along
    threadIdx.x and the lanes a warp has along x; a staged array's tile, which the copy loops move element after
    element, by the sectors its rows fill (`_tile_sector_bytes`). It stays a formula in the
    parameters (dispatch_auto prints it in C); analysis/traffic.py measures the same requests
    exactly at one point (`parakern profile`)."""
    s = case.kernel.schedule
    between = {lp.var for lp in s.between}
    moving = between_trips(s)
    prover = functools.cache(lambda: prover_for(s))   # made where a question needs it (z3: slow to start)
    total = lines = window = sympy.S.Zero
    for kind in ("is_read", "is_write"):
        accesses = tuple(a for a in issued(s.accesses, s) if getattr(a, kind))
        names = tuple(dict.fromkeys(a.array for a in accesses))
        if not names:
            continue
        part = dataclasses.replace(s, accesses=accesses)
        for fp in footprints(part, names):
            array = s.array(fp.array)
            mine = [a for a in accesses if a.array == fp.array]
            moves = any(set(map(str, sympy.Tuple(*a.indices).free_symbols)) & between for a in mine)
            times = moving if moves else 1
            if fp.array in case.kernel.cached and fp.bounded:   # copy loops: consecutive threads, consecutive elements
                once = in_parameters(_tile_sector_bytes(fp, array.element_size), s)
                total += once * in_parameters(times, s)
                lines += in_parameters(_tile_sector_bytes(fp, array.element_size, 128) / 128 * times, s)
            else:
                elements = in_parameters(_requested(mine, case), s)
                if not fp.elements.has(sympy.oo):
                    elements = _at_most(in_parameters(fp.elements * times, s), elements, prover)
                stride = _worst_stride(mine, array, s)
                moved = _sector_bytes(elements, array.element_size, stride, _lanes(case))
                total += moved
                lines += _lines(elements, array.element_size, stride, _lanes(case))
                # per iteration of the between loops: the same count without their trips
                each = in_parameters(_requested(mine, case, per_iteration=True), s)
                if not fp.elements.has(sympy.oo):
                    each = _at_most(in_parameters(fp.elements, s), each, prover)
                once = _sector_bytes(each, array.element_size, stride, _lanes(case))
            if kind == "is_read":
                window += once
    return sympy.expand(total), sympy.expand(lines), sympy.expand(window)


def _requested(accesses, case, per_iteration: bool = False) -> sympy.Expr:
    """Elements one block's accesses request: each access's executions by every thread (per
    iteration of the between loops: without their trips)."""
    s = case.kernel.schedule
    if per_iteration:
        trips, between = trip_counts(s), {lp.var for lp in s.between}
        counts = (sympy.Mul(*(trips.get(v, sympy.S.One) for v in a.loops if v not in between)) for a in accesses)
    else:
        counts = (executions(a, s) for a in accesses)
    return sum(counts, sympy.S.Zero) * threads_of(case)


def _at_most(footprint: sympy.Expr, requested: sympy.Expr, prover) -> sympy.Expr:
    """The smaller of a block's footprint and its requests (elements); the one the schedule's
    facts prove smaller alone, as for most affine tiles, so that the formula dispatch_auto
    prints stays short. prover: () -> analysis.prover.Prover of the schedule."""
    if footprint == requested or prover().le(footprint, requested):
        return footprint
    if prover().le(requested, footprint):
        return requested
    return minimum(footprint, requested)


def _tile_sector_bytes(fp, size: int, sector: int = 32) -> sympy.Expr:
    """Bytes of the 32-byte sectors that hold a block's footprint (a staged tile, copied
    element after element): each contiguous run along the array's last dimension rounded up to
    whole sectors (transpose's c tile has rows of B0 floats: at B0 = 4, half of each sector).
    A run is taken to start on a sector's boundary (a halo's shifted runs touch one more)."""
    out = []
    for choice in fp.regions:
        total = sympy.S.Zero
        for cluster in choice.clusters:
            if not cluster.dims:
                total += cluster.elements * size
                continue
            last = cluster.dims[-1]
            total += cluster.elements / last.extent * sympy.ceiling(last.extent * size / sympy.Integer(sector)) * sector
        out.append(total)
    return maximum(*out) if len(out) > 1 else (out[0] if out else sympy.S.Zero)


def _lanes(case) -> sympy.Expr:
    """Threads of a warp along threadIdx.x: consecutive lanes, consecutive x."""
    return minimum(launch_of(case).block[0], 32)


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


def _lane_stride(a, array, s):
    """Elements between what consecutive lanes (threadIdx.x) touch at access `a`: 0, a number,
    or None (not a constant). A quotient or a remainder of an index moves, on average, as the
    index does: `in[j / 2]` by 1/2 (two lanes share an element), `a[(p + 1) % N]` by 1 (it
    wraps once per N lanes; a small divisor, `a[p % 4]`, is overcounted)."""
    x = next((lp for lp in s.block if lp.axis == "x"), None)
    if x is None:
        return 0
    var = sympy.Symbol(x.var, integer=True)
    flat = flat_index(a, array, s)
    if not flat.has(var):
        return 0
    flat = sympy.expand(flat.replace(lambda e: isinstance(e, (sympy.floor, sympy.ceiling)), lambda e: e.args[0])
                        .replace(lambda e: isinstance(e, sympy.Mod), lambda e: e.args[0]))
    stride = flat.coeff(var) if flat.is_polynomial(var) and sympy.degree(flat, var) == 1 else None
    if stride is None or not stride.is_number or stride.free_symbols:
        return None
    stride = abs(stride)
    return int(stride) if stride.is_Integer else stride


def _walks_along_serial_loop(a, array, s) -> bool:
    """The access moves by one element per iteration of its innermost serial loop."""
    if not a.loops:
        return False
    flat = flat_index(a, array, s)
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
    return requests * 32 * minimum(lanes, sympy.ceiling(lanes * stride * size / sympy.Integer(32)))


def _lines(elements, size: int, stride, lanes) -> sympy.Expr:
    """The 128-byte lines that warps' requests for `elements` elements touch, `lanes` lanes at a
    time, `stride` elements apart (as `_sector_bytes`): a run of consecutive lanes touches the
    lines it spans, a row per lane one line per element, a broadcast (or a walk that L1 serves)
    the lines of its bytes."""
    if stride == 0:
        return elements * size / sympy.Integer(128)
    if stride is None:
        return elements
    return sympy.ceiling(elements / lanes) * minimum(lanes, sympy.ceiling(lanes * stride * size / sympy.Integer(128)))


def l1_traffic(case, copies: tuple) -> sympy.Expr:
    """Bytes one block's threads read and write through the SM's L1 and shared memory (one
    memory on sm_70 and later): every access every thread executes, of a staged array (shared
    memory) or not (a global load or store passes L1 even where DRAM is not touched again:
    matmul without cache() reads a and b there at every multiply-add), and the staging copies
    (`copies`, copies.py: the tile read from global and written to shared memory when
    loaded, the reverse when stored back). Accesses kept in a register (accumulators) are no longer accesses of the
    kernel's schedule."""
    s = case.kernel.schedule
    staged = set(case.kernel.cached)
    threads, lanes = threads_of(case), _lanes(case)
    total = sympy.S.Zero
    for a in issued(s.accesses, s):
        array = s.array(a.array)
        if a.array in staged:
            total += executions(a, s) * threads * array.element_size
        else:   # L1 serves a warp's request a 32-byte sector at a time; a broadcast is one
            stride = _lane_stride(a, array, s)
            per_run = (sympy.ceiling(threads / lanes) * 32 if stride == 0
                       else _sector_bytes(threads, array.element_size, stride, lanes))
            total += executions(a, s) * per_run
    for c in copies:   # each copied element: global side and shared side
        total += c.copied * s.array(c.array).element_size * 2
    return sympy.expand(in_parameters(total, s))


_ARITHMETIC_ASSIGN = {"+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="}


# A loop that is not unrolled spends an increment, a test and a branch per iteration: 3 integer
# instructions, 6 at the fp32 rate. The H100's tune run of matmul (docs/bench/h100/
# tune_matmul_n1024.json) measured the register-capped cases, whose loops are not unrolled,
# 1.7x slower than case 1 at the same launch, which the model without this term predicted
# faster (more blocks resident): its pick reached 59 % of the best measured, 100 % with it.
NOT_UNROLLED_ITERATION_OPS = 6


def arithmetic(case, copies: tuple) -> tuple:
    """(32-bit, 64-bit) arithmetic operations of one thread: every operator, math call and
    compound assignment of its body (comparisons, logic and subscripts aside: addressing),
    times the trip counts of its serial loops and of the loops between grid and block
    levels; of an `if` with an `else` the larger branch where both are numbers; where the
    kernel's loops are not unrolled, each iteration's increment, test and branch; plus the
    thread's share of the staging copies (`_staging_ops`, copies.py)."""
    s = case.kernel.schedule
    trips = trip_counts(s)
    # IR level >= 1 (register pressure reduced, strategies/register_pressure.py) prints its
    # loops `#pragma unroll 1`: every iteration pays the loop's own instructions
    overhead = NOT_UNROLLED_ITERATION_OPS if case.kernel.ir_level >= 1 else 0
    ops32, ops64 = _ops(s.body, trips, overhead)
    between = between_trips(s)
    return sympy.expand(ops32 * between + _staging_ops(case, copies)), sympy.expand(ops64 * between)


def _staging_ops(case, copies: tuple) -> sympy.Expr:
    ops = sum((c.copied * c.per_element for c in copies), sympy.S.Zero)
    loops = sum((c.executions * c.per_loop for c in copies), sympy.S.Zero)
    # whole operations per thread (an integer in Python and in the C of dispatch_auto)
    return sympy.ceiling(ops / threads_of(case) + loops)


def _division(op: str, ctype: str, divisor) -> int:
    """The operations of one operator: an integer division or remainder by a run-time value is
    a sequence of instructions (INT_DIVISION_OPS: polydiv's `% P`, 3 per thread, made its
    unstaged case 10 times the 13 operations counted before); by a constant the compiler
    multiplies and shifts instead: one, as every other operator."""
    if op in ("/", "%") and syntax.is_integer(ctype) and not isinstance(divisor, syntax.Const):
        return INT_DIVISION_OPS
    return 1


def _ops(node, trips, overhead=0) -> tuple:
    """(32-bit, 64-bit) operations of `node` run once; `overhead` per iteration of each loop."""
    zero = (sympy.S.Zero, sympy.S.Zero)
    if isinstance(node, syntax.Index) or node is None:
        return zero
    if isinstance(node, syntax.Loop):
        a, b = _ops(node.body, trips, overhead)
        n = trips.get(node.var, sympy.S.One)
        return (a + overhead) * n, b * n
    if isinstance(node, syntax.If):
        c = _ops(node.cond, trips, overhead)
        t = _ops(node.then, trips, overhead)
        e = _ops(node.other, trips, overhead) if node.other is not None else zero
        both = tuple(max(x, y) if (x.is_Number and y.is_Number) else x + y for x, y in zip(t, e))
        return c[0] + both[0], c[1] + both[1]
    own = 0
    ctype = getattr(node, "ctype", "")
    if isinstance(node, syntax.Binary) and node.op not in syntax.COMPARISONS | syntax.LOGICAL:
        own = _division(node.op, ctype, node.right)
    elif isinstance(node, syntax.Unary) and node.op in ("-", "~"):
        own = 1
    elif isinstance(node, syntax.Call):
        own = 1
    elif isinstance(node, syntax.Assign) and node.op in _ARITHMETIC_ASSIGN:
        own, ctype = _division(node.op.rstrip("="), node.target.ctype, node.value), node.target.ctype
    a, b = (sympy.S.Zero, sympy.S.Zero)
    if own:
        a, b = (sympy.S.Zero, sympy.Integer(own)) if ctype == "double" else (sympy.Integer(own), sympy.S.Zero)
    for child in syntax.children(node):
        if isinstance(node, syntax.Assign) and child is node.target:
            continue   # the store's own subscripts are addressing
        x, y = _ops(child, trips, overhead)
        a, b = a + x, b + y
    return a, b


# ------------------------------------------------------------------ one prediction

@dataclass(frozen=True)
class Prediction:
    time: float                      # seconds, one launch
    steps: tuple                     # ((name, value), ...): the inputs and every step of FORMULA
    resident: int                    # blocks per SM (occupancy calculator)
    occupancy: float                 # active warps / max warps per SM
    limiting: str                    # the term of the max: "global", "compute", "l1", "latency", "l2" or "atomic"
    bytes_moved: int                 # DRAM bytes of the whole launch (dram_bytes without the last wave's rounding)

    def step(self, name: str) -> float:
        return dict(self.steps)[name]

    @property
    def ranked(self) -> float:
        """What the configurations are compared by (FORMULA's `ranked`)."""
        return self.step("ranked")


def at(q: Quantities, subs: dict) -> "dict | None":
    """The case's quantities at a point (symbol -> Integer), rounded up; None where one is
    not a number."""
    found = _at(q, frozenset(subs.items()))
    return None if found is None else dict(found)


@functools.lru_cache(maxsize=4096)
def _at(q: Quantities, items: frozenset) -> "dict | None":
    # the same point on every GPU profile: `tune` and the report of what runs ask each once per profile
    subs = dict(items)
    out = {}
    given = exact.numbers(subs)
    for name, expr in q.expressions().items():
        value = exact.ceiling(expr, subs, given)
        if value is None:
            return None
        out[name] = value
    return out


def predict(q: Quantities, subs: dict, device: Device, registers: "int | None" = None,
            constants: "dict | None" = None) -> "Prediction | None":
    """The predicted time of the case at `subs` on `device`; None where the block cannot be
    resident (the occupancy calculator gives 0 blocks) or a quantity is not a number.
    registers: nvcc's count per thread instead of the tree's; constants: other values of some
    of CONSTANTS (bench/model_vs_measured.py fits them on one GPU's runs)."""
    values = at(q, subs)
    if values is None or values["threads"] < 1 or values["blocks"] < 1:
        return None
    regs = q.registers if registers is None else registers
    try:
        detail = occupancy_detail(regs, values["shared_bytes"], values["threads"], device)
    except ValueError:
        return None
    if detail.active_blocks < 1:
        return None
    inputs = {**{n: values[n] for n in QUANTITY_NAMES if n != "resident"}, "resident": detail.active_blocks,
              **device_values(device), **(constants or {})}
    env = evaluate(inputs)
    steps = tuple((n, env[n]) for n in (*QUANTITY_NAMES, *(name for name, _ in FORMULA)))
    terms = {t: env[t] for t in TERMS}
    limiting = max(TERMS, key=lambda t: terms[t]).removeprefix("t_")
    return Prediction(env["time"], steps, detail.active_blocks, float(detail.occupancy), limiting,
                      round(min(values["blocks"] * values["global_bytes"], env["dram_bytes"])))


# ------------------------------------------------------------------ the formula for people

def _math(expr) -> str:
    expr = sympy.sympify(expr)
    return str(int(expr)) if expr.is_Integer else to_math(expr)


def formula_text(q: Quantities, k: int) -> list[str]:
    """The case's model as lines of text: its quantities, then FORMULA."""
    e = {n: _math(x) for n, x in q.expressions().items()}
    lines = [f"case {k}: blocks = {e['blocks']}, threads = {e['threads']}, "
             f"shared = {e['shared_bytes']} B, registers {q.registers}",
             f"  global bytes per block = {e['global_bytes']} ({e['window_bytes']} read per iteration)",
             f"  arrays: {e['unique_bytes']} B touched, {e['read_bytes']} B read"
             + ("; blocks wait at barriers" if q.synchronised else ""),
             f"  arithmetic per thread = {e['ops32']} (32-bit) + {e['ops64']} (64-bit)",
             f"  L1 and shared-memory bytes per block = {e['l1_traffic']}",
             f"  waits per thread: {e['misses']} global loads L1 misses, {e['hits']} it holds, "
             f"{e['shared_waits']} shared loads, {e['barriers']} barriers",
             "  resident = blocks per SM by the occupancy calculator (registers, shared, threads)"]
    if q.atomics != 0:
        lines.insert(-1, f"  atomic updates per block = {e['atomics']}, over at most {e['atomic_spread']} elements")
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
