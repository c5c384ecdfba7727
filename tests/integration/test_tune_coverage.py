"""Tuning never changes what a program computes (issue 35, point 5): where a tuned parameter
rounds a loop's extent down (`dim1 = (N - 2) / (B1 * s)`), a configuration computes a share of
the serial program's iteration space (tuning/coverage.py). tune ranks by time per point
computed, marks a configuration that leaves points out with its share, and never puts one first
(nor in `compile it`, nor in the hover) where a configuration computing every point exists.
The share is checked against the serial C itself: the elements it writes at each configuration."""
import math
import shutil

import pytest

from conftest import SAMPLES
from parakern import search
from parakern.commands import cli
from parakern.pipeline import analyze
from parakern.tuning import coverage
from unit.test_tune_coverage import GUARDED, H100, JACOBI2D, POINTS, _fraction, _result, _serial_points


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not on PATH")
@pytest.mark.parametrize("function, text, data, tuned", POINTS)
def test_the_share_is_what_the_serial_c_writes(tmp_path, function, text, data, tuned):
    """The elements the serial C writes at the configuration, over those it writes with every
    tuned parameter at 1 (no rounding), is the share tune computes from the loops."""
    result = _result(text)
    got = _fraction(result, {**data, **tuned})
    written = _serial_points(tmp_path, text, function, {**data, **tuned})
    every = _serial_points(tmp_path, text, function, {**data, **{n: 1 for n in tuned}})
    assert math.isclose(got, min(1.0, written / every), rel_tol=1e-12), (got, written, every)


def test_guarded_programs_and_the_samples_that_assert_divisibility_are_complete_everywhere():
    for text in (GUARDED,):
        result = _result(text)
        t = search.tune(result, {"n": 1000}, H100)
        assert t.configurations and not [c for c in t.configurations if c.partial]
    for name, data in (("matmul", {"n": 1024}), ("transpose", {"N": 1024}), ("stencil2d", {"N": 1000})):
        path = SAMPLES / f"{name}.c"
        (result,) = [r for r in analyze(path.read_text(), str(path)).results if r.tree is not None]
        t = search.tune(result, data, H100)
        assert t.configurations and not [c for c in t.configurations if c.partial], name


# ------------------------------------------------------------------ tune's ranking
def test_tune_never_recommends_a_configuration_that_leaves_points_out_where_one_computes_all():
    result = _result(JACOBI2D)
    t = search.tune(result, {"N": 4096}, H100)
    pick = t.pick
    v = dict(pick.values)   # the pick was B0=32, B1=32, s=64: 2048 of the 4094 columns
    assert 4094 % v["B0"] == 0 and 4094 % (v["B1"] * v["s"]) == 0, v
    assert not pick.partial
    # computing every point is dividing N - 2 = 2 * 2047 in both dimensions
    for c in t.configurations:
        v = dict(c.values)
        assert (not c.partial) == (4094 % v["B0"] == 0 and 4094 % (v["B1"] * v["s"]) == 0), v
    assert dict(pick.values) != {"B0": 32, "B1": 32, "s": 64}
    # the rest by time per point computed, each partial one with its share
    rest = t.configurations[1:]
    assert [c.per_point for c in rest] == sorted(c.per_point for c in rest)
    assert any(c.partial for c in rest[:5])
    for c in t.configurations:
        assert c.per_point == c.prediction.ranked / c.covered


def test_where_no_candidate_computes_every_point_the_pick_says_how_much_it_computes(capsys):
    text = JACOBI2D.replace("    int dim0", "    assert(B0 >= 4 && B1 * s >= 4);\n    int dim0").replace(
        '#include "metafork.h"', '#include <assert.h>\n#include "metafork.h"')
    result = _result(text)
    t = search.tune(result, {"N": 4096}, H100)
    assert t.pick is not None and all(c.partial for c in t.configurations)
    assert t.pick.per_point == min(c.per_point for c in t.configurations)
    from parakern.lsp.summarize import tune_info
    info = tune_info(result, "h100", {"N": 4096})
    assert f"computes {coverage.percent(t.pick.covered)} of the serial program's iterations" in info.configuration


def test_cli_marks_partial_configurations_and_compiles_the_complete_one(tmp_path, capsys):
    path = tmp_path / "jacobi2d.c"
    path.write_text(JACOBI2D)
    assert cli.main(["tune", str(path), "--profile", "h100", "--data", "N=4096", "--top", "6"]) == 0
    out = capsys.readouterr().out.splitlines()
    header = next(line for line in out if line.strip().startswith("rank"))
    at = header.index("computes")
    rows = [line for line in out if line.strip()[:1].isdigit()]
    cells = [r[at:].split()[0] for r in rows]
    assert cells[0] == "all" and any(c.endswith("%") for c in cells[1:])
    t = search.tune(_result(JACOBI2D), {"N": 4096}, H100)
    marked = {tuple(int(x) for x in r.split()[2:5]): cell for r, cell in zip(rows, cells)}
    for c in t.configurations[:6]:
        assert marked[tuple(v for _, v in c.values)] == (coverage.percent(c.covered) if c.partial else "all")
    hint = next(line for line in out if "compile it" in line)
    fix = dict(x.split("=") for x in hint.rsplit(" ", 1)[1].split(","))
    assert 4094 % int(fix["B0"]) == 0 and 4094 % (int(fix["B1"]) * int(fix["s"])) == 0, fix
    assert hint.endswith("--fix " + ",".join(f"{n}={v}" for n, v in t.pick.values))
    assert any("Ranked by time per point computed" in line for line in out)
    assert cli.main(["tune", str(path), "--profile", "h100", "--data", "N=4096", "--json"]) == 0
    import json
    doc = json.loads(capsys.readouterr().out)
    configs = doc["schedules"][0]["configurations"]
    assert configs[0]["covered"] == 1.0 and any(c["covered"] < 1.0 for c in configs)


def test_the_hover_recommends_a_configuration_that_computes_every_point():
    from parakern.lsp.summarize import tune_info
    result = _result(JACOBI2D)
    info = tune_info(result, "h100", {"N": 4096})
    t = search.tune(result, {"N": 4096}, H100)
    head, faster = info.configuration.split(" — faster ones leave points out (")
    assert head.startswith("case ") and "computes" not in head
    fastest = min(t.configurations, key=lambda c: (c.prediction.ranked, c.order))
    assert faster == (f"case {fastest.case}: " + " ".join(f"{n}={v}" for n, v in fastest.values)
                      + f" computes {fastest.computes}: {t.shortfall(result.schedule, fastest)})")
    values = dict(v.split("=") for v in head.split(": ", 1)[1].split() if "=" in v)
    assert 4094 % int(values["B0"]) == 0 and 4094 % (int(values["B1"]) * int(values["s"])) == 0, values
    assert values == {n: str(v) for n, v in t.pick.values}
    assert not t.pick.partial
