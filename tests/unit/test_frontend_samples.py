"""The model of every sample, asserted exactly (sympy equivalence for expressions)."""
import pytest

from conftest import SAMPLES, same, sample_files, text_at
from parakern.frontend import analyze_file


def schedule_of(name):
    result = analyze_file(SAMPLES / f"{name}.c")
    assert [d for d in result.diagnostics if d.severity.value == "error"] == []
    assert len(result.schedules) == 1
    return result.schedules[0]


# name: (data, program, {array: (type, dims, read, written)}, grid extents, block extents,
#        cached, between-loop vars, serial vars)
EXPECTED = {
    "matadd": (["N"], ["B0", "B1"],
               {"a": ("int", ["N", "N"], True, False), "b": ("int", ["N", "N"], True, False),
                "c": ("int", ["N", "N"], False, True)},
               ["dim0", "dim1"], ["B0", "B1"], [], [], []),
    "matmul": (["n"], ["B0", "ub1", "s"],
               {"a": ("float", ["n", "n"], True, False), "b": ("float", ["n", "n"], True, False),
                "c": ("float", ["n", "n"], True, True)},
               ["dim0", "dim1"], ["B0", "ub1"], [], ["k"], ["z", "w"]),
    "jacobi1d": (["N"], ["s", "B", "t"], {"a": ("int", ["2*N"], True, True)},
                 ["dim"], ["B"], ["a"], [], ["k"]),
    "transpose": (["N"], ["B0", "B1", "s"],
                  {"a": ("float", ["N", "N"], True, False), "c": ("float", ["N", "N"], False, True)},
                  ["dim0", "dim1"], ["B0", "B1"], ["a", "c"], [], ["k"]),
    "polydiv": (["N", "M"], ["P", "s", "B"],
                {"a": ("int", ["N"], True, True), "b": ("int", ["M"], True, False)},
                ["dim"], ["B"], ["a", "b"], [], ["k"]),
    "saxpy": ([], ["n", "B", "alpha"],
              {"x": ("float", [], True, False), "y": ("float", [], True, True)},
              ["blocks"], ["B"], [], [], []),
    "stencil2d": (["N"], ["Bx", "By"],
                  {"in": ("float", ["N", "N"], True, False), "out": ("float", ["N", "N"], False, True)},
                  ["gy", "gx"], ["By", "Bx"], ["in"], [], []),
    "matvec": ([], ["m", "n", "B"],
               {"A": ("double", [], True, False), "x": ("double", [], True, False),
                "y": ("double", [], False, True)},
               ["rows"], ["B"], [], [], ["j"]),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_model(name):
    s = schedule_of(name)
    data, program, arrays, grid, block, cached, between, serial = EXPECTED[name]
    assert [p.name for p in s.data_params] == data
    assert [p.name for p in s.program_params] == program
    assert {a.name for a in s.arrays} == set(arrays)
    for array in s.arrays:
        ctype, dims, read, written = arrays[array.name]
        assert array.ctype == ctype
        assert len(array.dims) == len(dims) and all(same(d, e) for d, e in zip(array.dims, dims))
        assert (array.read, array.written) == (read, written)
    assert [str(loop.extent) for loop in s.grid] == grid
    assert [str(loop.extent) for loop in s.block] == block
    assert [c.name for c in s.cache] == cached
    assert [loop.var for loop in s.between] == between
    assert [loop.var for loop in s.serial] == serial


def test_every_sample_is_covered():
    assert {p.stem for p in sample_files()} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_axes_innermost_is_x(name):
    s = schedule_of(name)
    for loops in (s.grid, s.block):
        assert [loop.axis for loop in loops] == ["z", "y", "x"][3 - len(loops):]
        assert all(loop.level == ("grid" if loops is s.grid else "block") for loop in loops)


def test_jacobi_details():
    s = schedule_of("jacobi1d")
    assert s.id == "jacobi1d:0" and s.function == "jacobi1d"
    assert s.host_loops == ("t",)
    (dim,) = s.derived
    assert dim.name == "dim" and same(dim.value, "floor((N - 2)/(s*B))")
    assert {l.name for l in s.locals} == {"p", "p1", "p2", "np", "np1", "np2"}
    # Subscripts resolved through the locals into loop variables and parameters.
    writes = [a for a in s.accesses if a.is_write]
    assert [same(w.indices[0], e) for w, e in zip(writes, ["i*s*B + k*B + j + 1",
                                                          "N + i*s*B + k*B + j + 1"])] == [True, True]
    # The branch on t % 2 is uniform across a launch: the same for every thread.
    assert all(a.guards and a.guards[0].uniform for a in s.accesses)
    assert {a.guards[0].taken for a in s.accesses} == {True, False}
    assert all(a.exact for a in s.accesses)
    facts = {str(f.relation) for f in s.facts}
    assert "B >= 1" in facts and "dim >= 1" in facts


def test_bounds_checks_are_not_uniform():
    s = schedule_of("matadd")
    assert all(a.guards and not a.guards[0].uniform for a in s.accesses)


def test_matmul_serial_loop_between_grid_and_block():
    s = schedule_of("matmul")
    (k,) = s.between
    assert k.between and same(k.hi, "floor(n/B0)")
    assert [l.var for l in s.grid] == ["i", "j"] and [l.var for l in s.block] == ["v", "u"]
    c_write = next(a for a in s.accesses if a.array == "c")
    assert c_write.is_read and c_write.is_write  # +=
    assert c_write.loops == ("k", "z", "w")
    assert same(c_write.indices[1], "j*ub1*s + u + w*ub1")
    facts = {str(f.relation) for f in s.facts}
    assert "B0 <= s*ub1" in facts  # from assert(B0 <= ub1 * s)
    assert "Eq(Mod(n, B0), 0)" in facts


def test_defines_are_constants():
    s = schedule_of("stencil2d")
    assert "WEIGHT" not in {p.name for p in s.params}
    assert any(str(f.relation) == "N > 2" for f in s.facts)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_spans_cover_the_right_text(name):
    path = SAMPLES / f"{name}.c"
    s = schedule_of(name)
    assert text_at(path, s.keyword_span) == "meta_schedule"
    whole = text_at(path, s.span)
    assert whole.startswith("meta_schedule") and whole.endswith("}")
    function = text_at(path, s.function_span)
    assert function.startswith(f"void {s.function}(") and function.endswith("}") and whole in function
    for loop in s.loops:
        assert text_at(path, loop.keyword_span) == "meta_for"
        header = text_at(path, loop.span)
        assert header.startswith("meta_for (int " + loop.var) and header.endswith(")")
    for access in s.accesses:
        text = text_at(path, access.span)
        assert text.startswith(access.array + "[") and text.endswith("]"), text
        assert text.count("[") == text.count("]")
    for c in s.cache:
        assert text_at(path, c.span) == c.name
    for p in s.params:
        assert p.name in text_at(path, p.span)


def test_exact_access_positions_jacobi():
    s = schedule_of("jacobi1d")
    positions = [(a.span.line, a.span.col, a.span.end_col) for a in s.accesses]
    assert positions[:4] == [(17, 38, 43), (17, 46, 52), (17, 55, 61), (17, 29, 34)]
