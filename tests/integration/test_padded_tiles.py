"""Padded tiles (issue 38, point 3): a staged tile that a warp reads across its rows gets rows
padded so that the lanes fall in distinct banks (analysis/padding.py); the shared-memory
counter, the case tree and the launch count the padding; nothing is padded where no warp
conflicts; `profile` shows the wavefronts with and without it; PK040 says what it does.
The same kernels run on the CPU emulation: test_padded_tiles_emulated.py."""
from __future__ import annotations

import time

import pytest

from conftest import SAMPLES
from parakern.analysis.point import profile_point
from parakern.analysis.staging import plan, unpadded
from parakern.analysis.traffic import traffic
from parakern.pipeline import analyze
from unit.test_padded_tiles import _stageable_kernels


@pytest.mark.slow   # every staged variant of the corpus, costed twice: about 45 s on 2 busy cores
def test_padding_goes_where_warps_conflict_and_nowhere_else():
    """Over the corpus: a tile is padded only where its rows unpadded cost bank conflicts at the
    profile point, and a padded tile never costs more wavefronts than unpadded; a tile whose
    requests are free of conflicts keeps its rows."""
    started, padded_arrays, clean_arrays = time.monotonic(), [], []
    for name, kernel in _stageable_kernels():
        point = profile_point(kernel.schedule)
        if point is None:
            continue
        after = traffic(kernel, point)
        twin = unpadded(kernel)
        before = traffic(twin, point) if twin is not None else after
        for st in plan(kernel):
            array = st.array.name
            mine = [r for r in before.requests if r.array == array and r.space == "shared"]
            conflicts = sum(r.requests * r.conflicts for r in mine)
            cost_before = sum(r.requests * r.cost for r in mine)
            cost_after = sum(r.requests * r.cost for r in after.requests if r.array == array and r.space == "shared")
            pitched = any(r.pitch is not None for c in st.choices for r in c.regions)
            if pitched:
                padded_arrays.append((name, array))
                assert conflicts > 0, (name, array)
                assert cost_after < cost_before, (name, array, cost_after, cost_before)
            else:
                clean_arrays.append((name, array))
                assert cost_after == pytest.approx(cost_before)
    # the corpus has both: transpose's c and the rows of atax, gesummv, syrk...; stencils' halos
    assert ("transpose", "c") in padded_arrays and ("atax", "A") in padded_arrays
    assert ("transpose", "a") in clean_arrays and ("stencil2d", "in") in clean_arrays
    assert time.monotonic() - started < 600


def test_pk040_says_what_padding_does_for_the_access_it_warns_about():
    (warning,) = [d for d in analyze((SAMPLES / "transpose.c").read_text(), "samples/transpose.c").diagnostics
                  if d.code == "PK040"]
    assert ("staged, its tile's rows are padded (9 elements apart where 8 hold them), so that c[j][i], whose "
            "lanes are in different rows, takes 1 wavefront per request of shared memory where unpadded rows "
            "take 8") in warning.message
    atax = (SAMPLES / "polybench" / "atax.c").read_text()
    (first,) = [d for d in analyze(atax, "samples/polybench/atax.c").diagnostics if d.code == "PK040"]
    assert "cache(A) stages it through shared memory with coalesced copies; staged, its tile's rows are padded " \
           "(1025 elements apart where 1024 hold them)" in first.message
    assert "takes 2 wavefronts per request of shared memory where unpadded rows take 32" in first.message
