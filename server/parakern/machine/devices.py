"""A GPU, as every part of parakern reads it: one type, `Device`.

Its limits decide which case's kernel fits (R_B, Z, T, as the dispatcher reads them from
cudaGetDeviceProperties), its capability's allocation rules give occupancy, and its SMs,
clock, bandwidth and L2 feed the time model. A Device is built in one of three ways, all
here: a profile of a real part (`PROFILES`, `get_profile`), the properties a device reports
at run time (`from_properties`: the bench on a GPU), or a profile with other limits (`emulated`:
verify's emulated devices).

Per-compute-capability limits live in one table, ``CC_LIMITS``; a GPU entry
only adds what differs between parts of the same capability (SM count,
bandwidth, clock) and copies the rest from that table.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

KIB = 1024
MIB = 1024 * KIB

# Where the per-capability numbers come from.
_CC_SOURCE = (
    "CUDA C++ Programming Guide, 'Compute Capabilities' appendix, table "
    "'Technical Specifications per Compute Capability' and the per-architecture "
    "shared-memory sections (carveout sizes, 1 KiB reserved per block on cc >= 8.0); "
    "allocation units/granularities from CUDA toolkit include/cuda_occupancy.h "
    "(cudaOccSMemAllocationGranularity, cudaOccRegAllocationGranularity, "
    "cudaOccSubPartitionsPerMultiprocessor); arithmetic throughput (fp32_lanes_per_sm, "
    "fp64_lanes_per_sm: results per clock cycle per multiprocessor of 32-bit and 64-bit "
    "floating-point add, multiply, multiply-add) from the Programming Guide's 'Arithmetic "
    "Instructions' throughput table; shared memory: 32 banks of 4 bytes per clock "
    "('Shared Memory' sections of the per-capability appendix)"
)


@dataclass(frozen=True)
class ComputeCapabilityLimits:
    """Limits shared by every GPU of one compute capability."""

    max_warps_per_sm: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    # Largest shared-memory carveout per SM (what the SM gets at carveout 100%).
    shared_memory_per_sm: int
    # Opt-in per-block maximum (cudaFuncAttributeMaxDynamicSharedMemorySize).
    max_shared_memory_per_block_optin: int
    shared_memory_allocation_unit: int
    # Reserved by the driver per block (cudaDevAttrReservedSharedMemoryPerBlock).
    reserved_shared_memory_per_block: int
    # Shared-memory capacities an SM can be configured to, in bytes, ascending.
    shared_memory_carveouts: tuple[int, ...]
    # Arithmetic results per clock per SM (fp32 / fp64 add, mul, fma).
    fp32_lanes_per_sm: int
    fp64_lanes_per_sm: int
    # Identical on every capability since 7.0, kept here so nothing is per-GPU.
    warp_size: int = 32
    max_threads_per_block: int = 1024
    max_registers_per_thread: int = 255
    registers_per_sm: int = 64 * KIB
    max_registers_per_block: int = 64 * KIB
    max_shared_memory_per_block_default: int = 48 * KIB
    register_allocation_unit: int = 256  # registers, per warp
    register_allocation_granularity: str = "warp"
    # Warps are allocated registers per SM sub-partition (4 on cc >= 7.0).
    warp_allocation_granularity: int = 4
    shared_memory_bytes_per_clock: int = 128   # per SM: 32 banks x 4 bytes


def _kib(*sizes: int) -> tuple[int, ...]:
    return tuple(s * KIB for s in sizes)


CC_LIMITS: dict[tuple[int, int], ComputeCapabilityLimits] = {
    (7, 0): ComputeCapabilityLimits(
        max_warps_per_sm=64, max_threads_per_sm=2048, max_blocks_per_sm=32,
        shared_memory_per_sm=96 * KIB, max_shared_memory_per_block_optin=96 * KIB,
        shared_memory_allocation_unit=256, reserved_shared_memory_per_block=0,
        shared_memory_carveouts=_kib(0, 8, 16, 32, 64, 96),
        fp32_lanes_per_sm=64, fp64_lanes_per_sm=32),
    (7, 5): ComputeCapabilityLimits(
        max_warps_per_sm=32, max_threads_per_sm=1024, max_blocks_per_sm=16,
        shared_memory_per_sm=64 * KIB, max_shared_memory_per_block_optin=64 * KIB,
        shared_memory_allocation_unit=256, reserved_shared_memory_per_block=0,
        shared_memory_carveouts=_kib(32, 64),
        fp32_lanes_per_sm=64, fp64_lanes_per_sm=2),
    (8, 0): ComputeCapabilityLimits(
        max_warps_per_sm=64, max_threads_per_sm=2048, max_blocks_per_sm=32,
        shared_memory_per_sm=164 * KIB, max_shared_memory_per_block_optin=163 * KIB,
        shared_memory_allocation_unit=128, reserved_shared_memory_per_block=1 * KIB,
        shared_memory_carveouts=_kib(0, 8, 16, 32, 64, 100, 132, 164),
        fp32_lanes_per_sm=64, fp64_lanes_per_sm=32),
    (8, 6): ComputeCapabilityLimits(
        max_warps_per_sm=48, max_threads_per_sm=1536, max_blocks_per_sm=16,
        shared_memory_per_sm=100 * KIB, max_shared_memory_per_block_optin=99 * KIB,
        shared_memory_allocation_unit=128, reserved_shared_memory_per_block=1 * KIB,
        shared_memory_carveouts=_kib(0, 8, 16, 32, 64, 100),
        fp32_lanes_per_sm=128, fp64_lanes_per_sm=2),
    (8, 9): ComputeCapabilityLimits(
        max_warps_per_sm=48, max_threads_per_sm=1536, max_blocks_per_sm=24,
        shared_memory_per_sm=100 * KIB, max_shared_memory_per_block_optin=99 * KIB,
        shared_memory_allocation_unit=128, reserved_shared_memory_per_block=1 * KIB,
        shared_memory_carveouts=_kib(0, 8, 16, 32, 64, 100),
        fp32_lanes_per_sm=128, fp64_lanes_per_sm=2),
    (9, 0): ComputeCapabilityLimits(
        max_warps_per_sm=64, max_threads_per_sm=2048, max_blocks_per_sm=32,
        shared_memory_per_sm=228 * KIB, max_shared_memory_per_block_optin=227 * KIB,
        shared_memory_allocation_unit=128, reserved_shared_memory_per_block=1 * KIB,
        shared_memory_carveouts=_kib(0, 8, 16, 32, 64, 100, 132, 164, 196, 228),
        fp32_lanes_per_sm=128, fp64_lanes_per_sm=64),
}


@dataclass(frozen=True)
class Device:
    """One GPU: its capability limits (from CC_LIMITS) plus part-specific facts."""

    name: str
    compute_capability: tuple[int, int]
    sm_count: int
    warp_size: int
    max_registers_per_thread: int  # R
    max_shared_memory_per_block: int  # Z: opt-in maximum, bytes
    max_shared_memory_per_block_default: int  # static / no opt-in limit, bytes
    max_threads_per_block: int  # T
    registers_per_sm: int
    max_registers_per_block: int
    shared_memory_per_sm: int
    shared_memory_carveouts: tuple[int, ...]
    max_threads_per_sm: int
    max_blocks_per_sm: int
    max_warps_per_sm: int
    register_allocation_unit: int
    register_allocation_granularity: str
    warp_allocation_granularity: int
    shared_memory_allocation_unit: int
    reserved_shared_memory_per_block: int
    fp32_lanes_per_sm: int
    fp64_lanes_per_sm: int
    shared_memory_bytes_per_clock: int
    memory_bandwidth_gbps: float | None
    boost_clock_mhz: int | None
    source: str
    l2_cache_bytes: int | None = None
    key: str = ""          # its profile's key ("h100"); "" for a device read at run time

    @property
    def sm_version(self) -> str:
        major, minor = self.compute_capability
        return f"sm_{major}{minor}"

    # The machine parameters of the case tree, as the dispatcher reads them.
    @property
    def R_B(self) -> int:
        """regsPerBlock."""
        return self.max_registers_per_block

    @property
    def Z(self) -> int:
        """sharedMemPerBlockOptin, bytes (the dispatcher raises a kernel's limit up to it)."""
        return self.max_shared_memory_per_block

    @property
    def T(self) -> int:
        """maxThreadsPerBlock."""
        return self.max_threads_per_block

    @property
    def bandwidth(self) -> "float | None":
        """DRAM bandwidth, bytes per second."""
        return self.memory_bandwidth_gbps * 1e9 if self.memory_bandwidth_gbps else None

    @property
    def clock(self) -> "float | None":
        """The SMs' boost clock, Hz."""
        return self.boost_clock_mhz * 1e6 if self.boost_clock_mhz else None

    def properties(self) -> dict[str, int]:
        """What cudaGetDeviceProperties reports of its limits, by the fields' names (the CPU
        emulation's device, verify's JSON)."""
        return {"regsPerBlock": self.max_registers_per_block,
                "sharedMemPerBlockOptin": self.max_shared_memory_per_block,
                "sharedMemPerBlock": self.max_shared_memory_per_block_default,
                "maxThreadsPerBlock": self.max_threads_per_block}


def _profile(name: str, cc: tuple[int, int], sm_count: int,
             bandwidth_gbps: float | None, boost_clock_mhz: int | None,
             part_source: str, l2_mib: "int | None" = None) -> Device:
    lim = CC_LIMITS[cc]
    return Device(
        name=name,
        compute_capability=cc,
        sm_count=sm_count,
        warp_size=lim.warp_size,
        max_registers_per_thread=lim.max_registers_per_thread,
        max_shared_memory_per_block=lim.max_shared_memory_per_block_optin,
        max_shared_memory_per_block_default=lim.max_shared_memory_per_block_default,
        max_threads_per_block=lim.max_threads_per_block,
        registers_per_sm=lim.registers_per_sm,
        max_registers_per_block=lim.max_registers_per_block,
        shared_memory_per_sm=lim.shared_memory_per_sm,
        shared_memory_carveouts=lim.shared_memory_carveouts,
        max_threads_per_sm=lim.max_threads_per_sm,
        max_blocks_per_sm=lim.max_blocks_per_sm,
        max_warps_per_sm=lim.max_warps_per_sm,
        register_allocation_unit=lim.register_allocation_unit,
        register_allocation_granularity=lim.register_allocation_granularity,
        warp_allocation_granularity=lim.warp_allocation_granularity,
        shared_memory_allocation_unit=lim.shared_memory_allocation_unit,
        reserved_shared_memory_per_block=lim.reserved_shared_memory_per_block,
        fp32_lanes_per_sm=lim.fp32_lanes_per_sm,
        fp64_lanes_per_sm=lim.fp64_lanes_per_sm,
        shared_memory_bytes_per_clock=lim.shared_memory_bytes_per_clock,
        memory_bandwidth_gbps=bandwidth_gbps,
        boost_clock_mhz=boost_clock_mhz,
        source=f"{_CC_SOURCE} (cc {cc[0]}.{cc[1]}); {part_source}",
        l2_cache_bytes=l2_mib * MIB if l2_mib else None,
    )


# SM counts, bandwidths and boost clocks per part. Where a datasheet gives no
# clock, it is derived as FP32 peak / (2 FLOP x CUDA cores) and says so.
_PARTS: dict[str, Device] = {
    "v100": _profile(
        "NVIDIA Tesla V100 SXM2", (7, 0), 80, 900.0, 1530,
        "NVIDIA Tesla V100 GPU Architecture whitepaper (80 SMs, 1530 MHz boost, "
        "900 GB/s HBM2, 6 MB L2)", 6),
    "t4": _profile(
        "NVIDIA T4", (7, 5), 40, 320.0, 1590,
        "NVIDIA Turing GPU Architecture whitepaper (Tesla T4: 40 SMs, 1590 MHz "
        "boost, 4 MB L2); NVIDIA T4 datasheet (320 GB/s GDDR6)", 4),
    "a100": _profile(
        "NVIDIA A100 SXM4 40GB", (8, 0), 108, 1555.0, 1410,
        "NVIDIA A100 Tensor Core GPU Architecture whitepaper (108 SMs, 1410 MHz "
        "boost, 1555 GB/s HBM2 for the 40 GB part, 40 MB L2)", 40),
    "a10": _profile(
        "NVIDIA A10", (8, 6), 72, 600.0, 1695,
        "NVIDIA A10 datasheet (600 GB/s GDDR6, 31.2 TFLOPS FP32, 9216 CUDA "
        "cores = 72 SMs x 128); boost clock derived: 31.2e12 / (2 x 9216); "
        "NVIDIA Ampere GA102 GPU Architecture whitepaper (6 MB L2)", 6),
    "l4": _profile(
        "NVIDIA L4", (8, 9), 58, 300.0, 2040,
        "NVIDIA L4 datasheet (300 GB/s GDDR6, 30.3 TFLOPS FP32, 7424 CUDA "
        "cores = 58 SMs x 128); boost clock derived: 30.3e12 / (2 x 7424); "
        "NVIDIA Ada Lovelace GPU Architecture whitepaper (AD104: 48 MB L2)", 48),
    "rtx4090": _profile(
        "NVIDIA GeForce RTX 4090", (8, 9), 128, 1008.0, 2520,
        "NVIDIA Ada Lovelace GPU Architecture whitepaper (RTX 4090: 128 SMs, "
        "2520 MHz boost, 1008 GB/s GDDR6X, 72 MB L2)", 72),
    "h100": _profile(
        "NVIDIA H100 SXM5 80GB", (9, 0), 132, 3350.0, 1980,
        "NVIDIA H100 Tensor Core GPU Architecture whitepaper (SXM5: 132 SMs, 50 MB L2); "
        "NVIDIA H100 datasheet (SXM: 3.35 TB/s HBM3, 67 TFLOPS FP32); boost clock "
        "derived: 67e12 / (2 x 16896 CUDA cores)", 50),
    "h200": _profile(
        "NVIDIA H200 SXM 141GB", (9, 0), 132, 4800.0, 1980,
        "NVIDIA H200 datasheet (SXM: 4.8 TB/s HBM3e, 67 TFLOPS FP32; same GH100 "
        "die as H100 SXM5, 132 SMs, 50 MB L2); boost clock derived: 67e12 / (2 x 16896)", 50),
}

PROFILES: dict[str, Device] = {key: replace(device, key=key) for key, device in _PARTS.items()}

# The GPUs a tree is described for unless the user configures others (the editor's
# gpuProfiles, the CLI's --profiles): reachability and staging's cost are judged on them.
DEFAULT_PROFILES: tuple[str, ...] = ("h100", "a100", "t4")


def get_profile(name: str) -> Device:
    """Profile by short name ("h100", "A100", ...), case-insensitive."""
    key = name.strip().lower()
    try:
        return PROFILES[key]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise KeyError(f"unknown device {name!r}; known devices: {known}") from None


def profile_key(device_name: str) -> "str | None":
    """The profile a device's own name is ("NVIDIA H100 80GB HBM3" -> "h100", from nvidia-smi
    or cudaDeviceProp.name): the longest key found in it, spaces aside; None if none is."""
    name = device_name.lower().replace(" ", "")
    found = [key for key in PROFILES if key in name]
    return max(found, key=len) if found else None


def emulated(base: Device, regs_per_block: int, shared_optin: int, shared_default: int,
             max_threads: int) -> Device:
    """`base` with other limits: a device the CPU emulation plays, chosen so that the
    dispatcher picks a given case. Its SMs have the shared memory of one block at the opt-in
    limit (and the registers of one block at least), as the emulation's occupancy calculator
    (verify/parakern_cpu.h) and every real GPU have: 227 KiB + 1 KiB reserved on an H100."""
    per_sm = shared_optin + base.reserved_shared_memory_per_block
    return replace(base, key="", max_registers_per_block=regs_per_block, max_shared_memory_per_block=shared_optin,
                   max_shared_memory_per_block_default=shared_default, max_threads_per_block=max_threads,
                   registers_per_sm=max(regs_per_block, base.registers_per_sm), shared_memory_per_sm=per_sm,
                   shared_memory_carveouts=tuple(c for c in base.shared_memory_carveouts if c < per_sm) + (per_sm,))


def from_properties(properties: Mapping[str, int], name: str) -> Device:
    """The device a GPU reports at run time (cudaDeviceProp's names: major, minor,
    multiProcessorCount, regsPerBlock, sharedMemPerBlockOptin, sharedMemPerBlock,
    maxThreadsPerBlock; clockRate and memoryClockRate in kHz, memoryBusWidth in bits, l2CacheSize
    where given): its profile where its name is one (speeds from the datasheet), else its
    capability's limits, with the limits it reports in either case."""
    key = profile_key(name)
    if key is not None:
        base = PROFILES[key]
    else:
        cc = (int(properties["major"]), int(properties["minor"]))
        modelled = [c for c in CC_LIMITS if c <= cc]
        if not modelled:
            raise KeyError(f"{name}: compute capability {cc[0]}.{cc[1]} is older than any parakern models")
        clock_khz = properties.get("clockRate")
        memory_khz, bus_bits = properties.get("memoryClockRate"), properties.get("memoryBusWidth")
        bandwidth = 2.0 * memory_khz * 1e3 * bus_bits / 8 / 1e9 if memory_khz and bus_bits else None  # double data rate
        base = replace(_profile(name, max(modelled), int(properties["multiProcessorCount"]), bandwidth,
                                int(clock_khz) // 1000 if clock_khz else None, "the device's own properties"),
                       compute_capability=cc, l2_cache_bytes=properties.get("l2CacheSize") or None)
    limits = emulated(base, int(properties["regsPerBlock"]), int(properties["sharedMemPerBlockOptin"]),
                      int(properties.get("sharedMemPerBlock", base.max_shared_memory_per_block_default)),
                      int(properties["maxThreadsPerBlock"]))
    return replace(limits, key=key or "", name=name)


def machine_values(profile: Device) -> dict[str, int]:
    """Values of the machine parameters R_B (registers per block), Z, T on this GPU.

    Z is the opt-in per-block maximum, not the 48 KiB default: the generated
    dispatcher sets cudaFuncAttributeMaxDynamicSharedMemorySize before launch,
    so a case may use up to the opt-in limit of dynamic shared memory.
    """
    return {
        "R_B": profile.max_registers_per_block,
        "Z": profile.max_shared_memory_per_block,
        "T": profile.max_threads_per_block,
    }
