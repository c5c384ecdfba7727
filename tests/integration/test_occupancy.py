import random
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest
import sympy

from parakern.counters.occupancy import occupancy, occupancy_detail, occupancy_expr
from parakern.machine.devices import PROFILES

HEADER = Path("/usr/local/cuda/include/cuda_occupancy.h")
DRIVER = (Path(__file__).resolve().parents[1] / "occupancy_driver.cpp")
INT_MAX = 2**31 - 1

# One profile per capability in the table, plus second parts of 8.9 and 9.0.
GRID_DEVICES = ["v100", "t4", "a100", "a10", "l4", "rtx4090", "h100", "h200"]

REGISTERS = [0, 1, 8, 9] + list(range(16, 256))
THREADS = [1, 31, 32, 33, 64, 96, 100, 128, 192, 256, 288, 384, 416, 512,
           640, 768, 992, 1000, 1024, 1025]


def shared_sizes(p):
    optin, r = p.max_shared_memory_per_block, p.reserved_shared_memory_per_block
    fixed = [0, 1, 127, 129, 1024, 3000, 8192, 16385, 32768, 49152, 49153, 65536]
    relative = [optin // 4, optin // 3, optin // 2 + 1, optin - r - 1, optin - 1,
                optin, optin + 1]
    return sorted({s for s in fixed + relative if s <= optin + 1})


# --- ground truth: NVIDIA's cuda_occupancy.h -------------------------------------

