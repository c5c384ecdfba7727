"""Staging copies of boxes in a compile-time instance's serial loops are printed `#pragma unroll 1`
(codegen/memory.py): nvcc unrolled them by 4 and kept each unrolled element's 64-bit index live
across the loop (matmul's 4 x 4 tile: 80 registers, 64 without; docs/bench/register-tiles.md).
Copies run once, and parametric kernels' copies, keep nvcc's unrolling."""
import re

from parakern.codegen import kernel_source
from unit.test_codegen import cached_matmul, tree


def _copy_loops(source: str) -> dict[str, bool]:
    """{copy comment: whether its copy loop is printed `#pragma unroll 1`}."""
    out = {}
    for m in re.finditer(r"/\* ((?:load|write back) the .*?) \*/\n((?:.*\n){0,4}?)\s*for \(int e = ", source):
        out[m.group(1)] = "#pragma unroll 1" in m.group(2)
    return out


POINT = (("B0", 32), ("ub1", 32), ("s", 4))


def test_copies_in_the_k_loop_are_not_unrolled_those_around_it_are():
    (result,) = cached_matmul().results
    t = result.tree
    case = next(c for c in t.cases if c.kernel.cached and c.kernel.ir_level == 0)
    source = kernel_source(case, t.cases.index(case) + 1, fixed=POINT)
    loops = _copy_loops(source)
    inside = {k: v for k, v in loops.items() if " of a " in k or " of b " in k}
    around = {k: v for k, v in loops.items() if " of c " in k}
    assert inside and all(inside.values()), loops          # refilled per k: not unrolled
    assert around and not any(around.values()), loops      # c, once before and after the loop
    body = source[source.index("for (int k = 0; k < n / B0; k++) {"):]
    assert body.count("#pragma unroll 1") == len(inside)   # the body's own loops keep nvcc's unrolling
    # the parametric kernel keeps nvcc's unrolling everywhere
    assert "#pragma unroll" not in kernel_source(case, t.cases.index(case) + 1)


def test_a_kernel_without_serial_loops_prints_its_copies_as_before():
    # transpose's staged cases copy once per block: nothing to keep across a loop
    t = tree("transpose")
    for k, case in enumerate(t.cases, 1):
        if case.kernel.cached and case.kernel.ir_level == 0:
            assert "#pragma unroll" not in kernel_source(case, k)

