"""Vector reads of a register tile's operands (issue 38, point 1; analysis/vector_layout.py):
the TM (TN) staged copies of each operand of a product are interleaved by four, a thread's
elements of four copies side by side, so the tile's body reads them as one float4 (LDS.128)
where alignment is proved (float elements, 16-byte aligned part and group), and as scalars
elsewhere. The CUDA printed (codegen/memory.py) and the IR ptxas counts (ir/staged_copies.py)
read alike, and the IR run on the host computes the product. The kernels run on the CPU
emulation against the serial C in tests/integration/test_vector_reads_emulated.py."""
from __future__ import annotations

import ctypes
import dataclasses
import itertools
import re

import pytest
import sympy

from conftest import SAMPLES
from parakern.analysis.staging import plan, shared_bytes
from parakern.analysis.vector_layout import _multiple, vector_layout
from parakern.codegen.kernel_source import kernel_source
from parakern.comprehensive import Case
from parakern.frontend import analyze_source
from parakern.ir import HostKernel
from parakern.ir.lower import lower
from parakern.ir.ptx import kernel_ptx
from parakern.kernel import Kernel
from parakern.strategies.register_tiles import RegisterTiles, SmallerTiles
from parakern.symbolic import constraints as cs
from parakern.symbolic.symbols import sym

# (sample, its cache clause, a point where the tiles divide the grid)
PRODUCTS = [
    ("matmul.c", "a, b", dict(n=64, B0=4, ub1=4, s=2)),
    ("polybench/gemm.c", "A, B", dict(ni=64, nj=64, nk=12, B0=4, B1=4)),
    ("polybench/two_mm.c", "A, B", dict(ni=64, nj=64, nk=12, nl=64, B0=4, B1=4)),
]


def cached(name: str, cache: str, ctype: str = "float") -> str:
    text = (SAMPLES / name).read_text().replace("meta_schedule {", f"meta_schedule cache({cache}) {{", 1)
    return text.replace("float", ctype)


def tiled_kernels(text: str, name: str = "t.c"):
    """The schedule's kernels with the 8 x 8 tile and with the 4 x 4 one."""
    schedule = analyze_source(text, name).schedules[0]
    large = RegisterTiles().apply(Kernel.initial(schedule))
    return large, SmallerTiles(1).apply(large)


def source(kernel: Kernel) -> str:
    case = Case(cs.System(), kernel, kernel.decisions,
                (("registers", 0), ("shared_memory", shared_bytes(kernel)), ("threads", 1)), None, True, ())
    return kernel_source(case, 1)


def part(kernel: Kernel, name: str):
    return next(st for st in plan(kernel) if st.array.name == name)


def slot(region, position: tuple[int, ...], values: dict) -> int:
    """Where the plan puts the element at `position` in the region (row-major, positions
    `lanes` slots apart), at numbers."""
    def n(e):
        return int(sympy.sympify(e).xreplace(values))
    linear = 0
    for k, p in enumerate(position):
        linear = linear * n(region.scale(k)) + p
    return n(region.base) + linear * region.lanes


