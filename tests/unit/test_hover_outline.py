"""The hover of a schedule answers before its case tree exists: what the front-end knows
(mapping, serial loops, parameters, arrays, facts) and `case tree: analysing…`."""
from __future__ import annotations

from pathlib import Path

from parakern.frontend import analyze_source
from parakern.lsp.texts import hover_markdown
from parakern.lsp.views import outline_of, view_of

ROOT = Path(__file__).resolve().parents[2]


def _schedule(name: str):
    path = ROOT / "samples" / f"{name}.c"
    (schedule,) = analyze_source(path.read_text(), str(path)).schedules
    return schedule


def test_outline_of_matmul_says_what_the_front_end_knows():
    lines = outline_of(_schedule("matmul"))
    assert lines[0] == "**Grid**: `i` → `blockIdx.y`, 0 ≤ i < dim0; `j` → `blockIdx.x`, 0 ≤ j < dim1"
    assert lines[1] == "**Block**: `v` → `threadIdx.y`, 0 ≤ v < B0; `u` → `threadIdx.x`, 0 ≤ u < ub1"
    assert lines[2] == ("**Serial loops**: `k` (0 ≤ k < ⌊n/B0⌋) between grid and block; "
                        "`z` (0 ≤ z < B0) in each thread; `w` (0 ≤ w < s) in each thread")
    assert lines[3] == "**Data parameters**: `n`"
    assert lines[4] == "**Program parameters**: `B0`, `ub1`, `s`"
    assert lines[5] == "**Arrays**: `float c[n][n]` read and written; `float a[n][n]` read; `float b[n][n]` read"
    assert lines[6].startswith("**Facts**: ") and "n mod B0 = 0 (assert)" in lines[6]


def test_hover_before_the_tree_is_never_empty():
    for name in ("jacobi1d", "matmul", "transpose", "stencil2d"):
        view = view_of(_schedule(name))
        for token, word in (("meta_schedule", ""), ("meta_for", view.loops[0].var), ("cache", "")):
            text = hover_markdown(view, None, token, word)
            assert text.endswith("_case tree: analysing…_"), text
            assert "**Grid**" in text and "**Block**" in text and "**Arrays**" in text


def test_hover_of_a_cached_array_before_the_tree():
    view = view_of(_schedule("jacobi1d"))
    text = hover_markdown(view, None, "cache", "")
    assert "`cache(a)`" in text and "`int a[2·N]` read and written, cache(...)" in text
