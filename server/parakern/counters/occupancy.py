"""Occupancy (active warps per SM / max warps per SM), as NVIDIA computes it.

Mirrors cudaOccMaxActiveBlocksPerMultiprocessor from the toolkit's
include/cuda_occupancy.h for compute capability >= 7.0, with the kernel
opted in to the per-block shared-memory maximum (the dispatcher sets
cudaFuncAttributeMaxDynamicSharedMemorySize) and, unless told otherwise, the
maximum shared-memory carveout (carveout_percent=100, the whole configurable
shared memory of the SM is shared memory).

Blocks per SM is the minimum of four limits:
  warps       max warps per SM // warps per block (0 if threads > 1024)
  registers   registers go to warps in units of 256, per SM sub-partition
              (4 sub-partitions, each with a quarter of the register file)
  shared mem  (bytes + per-block reserved) rounded up to the allocation unit,
              against the carveout in effect
  blocks      the hardware cap on resident blocks per SM
The header's barrier limit (cc >= 9.0: 2 barriers per block slot, one used by
__syncthreads) never binds for these devices and is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy

from parakern.machine.devices import Device

LIMIT_NAMES = ("warps", "registers", "shared_memory", "blocks")


@dataclass(frozen=True)
class OccupancyDetail:
    """Blocks per SM allowed by each resource; None means that resource sets no limit."""

    warps_per_block: int
    registers_per_block: int  # allocated: per-warp allocation x warps
    shared_memory_per_block: int  # allocated: incl. reserved, rounded to the unit
    shared_memory_per_sm: int  # carveout the SM runs with for this launch
    blocks_by_warps: int
    blocks_by_registers: int | None
    blocks_by_shared_memory: int | None
    blocks_by_block_count: int
    active_blocks: int
    active_warps: int
    max_warps_per_sm: int
    occupancy: Fraction
    limiting: tuple[str, ...]  # every limit equal to active_blocks, in LIMIT_NAMES order


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return b * _ceil_div(a, b)


def _align_carveout(size: int, device: Device) -> int:
    """Smallest shared-memory capacity the SM can be configured to that holds `size`."""
    for capacity in device.shared_memory_carveouts:
        if size <= capacity:
            return capacity
    raise ValueError(f"{size} bytes exceeds every carveout of {device.name}")


def _check_args(registers, shared_bytes, threads, carveout_percent) -> None:
    if registers < 0 or shared_bytes < 0 or threads <= 0:
        raise ValueError(f"need registers >= 0, shared_bytes >= 0, threads > 0; got "
                         f"{registers}, {shared_bytes}, {threads}")
    if not 0 <= carveout_percent <= 100:
        raise ValueError(f"carveout_percent must be in [0, 100], got {carveout_percent}")


def _preferred_carveout(device: Device, carveout_percent: int) -> int:
    return _align_carveout(carveout_percent * device.shared_memory_per_sm // 100, device)


def occupancy_detail(registers: int, shared_bytes: int, threads: int,
                     device: Device, carveout_percent: int = 100) -> OccupancyDetail:
    """Per-resource block limits for one launch configuration.

    registers: per thread; shared_bytes: static + dynamic shared memory per
    block (without the driver's reserved part); threads: per block.
    """
    _check_args(registers, shared_bytes, threads, carveout_percent)
    d = device
    max_warps = d.max_threads_per_sm // d.warp_size
    warps = _ceil_div(threads, d.warp_size)

    by_warps = 0 if threads > d.max_threads_per_block else max_warps // warps

    # Registers: allocated per warp in units; the hardware check assumes the
    # block's warps are spread over all sub-partitions, hence the round-up.
    gran = d.warp_allocation_granularity
    regs_per_warp = _round_up(registers * d.warp_size, d.register_allocation_unit)
    regs_per_block = regs_per_warp * warps
    by_regs: int | None
    if (registers > d.max_registers_per_thread
            or regs_per_warp * _round_up(warps, gran) > d.max_registers_per_block
            or regs_per_block > d.max_registers_per_block):
        by_regs = 0
    elif regs_per_warp == 0:
        by_regs = None
    else:
        warps_per_subpartition = (d.registers_per_sm // gran) // regs_per_warp
        by_regs = warps_per_subpartition * gran // warps

    # Shared memory: the driver reserves some per block (1 KiB on cc >= 8.0).
    smem_per_block = _round_up(shared_bytes + d.reserved_shared_memory_per_block,
                               d.shared_memory_allocation_unit)
    smem_block_limit = d.max_shared_memory_per_block + d.reserved_shared_memory_per_block
    by_smem: int | None
    if shared_bytes > d.max_shared_memory_per_block or smem_per_block > smem_block_limit:
        by_smem, smem_per_sm = 0, _preferred_carveout(d, carveout_percent)
    else:
        # A carveout smaller than one block is overridden by the driver.
        smem_per_sm = max(_preferred_carveout(d, carveout_percent),
                          _align_carveout(smem_per_block, d))
        by_smem = smem_per_sm // smem_per_block if smem_per_block else None

    limits = (by_warps, by_regs, by_smem, d.max_blocks_per_sm)
    active = min(x for x in limits if x is not None)
    limiting = tuple(n for n, x in zip(LIMIT_NAMES, limits) if x == active)
    return OccupancyDetail(
        warps_per_block=warps,
        registers_per_block=regs_per_block,
        shared_memory_per_block=smem_per_block,
        shared_memory_per_sm=smem_per_sm,
        blocks_by_warps=by_warps,
        blocks_by_registers=by_regs,
        blocks_by_shared_memory=by_smem,
        blocks_by_block_count=d.max_blocks_per_sm,
        active_blocks=active,
        active_warps=active * warps,
        max_warps_per_sm=max_warps,
        occupancy=Fraction(active * warps, max_warps),
        limiting=limiting,
    )


def occupancy(registers: int, shared_bytes: int, threads: int,
              device: Device, carveout_percent: int = 100) -> Fraction:
    """Active warps per SM / max warps per SM, in [0, 1]."""
    return occupancy_detail(registers, shared_bytes, threads, device,
                            carveout_percent).occupancy


# The symbolic form uses only floor/ceiling/Min/Max, no Piecewise: conditions
# become 0/1 factors, valid because every quantity is an integer. This keeps
# substitution cheap and the expression easy to hand to other solvers.

def _min(*args) -> sympy.Expr:
    # Evaluating Min/Max over symbolic arguments makes sympy compare them
    # pairwise (seconds per expression) and rarely simplifies anything here;
    # substituting numbers later evaluates them anyway.
    args = [sympy.sympify(a) for a in args]
    return sympy.Min(*args, evaluate=not any(a.free_symbols for a in args))


def _max(*args) -> sympy.Expr:
    args = [sympy.sympify(a) for a in args]
    return sympy.Max(*args, evaluate=not any(a.free_symbols for a in args))


def _at_most(x: sympy.Expr, bound: int) -> sympy.Expr:
    """1 if integer x <= bound else 0."""
    return _max(0, _min(1, bound + 1 - x))


def _align_carveout_expr(size: sympy.Expr, device: Device) -> sympy.Expr:
    """_align_carveout for size <= the largest carveout: a staircase of 0/1 steps."""
    caps = device.shared_memory_carveouts
    steps = [(hi - lo) * (1 - _at_most(size, lo)) for lo, hi in zip(caps, caps[1:])]
    return sympy.Integer(caps[0]) + sympy.Add(*steps)


def occupancy_expr(registers, shared_bytes, threads, device: Device,
                   carveout_percent: int = 100) -> sympy.Expr:
    """occupancy() as a sympy expression: resident_blocks_expr x warps per block / max warps."""
    T = sympy.sympify(threads)
    blocks = resident_blocks_expr(registers, shared_bytes, threads, device, carveout_percent)
    return blocks * sympy.ceiling(T / device.warp_size) / (device.max_threads_per_sm // device.warp_size)


def resident_blocks_expr(registers, shared_bytes, threads, device: Device,
                         carveout_percent: int = 100) -> sympy.Expr:
    """Blocks resident per SM (occupancy_detail's active_blocks) as a sympy expression in
    whatever symbols the arguments hold.

    Arguments may be ints or sympy expressions (e.g. B0*B1, 8*s*B + 8); the
    symbols are assumed to take integer values with registers >= 0,
    shared_bytes >= 0 and threads > 0. Substituting numbers gives exactly
    occupancy_detail(...).active_blocks for the same numbers. Min/Max over symbols are left
    unevaluated; substitute every symbol at once, e.g.
    ``expr.xreplace({B0: Integer(16), ...})`` (milliseconds), rather than with
    subs(), which re-evaluates each partial result (about a second).
    """
    if not 0 <= carveout_percent <= 100:
        raise ValueError(f"carveout_percent must be in [0, 100], got {carveout_percent}")
    R, S, T = (sympy.sympify(x) for x in (registers, shared_bytes, threads))
    d = device
    ws = d.warp_size
    max_warps = d.max_threads_per_sm // ws
    gran = d.warp_allocation_granularity
    warps = sympy.ceiling(T / ws)

    by_warps = (_at_most(T, d.max_threads_per_block)
                * sympy.floor(sympy.Integer(max_warps) / warps))

    unit = d.register_allocation_unit
    regs_per_warp = unit * sympy.ceiling(R * ws / unit)
    # The hardware check (warps rounded up to sub-partitions) implies the
    # software one (regs_per_warp * warps <= max), so only it is needed.
    regs_fit = (_at_most(R, d.max_registers_per_thread)
                * _at_most(regs_per_warp * gran * sympy.ceiling(warps / gran),
                           d.max_registers_per_block))
    # Max(., 1): 0 registers then bound >= 2048 blocks, i.e. no limit.
    warps_per_subpartition = sympy.floor(
        sympy.Integer(d.registers_per_sm // gran) / _max(regs_per_warp, 1))
    by_regs = regs_fit * sympy.floor(gran * warps_per_subpartition / warps)

    smem_unit = d.shared_memory_allocation_unit
    reserved = d.reserved_shared_memory_per_block
    optin = d.max_shared_memory_per_block
    smem_per_block = smem_unit * sympy.ceiling((S + reserved) / smem_unit)
    smem_fits = _at_most(S, optin) * _at_most(smem_per_block, optin + reserved)
    preferred = _preferred_carveout(d, carveout_percent)
    if preferred >= optin + reserved:
        smem_per_sm = sympy.Integer(preferred)  # every block that fits fits in it
    else:
        smem_per_sm = _max(preferred, _align_carveout_expr(smem_per_block, d))
    # Zero bytes per block (cc 7.x, no reserve) means no limit: Max(., 1) in the
    # denominator and Max(., block cap) in the numerator give >= the block cap
    # then, and change nothing otherwise (a non-empty block needs >= 128 bytes).
    by_smem = smem_fits * sympy.floor(
        _max(smem_per_sm, d.max_blocks_per_sm) / _max(smem_per_block, 1))

    return _min(by_warps, by_regs, by_smem, d.max_blocks_per_sm)