@pytest.mark.parametrize("name, cache, point", PRODUCTS)
def test_a_tiles_copies_of_each_operand_are_interleaved_with_a_threads_four_elements_side_by_side(
        name, cache, point):
    values = {sym(k): v for k, v in point.items()}
    for kernel in tiled_kernels(cached(name, cache), name):
        for st in plan(kernel):
            (choice,) = st.choices
            t = len(choice.regions)
            assert t in kernel.tile
            assert [r.lanes for r in choice.regions] == [4] * t and [r.lane for r in choice.regions] == [0, 1, 2, 3] * (t // 4)
            # every element of the part has a slot of its own, inside the part, and a thread's
            # elements of copies 4g .. 4g + 3 are one aligned float4
            slots = {}
            for r, region in enumerate(choice.regions):
                sizes = [int(sympy.sympify(d.elements).xreplace(values)) for d in region.dims]
                for position in itertools.product(*map(range, sizes)):
                    slots[r, position] = slot(region, position, values)
            elements = int(sympy.sympify(st.elements).xreplace(values))
            assert len(set(slots.values())) == len(slots) == elements
            assert all(0 <= s < elements for s in slots.values())
            for (r, position), s in slots.items():
                first = slots[r - r % 4, position]
                assert first % 4 == 0 and s == first + r % 4
            assert int(sympy.sympify(st.offset).xreplace(values)) % 16 == 0


def test_the_tile_kernel_reads_both_operands_as_float4_and_copies_them_lanes_apart():
    for kernel in tiled_kernels(cached("matmul.c", "a, b")):
        text = source(kernel)
        for name in "ab":
            reads = re.findall(rf"reinterpret_cast<const float4 \*>\({name}_shared\)\[[^\]]*\]\.([xyzw])", text)
            assert sorted(reads) == sorted("xyzw" * (kernel.tile[0] * kernel.tile[1] // 4)), (name, reads)
            assert re.search(rf"{name}_shared\[(\S+ \+ )?3 \+ \w+ \* 4\] = {name}\[", text), name  # lane 3's copy
        assert re.search(r"[ab]_shared\[[^\]]*\] \*", text) is None     # no scalar read left


def test_double_elements_keep_scalar_reads():
    for kernel in tiled_kernels(cached("matmul.c", "a, b", "double")):
        assert all(r.lanes == 1 for st in plan(kernel) for c in st.choices for r in c.regions)
        text = source(kernel)
        assert "float4" not in text and "b_shared[" in text


def test_syrks_tiles_that_may_overlap_keep_scalar_reads():
    """syrk reads A on both sides (A[i][k], A[j][k]): its row and column tiles may be the same
    rows, an element found in the first region holding it, which a vector read would skip."""
    for kernel in tiled_kernels(cached("polybench/syrk.c", "A"), "syrk.c"):
        (st,) = plan(kernel)
        assert all(c.overlapping for c in st.choices)
        assert all(r.lanes == 1 for c in st.choices for r in c.regions)


def test_a_part_not_proved_16_byte_aligned_keeps_its_layout():
    large, _ = tiled_kernels(cached("matmul.c", "a, b"))
    st = part(large, "b")
    (choice,) = st.choices
    as_written = dataclasses.replace(choice, regions=tuple(
        dataclasses.replace(r, base=sympy.expand(k * r.elements), lanes=1, lane=0)
        for k, r in enumerate(choice.regions)))
    s = large.schedule
    assert vector_layout(s, st.array, as_written, st.offset) == choice
    assert vector_layout(s, st.array, as_written, st.offset + 4) == as_written     # 4 bytes off
    assert vector_layout(s, st.array, as_written, 4 * sym("n")) == as_written      # n odd: not aligned
    three = dataclasses.replace(as_written, regions=as_written.regions[:3])       # no whole float4
    assert vector_layout(s, st.array, three, st.offset) == three
    assert _multiple(32 * sym("B0") ** 2, 16) and _multiple(0, 16)
    assert not _multiple(16 * sym("n") + 8, 16) and not _multiple(sym("B0") / 2, 4)


def test_the_ir_reads_both_operands_with_vector_loads_as_the_cuda_does():
    large, small = tiled_kernels(cached("matmul.c", "a, b"))
    for kernel in (large, small):
        ir_text = str(lower(kernel))
        assert re.search(r"load <4 x float>, <4 x float> addrspace\(3\)\*? ?%[\w.\"]+, align 16", ir_text), \
            "no aligned vector load of shared memory in the IR"
        # per step of the product's loop: TM/4 vector loads of a, TN/4 of b, no scalar load
        loads = re.findall(r"ld\.shared\.([\w.]+)", kernel_ptx(kernel))
        assert loads == ["v4.b32"] * ((kernel.tile[0] + kernel.tile[1]) // 4), loads
    scalar, _ = tiled_kernels(cached("matmul.c", "a, b", "double"))
    assert "ld.shared.v4" not in kernel_ptx(scalar)


def test_the_tiles_ir_with_its_vector_loads_computes_matmul_on_the_host():
    """The IR that reads b as <4 x float> (lanes extracted), run on the CPU (ir/host.py), gives
    the product: the vector index and lane the IR computes are the elements the copies stored."""
    n, values = 32, dict(n=32, B0=2, ub1=2, s=1)        # 16 x 16 blocks: whole 8 x 8 tiles
    a = [float((3 * i + 5 * j) % 7 - 3) for i in range(n) for j in range(n)]
    b = [float((2 * i + 7 * j) % 5 - 2) for i in range(n) for j in range(n)]
    want = [sum(a[i * n + k] * b[k * n + j] for k in range(n)) for i in range(n) for j in range(n)]
    for kernel in tiled_kernels(cached("matmul.c", "a, b")):
        floats = ctypes.c_float * (n * n)
        c = floats()
        host = HostKernel(kernel)
        host.launch(dict(values, a=floats(*a), b=floats(*b), c=c))
        assert list(c) == want, kernel.tile
