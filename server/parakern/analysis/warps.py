"""What one warp request costs, from the byte addresses its lanes touch (NOTES.md: GPU facts).

Global memory serves a warp in 32-byte sectors: a request costs the number of distinct
sectors its lanes' elements lie in (elements are naturally aligned, so each lies in one).
Shared memory has 32 banks of 4-byte words: a request takes as many wavefronts as the
most distinct words any one bank holds (lanes reading one word share it: a broadcast).
The fewest a request of that many distinct elements can take is its ideal; bank
conflicts are the wavefronts beyond it.

Shared by the static analysis (traffic.py), which feeds it addresses computed from the
access functions, and by the tests, which compare it with the CPU emulation's counts.
"""
from __future__ import annotations

import functools
import math

WARP = 32
SECTOR = 32
BANKS = 32
WORD = 4


def warps(block: tuple[int, int, int]) -> list[list[tuple[int, int, int]]]:
    """The warps of a block: lanes are consecutive linear thread ids x + y*bx + z*bx*by."""
    bx, by, bz = block
    n = bx * by * bz
    out = []
    for first in range(0, n, WARP):
        out.append([(t % bx, t // bx % by, t // (bx * by)) for t in range(first, min(first + WARP, n))])
    return out


def sectors(addresses) -> int:
    """Distinct 32-byte sectors of the byte addresses (each the start of an aligned element)."""
    return len({a // SECTOR for a in addresses})


def ideal_sectors(addresses, size: int) -> int:
    """Sectors the request's distinct elements would take if they were contiguous and aligned."""
    return max(1, math.ceil(len(set(addresses)) * size / SECTOR))


def wavefronts(addresses, size: int) -> int:
    """Shared-memory wavefronts of a request: the most distinct words in one bank."""
    addresses = tuple(addresses)
    # banks repeat every BANKS words: a request moved by whole rows of banks costs the same,
    # and a tile's warps are mostly one pattern moved (the padding search asks thousands)
    base = min(addresses, default=0) // (BANKS * WORD) * (BANKS * WORD)
    return _wavefronts(tuple(a - base for a in addresses) if base else addresses, size)


@functools.lru_cache(maxsize=65536)
def _wavefronts(addresses: tuple, size: int) -> int:
    per_bank: dict = {}
    for a in addresses:
        for word in range(a // WORD, (a + size - 1) // WORD + 1):
            per_bank.setdefault(word % BANKS, set()).add(word)
    return max((len(w) for w in per_bank.values()), default=1)


def ideal_wavefronts(addresses, size: int) -> int:
    """The fewest wavefronts the request's distinct words could take."""
    words = {w for a in addresses for w in range(a // WORD, (a + size - 1) // WORD + 1)}
    return max(1, math.ceil(len(words) / BANKS))


def spread(step: int, count: "int | None" = None) -> dict[int, float]:
    """Byte offsets modulo a sector of step * k for k = 0 .. count - 1, each with its share of
    the k (count None: k over every integer, its residues alike). Only k modulo the period
    SECTOR / gcd(step, SECTOR) matters, so a long loop costs no more than a short one."""
    period = SECTOR // math.gcd(step, SECTOR)
    if count is None or count <= 0:
        count = period
    full, rest = divmod(count, period)
    return {step * k % SECTOR: (full + (k < rest)) / count for k in range(min(count, period))}


def combine(a: dict[int, float], b: dict[int, float]) -> dict[int, float]:
    """Offsets modulo a sector of the sum of two independent offsets, with their shares."""
    out: dict[int, float] = {}
    for x, p in a.items():
        for y, q in b.items():
            out[(x + y) % SECTOR] = out.get((x + y) % SECTOR, 0.0) + p * q
    return out


def mean_sectors(first: int, offsets, shifts: dict[int, float]) -> float:
    """Mean sectors of a request whose lanes lie `offsets` bytes from its first element, that
    element at byte `first` moved by each of `shifts` (offset modulo a sector -> share)."""
    return sum(share * sectors([(first + d) % SECTOR + o for o in offsets]) for d, share in shifts.items())


def uncoalesced(cost: float, ideal: float) -> bool:
    """A global request is uncoalesced when it touches more sectors than its elements need,
    beyond the one extra sector a warp whose first element is off a sector boundary costs
    (a stencil's `in[i][j + 1]`: 5 sectors for 32 floats is coalesced; a stride of 2 floats,
    8 sectors, is not)."""
    return cost > ideal + 1 + 1e-9
