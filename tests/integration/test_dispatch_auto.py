"""`<function>_<index>_dispatch_auto` on the CPU emulation: on an emulated H100 (SMs, clocks,
bus width, per-SM limits: parakern_cpu_set_profile) it picks the configuration `parakern tune`
picks (the same candidates, rule and model, in C), launches it, and the arrays match the serial
C run with those parameters."""
import shutil

import pytest

from conftest import SAMPLES
from parakern import search
from parakern.codegen.auto import auto_name, choice_type
from parakern.codegen.tree_dispatcher import dispatcher_arguments, dispatcher_name, host_arguments
from parakern.machine.devices import get_profile, machine_values
from parakern.tuning import space, time_model
from parakern.verify.core import Session
from parakern.verify.points import device, profile_arguments

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not on PATH")

# The emulated GPU: an H100 SXM5, its limits, SMs and speeds (verify sets them at every point:
# points.profile_arguments); DEVICE is what the C reads of it.
H100 = get_profile("h100")
MACHINE = machine_values(H100)
EMULATED = device(MACHINE["R_B"], MACHINE["Z"], MACHINE["T"])
DEVICE = time_model.modelled(EMULATED)
PROFILE = ", ".join(map(str, profile_arguments(EMULATED)))

# Data sizes small enough for the emulation, uneven where the facts allow.
CASES = {
    "saxpy": {"n": 1000}, "matadd": {"N": 96}, "jacobi1d": {"N": 1002}, "matmul": {"n": 64},
    "transpose": {"N": 64}, "polydiv": {"N": 40, "M": 30, "P": 97}, "stencil2d": {"N": 70},
    "matvec": {"m": 300, "n": 40},
    "polybench/heat3d": {"n": 18}, "polybench/covariance": {"m": 40, "n": 30},
    "polybench/conv2d": {"h": 40, "w": 50}, "polybench/gemm": {"ni": 40, "nj": 50, "nk": 20},
    "polybench/trmv": {"n": 70, "m": 30}, "polybench/redblack": {"n": 34},
}


def _shim(result) -> str:
    s = result.schedule
    names, _ = space.space(s, {})
    untuned = [x.name for x in host_arguments(s) if x.name not in names]
    differs = " || ".join(f"r.{n} != {n}" for n in names) or "0"
    shim = f"parakern_auto_shim_{s.function}_{s.index}"
    return "\n".join([
        f"static int {shim}({', '.join(dispatcher_arguments(s))})",
        "{",
        f"    {choice_type(s)} r = {auto_name(s)}({', '.join(untuned)});",
        f"    if (r.status > 0 && ({differs})) {{",
        "        parakern_cpu::last_message = \"dispatch_auto chose another configuration:\";",
        *[f"        parakern_cpu::last_message += \" {n}=\" + std::to_string(r.{n});" for n in names],
        "        return PARAKERN_CUDA_ERROR;",
        "    }",
        "    return r.status;",
        "}",
        f"#define {dispatcher_name(s)} {shim}"])


def _transform(cu: str, results) -> str:
    return cu + "\n#include <string>\n" + "\n".join(_shim(r) for r in results) + "\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_dispatch_auto_picks_what_tune_picks_and_matches_serial_c(name):
    path = SAMPLES / f"{name}.c"
    text = path.read_text()
    from parakern.pipeline import analyze
    results = [r for r in analyze(text, str(path)).results if r.tree is not None and r.tree.cases]
    with Session(text, str(path), transform_cu=lambda cu: _transform(cu, results)) as session:
        assert not session.problem, session.problem
        for result in results:
            s = result.schedule
            data = {k: v for k, v in CASES[name].items() if k in {p.name for p in s.params}}
            fixed = {**data, **{p.name: 0 for p in s.params if p.name in s.host_loops}}
            tuning = search.tune(result, fixed, DEVICE)
            pick = tuning.pick
            assert pick is not None, f"{s.id}: nothing feasible at {data}"
            values = {**data, **dict(pick.values)}
            outcome = session.run(s.id, values, EMULATED, case=pick.case)
            assert outcome is not None, f"{s.id}: the schedule was never reached"
            assert not outcome.error, f"{s.id} at {values}: {outcome.error}"
            assert not outcome.mismatches and not outcome.guards, f"{s.id} at {values}: {outcome.mismatches}"
            assert outcome.chosen and all(c == pick.case for c in outcome.chosen), (s.id, outcome.chosen, pick.case)