@pytest.fixture(scope="module")
def occ_driver(tmp_path_factory):
    if not HEADER.exists():
        pytest.skip(f"{HEADER} not found (CUDA toolkit not installed)")
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not found; needed to build the cuda_occupancy.h driver")
    exe = tmp_path_factory.mktemp("occ") / "occupancy_driver"
    subprocess.run([gxx, "-O1", f"-I{HEADER.parent}", str(DRIVER), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    return exe


def header_results(exe, device, carveout, configs):
    """[(active, by_warps, by_regs, by_smem, by_blocks)] from cuda_occupancy.h."""
    p = device
    lines = ["D {} {} {} {} {} {} {} {} {} {} {} {} {}".format(
        *p.compute_capability, p.max_threads_per_block, p.max_threads_per_sm,
        p.max_registers_per_block, p.registers_per_sm, p.warp_size,
        p.max_shared_memory_per_block_default, p.shared_memory_per_sm, p.sm_count,
        p.max_shared_memory_per_block, p.reserved_shared_memory_per_block, carveout)]
    lines += [f"Q {r} {t} {s}" for r, t, s in configs]
    out = subprocess.run([str(exe)], input="\n".join(lines) + "\n", check=True,
                         capture_output=True, text=True).stdout.splitlines()
    assert len(out) == len(configs)
    assert not any(line.startswith("ERR") for line in out), out[:5]
    return [tuple(int(x) for x in line.split()) for line in out]


def ours(detail):
    as_int_max = [INT_MAX if x is None else x for x in
                  (detail.blocks_by_warps, detail.blocks_by_registers,
                   detail.blocks_by_shared_memory, detail.blocks_by_block_count)]
    return (detail.active_blocks, *as_int_max)


def compare(exe, key, carveout, configs):
    p = PROFILES[key]
    expected = header_results(exe, p, carveout, configs)
    mismatches = []
    for (r, t, s), want in zip(configs, expected):
        got = ours(occupancy_detail(r, s, t, p, carveout_percent=carveout))
        if got != want:
            mismatches.append(((r, t, s), got, want))
    assert not mismatches, f"{key}: {len(mismatches)} mismatches, first: {mismatches[:5]}"
    return len(configs)


@pytest.mark.parametrize("key", GRID_DEVICES)
def test_matches_cuda_occupancy_header_max_carveout(occ_driver, key):
    configs = [(r, t, s) for r in REGISTERS for t in THREADS
               for s in shared_sizes(PROFILES[key])]
    assert compare(occ_driver, key, 100, configs) > 50_000


@pytest.mark.parametrize("key", GRID_DEVICES)
@pytest.mark.parametrize("carveout", [0, 25, 50, 75])
def test_matches_cuda_occupancy_header_other_carveouts(occ_driver, key, carveout):
    regs = [0, 16, 32, 33, 64, 96, 128, 255]
    configs = [(r, t, s) for r in regs for t in THREADS
               for s in shared_sizes(PROFILES[key])]
    compare(occ_driver, key, carveout, configs)


# --- hand-worked cases -----------------------------------------------------------

def test_a100_hand_worked():
    a100 = PROFILES["a100"]
    # 256 threads = 8 warps. 32 regs x 32 lanes = 1024 regs/warp; a sub-partition has
    # 65536/4 = 16384 -> 16 warps, x4 = 64 warps = 8 blocks; warps allow 64/8 = 8;
    # shared 0 + 1 KiB reserve -> 167936/1024 = 164 blocks; cap 32 -> 8 blocks = 64 warps.
    assert occupancy(32, 0, 256, a100) == 1
    # 64 regs -> 2048 regs/warp -> 8 warps per sub-partition -> 32 warps = 4 blocks.
    assert occupancy(64, 0, 256, a100) == Fraction(1, 2)
    # 48 KiB + 1 KiB reserve = 50176 B (a multiple of 128); 167936 // 50176 = 3 blocks
    # = 24 warps of 64; registers would allow 8 blocks.
    d = occupancy_detail(32, 48 * 1024, 256, a100)
    assert (d.active_blocks, d.limiting) == (3, ("shared_memory",))
    assert d.occupancy == Fraction(3, 8)


def test_h100_hand_worked():
    h100 = PROFILES["h100"]
    # 64 threads = 2 warps, 48 regs -> 1536 regs/warp; 16384 // 1536 = 10 warps per
    # sub-partition -> 40 warps = 20 blocks (dividing the whole 65536 would say 42).
    assert occupancy(48, 0, 64, h100) == Fraction(40, 64)
    # 1024 threads x 64 regs is exactly the 65536-register block limit: 1 block, 32 warps.
    assert occupancy(64, 0, 1024, h100) == Fraction(1, 2)
    # 65 regs -> 2080 rounded to 2304 regs/warp; x 32 warps > 65536: cannot launch.
    d = occupancy_detail(65, 0, 1024, h100)
    assert (d.active_blocks, d.limiting) == (0, ("registers",))
    # Shared memory at the opt-in maximum fits one block; one byte more does not.
    assert occupancy_detail(32, 232448, 128, h100).active_blocks == 1
    assert occupancy_detail(32, 232449, 128, h100).active_blocks == 0


def test_t4_hand_worked():
    t4 = PROFILES["t4"]
    # Turing: 32 warps per SM, 16 blocks. 128 threads = 4 warps -> 8 blocks by warps.
    assert occupancy(32, 0, 128, t4) == 1
    # 32 threads = 1 warp: the 16-block cap binds -> 16 of 32 warps.
    d = occupancy_detail(16, 0, 32, t4)
    assert d.limiting == ("blocks",) and d.occupancy == Fraction(1, 2)
    # No shared memory and no reserve on cc 7.x: shared memory sets no limit.
    assert d.blocks_by_shared_memory is None


def test_threads_over_block_limit_is_zero():
    assert occupancy(32, 0, 1025, PROFILES["a100"]) == 0


def test_rejects_bad_arguments():
    with pytest.raises(ValueError):
        occupancy(32, 0, 0, PROFILES["a100"])
    with pytest.raises(ValueError):
        occupancy(32, -1, 32, PROFILES["a100"])
    with pytest.raises(ValueError):
        occupancy(32, 0, 32, PROFILES["a100"], carveout_percent=101)


# --- symbolic form ---------------------------------------------------------------

B0, B1, B, s, R = sympy.symbols("B0 B1 B s R", integer=True, positive=True)


def _at(expr, point):
    # xreplace substitutes all symbols at once; subs() would re-evaluate
    # Min/Max on every partially substituted expression (~100x slower).
    return sympy.sympify(expr).xreplace(point)


def _random_point(rng, p):
    optin = p.max_shared_memory_per_block
    values = {
        B0: rng.choice([1, 2, 3, 4, 8, 16, 17, 32, 33, 64]),
        B1: rng.choice([1, 2, 4, 7, 8, 16, 32, 33]),
        B: rng.randint(1, 128),
        s: rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256, optin // 1024]),
        R: rng.choice([1, 8, 16, 31, 32, 33, 40, 64, 96, 128, 168, 255, 256]),
    }
    return {k: sympy.Integer(v) for k, v in values.items()}


SYMBOLIC_CASES = {
    # threads, shared bytes, registers
    "tile": (B0 * B1, 4 * B0 * B1 * s, R),
    "reduction": (B0 * B1, 8 * s * B + 8, 32),
    "fixed_threads": (256, 8 * s * B + 8, R),
}


@pytest.mark.parametrize("key", ["v100", "t4", "a100", "a10", "l4", "h100"])
@pytest.mark.parametrize("case", sorted(SYMBOLIC_CASES))
def test_symbolic_equals_numeric(key, case):
    p = PROFILES[key]
    threads, shared, regs = SYMBOLIC_CASES[case]
    expr = occupancy_expr(regs, shared, threads, p)
    rng = random.Random(f"{key}-{case}")
    seen = set()
    for _ in range(80):
        point = _random_point(rng, p)
        t, z, r = (int(_at(x, point)) for x in (threads, shared, regs))
        value = _at(expr, point)
        assert value.is_Rational, (point, value)
        assert Fraction(int(value.p), int(value.q)) == occupancy(r, z, t, p), point
        seen.add(occupancy_detail(r, z, t, p).limiting)
    assert len(seen) >= 3, seen  # the points exercise several binding limits


@pytest.mark.parametrize("key", ["v100", "t4", "h100"])
@pytest.mark.parametrize("carveout", [0, 50])
def test_symbolic_equals_numeric_small_carveout(key, carveout):
    p = PROFILES[key]
    threads, shared = B0 * B1, 4 * B0 * B1 * s
    expr = occupancy_expr(R, shared, threads, p, carveout_percent=carveout)
    rng = random.Random(f"{key}-{carveout}")
    for _ in range(60):
        point = _random_point(rng, p)
        t, z = int(_at(threads, point)), int(_at(shared, point))
        value = _at(expr, point)
        assert Fraction(int(value.p), int(value.q)) == occupancy(
            int(point[R]), z, t, p, carveout_percent=carveout), point


def test_symbolic_subs_agrees_with_xreplace():
    expr = occupancy_expr(R, 8 * s * B + 8, B0 * B1, PROFILES["a100"])
    point = {B0: 16, B1: 8, s: 4, B: 100, R: 40}
    assert expr.subs(point) == _at(expr, {k: sympy.Integer(v) for k, v in point.items()})
    assert expr.subs(point) == occupancy(40, 8 * 4 * 100 + 8, 128, PROFILES["a100"])


def test_symbolic_with_numbers_is_a_number():
    p = PROFILES["a100"]
    assert occupancy_expr(64, 0, 256, p) == sympy.Rational(1, 2)
    assert occupancy_expr(0, 0, 32, PROFILES["v100"]) == sympy.Rational(1, 2)