LARGE = {"stencil2d": {"N": 46341}, "polybench/conv2d": {"h": 50000, "w": 50001}}


@pytest.mark.parametrize("name", sorted(LARGE))
def test_the_c_model_predicts_what_the_python_model_predicts_at_large_sizes(tmp_path, name):
    """C truncated each term of a sum of fractions (a staged tile's bytes over the block's rows:
    32830 for Python's 32832) and left a mean that is no integer unrounded (258.28 for 259):
    predictions differed by up to 0.3 %, enough to flip a near tie. Every configuration tune
    returns, its time_case<k> in C against Python's, launching nothing."""
    import math
    import subprocess

    from parakern.codegen import emit_file
    from parakern.pipeline import analyze
    from parakern.verify.build import CXXFLAGS, FMA_FLAGS, HEADER
    path = SAMPLES / f"{name}.c"
    analysis = analyze(path.read_text(), str(path))
    (tmp_path / "kernels.cu").write_text(emit_file(analysis))
    calls, expected, registers = [], [], []
    for r in analysis.results:
        s = r.schedule
        registers += [f"parakern_cpu_set_registers((const void *)&{s.function}_{s.index}_case{k}, "
                      f"{int(c.counter('registers'))});" for k, c in enumerate(r.tree.cases, 1)]
        data = {n: v for n, v in LARGE[name].items() if n in {p.name for p in s.params}}
        for c in search.tune(r, data, DEVICE).configurations:
            values = {**data, **dict(c.values)}
            calls.append(f'printf("%.17g\\n", {s.function}_{s.index}_time_case{c.case}(&d, '
                         f'{", ".join(str(values.get(p.name, 0)) for p in s.params)}));')
            expected.append(c.prediction.ranked)   # what time_case returns: the time, ties broken
    (tmp_path / "main.cpp").write_text("\n".join([
        '#include "kernels.cu"', "#include <stdio.h>", "int main() {",
        f"parakern_cpu_set_profile({PROFILE});",
        f"parakern_cpu_set_device({MACHINE['R_B']}, {MACHINE['Z']}, {MACHINE['T']}, 48 * 1024);", *registers,
        "int dv; cudaGetDevice(&dv); cudaDeviceProp prop; cudaGetDeviceProperties(&prop, dv);",
        "parakern_model_device d;", "if (!parakern_read_model_device(dv, prop, &d)) return 1;",
        *calls, "return 0; }"]))
    build = subprocess.run(["g++", *CXXFLAGS, *FMA_FLAGS, "-include", str(HEADER), "main.cpp", "-o", "main"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    got = [float(x) for x in subprocess.run(["./main"], cwd=tmp_path, capture_output=True, text=True,
                                            timeout=120).stdout.split()]
    assert len(got) == len(expected) > 100
    off = [(c, p) for c, p in zip(got, expected) if not math.isclose(c, p, rel_tol=1e-9)]
    assert not off, f"{len(off)} of {len(got)} differ, e.g. C {off[0][0]!r} Python {off[0][1]!r}"


# ------------------------------------------------------------------ the share of the iteration space

def _covered_shim(result, expected: float) -> str:
    """dispatch_auto's choice must carry the share Python computes for the pick, bit for bit."""
    s = result.schedule
    shim = f"parakern_covered_shim_{s.function}_{s.index}"
    untuned = [x.name for x in host_arguments(s) if x.name not in space.space(s, {})[0]]
    return "\n".join([
        f"static int {shim}({', '.join(dispatcher_arguments(s))})",
        "{",
        f"    {choice_type(s)} r = {auto_name(s)}({', '.join(untuned)});",
        f"    if (r.status > 0 && r.covered != {expected!r}) {{",
        "        parakern_cpu::last_message = \"dispatch_auto's share: \" + std::to_string(r.covered);",
        "        return PARAKERN_CUDA_ERROR;",
        "    }",
        "    return r.status;",
        "}",
        f"#undef {dispatcher_name(s)}",
        f"#define {dispatcher_name(s)} {shim}"])


# programs whose grid rounds a tuned parameter's division down (tests/unit/test_tune_coverage.py), at
# sizes where most candidates leave points out
ROUNDED = {"jacobi2d": ({"N": 70}, "JACOBI2D"), "shift": ({"n": 1001}, "SHIFT"),
           "mixed": ({"n": 40, "m": 100}, "MIXED")}


@pytest.mark.parametrize("name", sorted(ROUNDED))
def test_dispatch_auto_takes_a_configuration_that_computes_every_point(tmp_path, name):
    """Before, dispatch_auto ranked by time alone: at jacobi2d's N = 70 (68 interior columns) it
    launched blocks whose rounded-down grid left columns out, which the serial C at the caller's
    values computes. It picks what tune picks (every point computed, ranked by time per point),
    reports the share it computes, and the arrays match the serial C."""
    from unit import test_tune_coverage as programs
    data, attribute = ROUNDED[name]
    text = getattr(programs, attribute)
    path = tmp_path / f"{name}.c"
    path.write_text(text)
    from parakern.pipeline import analyze
    (result,) = [r for r in analyze(text, str(path)).results if r.tree is not None and r.tree.cases]
    tuning = search.tune(result, data, DEVICE)
    pick = tuning.pick
    assert not pick.partial and any(c.partial for c in tuning.configurations)
    transform = lambda cu: _transform(cu, [result]) + _covered_shim(result, pick.covered) + "\n"   # noqa: E731
    with Session(text, str(path), transform_cu=transform) as session:
        assert not session.problem, session.problem
        values = {**data, **dict(pick.values)}
        outcome = session.run(result.schedule.id, values, EMULATED, case=pick.case)
        assert outcome is not None and not outcome.error, outcome and outcome.error
        assert not outcome.mismatches and not outcome.guards, outcome.mismatches
        assert outcome.chosen and all(c == pick.case for c in outcome.chosen)


def test_the_c_share_is_the_python_share_at_every_configuration(tmp_path):
    """`<function>_<index>_coverage` in C against coverage.py for every configuration tune returns
    at sizes where the share ranges widely (launching nothing)."""
    import subprocess

    from parakern.codegen import emit_file
    from parakern.codegen.auto import coverage_name
    from parakern.pipeline import analyze
    from parakern.verify.build import CXXFLAGS, FMA_FLAGS, HEADER
    from unit import test_tune_coverage as programs
    calls, expected, sources = [], [], []
    for attribute, data in (("JACOBI2D", {"N": 4096}), ("SHIFT", {"n": 4097}), ("MIXED", {"n": 1000, "m": 999})):
        text = getattr(programs, attribute)
        analysis = analyze(text, f"{attribute.lower()}.c")
        sources.append(emit_file(analysis))
        (r,) = analysis.results
        s = r.schedule
        for c in search.tune(r, data, DEVICE).configurations:
            values = {**data, **dict(c.values)}
            calls.append(f'printf("%.17g\\n", {coverage_name(s)}('
                         f'{", ".join(str(values.get(p.name, 0)) for p in s.params)}));')
            expected.append(c.covered)
    for k, source in enumerate(sources):
        (tmp_path / f"kernels{k}.cu").write_text(source)
    (tmp_path / "main.cpp").write_text("\n".join(
        [f'#include "kernels{k}.cu"' for k in range(len(sources))]
        + ["#include <stdio.h>", "int main() {", *calls, "return 0; }"]))
    build = subprocess.run(["g++", *CXXFLAGS, *FMA_FLAGS, "-include", str(HEADER), "main.cpp", "-o", "main"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    got = [float(x) for x in subprocess.run(["./main"], cwd=tmp_path, capture_output=True, text=True,
                                            timeout=120).stdout.split()]
    assert len(got) == len(expected) > 100 and len(set(expected)) > 20
    assert got == expected
