"""`<function>_<index>_dispatch_tuned` on the CPU emulation: the first call with some parameter
values runs every case that fits once untimed and 1 to TIMED_RUNS times timed, and then the
fastest once, each run from the arrays as
the call received them (in-place updates such as matmul's c += a * b, Jacobi's sweeps and
polydiv's guarded writes still match the serial C run); later calls with those values launch
one kernel; no device memory is left allocated; without memory for the copies it is the tree's
dispatcher."""
import shutil

import pytest

from conftest import SAMPLES
from integration.test_dispatch_auto import CASES, DEVICE, EMULATED
from parakern import search
from parakern.codegen.tree_dispatcher import dispatcher_arguments, dispatcher_name, forwarded, select_name
from parakern.codegen.tuned import ENOUGH_MS, TIMED_RUNS, copied_arrays, keyed_parameters, tuned_name
from parakern.pipeline import analyze
from parakern.verify.core import Session

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not on PATH")
# idempotent schedules (what they write does not depend on what it held): called twice, the
# second call must launch the remembered case alone
TWICE = {"matadd", "transpose", "stencil2d", "polybench/conv2d"}


def _shim(result, twice: bool, limit: int) -> str:
    s = result.schedule
    args = forwarded(s)
    key = ", ".join(["(long long)parakern_cpu::device_number"] + [f"(long long){p.name}" for p in keyed_parameters(s)])
    shim = f"parakern_tuned_shim_{s.function}_{s.index}"
    measured = copied_arrays(s) is not None    # else the tree's dispatcher: one launch
    probes = " + ".join(f"({select_name(s)}(true, {k}, {', '.join(args)}) > 0)"
                        for k in range(1, len(result.tree.cases) + 1))

    def call(fresh: str) -> list:
        return [
            "    {",
            "        const long before = parakern_cpu::launches;",
            f"        const int got = {tuned_name(s)}({', '.join(args)});",
            "        const long launched = parakern_cpu::launches - before;",
            f"        const bool measures = {fresh} && {int(measured)};",
            f"        const long least = measures ? 2 * fits + 1 : 1, most = measures ? {1 + TIMED_RUNS} * fits + 1 : 1;",
            "        if (got > 0 && parakern_cpu::malloc_limit == (size_t)-1 && (launched < least || launched > most)) {",
            "            parakern_cpu::last_message = \"dispatch_tuned launched \" + std::to_string(launched)"
            " + \" kernels, not \" + std::to_string(least) + \" to \" + std::to_string(most);",
            "            return PARAKERN_CUDA_ERROR;",
            "        }",
            "        if (parakern_cpu::mallocs != 0) {",
            "            parakern_cpu::last_message = \"dispatch_tuned left device memory allocated\";",
            "            return PARAKERN_CUDA_ERROR;",
            "        }",
            "        status = got;",
            "    }"]
    return "\n".join([
        f"static int {shim}({', '.join(dispatcher_arguments(s))})",
        "{",
        f"    parakern_cpu::malloc_limit = {limit};",
        "    static std::set<std::vector<long long>> seen;",
        f"    const bool fresh = seen.insert(std::vector<long long>{{{key}}}).second;",
        f"    const int fits = {probes};",
        "    int status = 0;",
        *call("fresh"),
        *(call("false") if twice else []),
        "    return status;",
        "}",
        f"#define {dispatcher_name(s)} {shim}"])


def _transform(cu: str, results, twice: bool, limit: int) -> str:
    return cu + "\n#include <set>\n#include <string>\n#include <vector>\n" + \
        "\n".join(_shim(r, twice, limit) for r in results) + "\n"


def _results(name: str):
    path = SAMPLES / f"{name}.c"
    text = path.read_text()
    return path, text, [r for r in analyze(text, str(path)).results if r.tree is not None and r.tree.cases]


def _run(name: str, limit: str = "(size_t)-1") -> list:
    path, text, results = _results(name)
    outcomes = []
    transform = lambda cu: _transform(cu, results, name in TWICE, limit)  # noqa: E731
    with Session(text, str(path), transform_cu=transform) as session:
        assert not session.problem, session.problem
        for result in results:
            s = result.schedule
            data = {k: v for k, v in CASES[name].items() if k in {p.name for p in s.params}}
            fixed = {**data, **{p.name: 0 for p in s.params if p.name in s.host_loops}}
            pick = search.tune(result, fixed, DEVICE).pick      # a configuration every device limit allows
            assert pick is not None, f"{s.id}: nothing feasible at {data}"
            values = {**data, **dict(pick.values)}
            outcome = session.run(s.id, values, EMULATED)
            assert outcome is not None, f"{s.id}: the schedule was never reached"
            outcomes.append((s.id, values, outcome, copied_arrays(s) is not None))
    return outcomes


def test_a_pointer_without_its_size_leaves_the_choice_to_the_tree():
    from parakern.codegen.emit import emit
    text = """void scale(int n, int B, float *x)
{
    meta_schedule {
        meta_for (int b = 0; b < n / B; b++)
            meta_for (int t = 0; t < B; t++)
                x[b * B + t] = 2.0f * x[b * B + t];
    }
}
"""
    code = emit(analyze(text, "scale.c")).schedules[0]
    assert "is not visible (a pointer)" in code.tuned
    assert "return scale_0_dispatch(n, B, x);" in code.tuned and "cudaMalloc" not in code.tuned


def _scripted_shim(result) -> str:
    """dispatch_tuned with scripted event times: the first case that fits times 1 ms, then
    ENOUGH_MS - 1 (enough); every later run ENOUGH_MS / TIMED_RUNS, more than 1 ms. Keeping the fastest run picks the first case;
    keeping the last run would pick the second."""
    s = result.schedule
    args = forwarded(s)
    shim = f"parakern_scripted_shim_{s.function}_{s.index}"
    cases = len(result.tree.cases)
    return "\n".join([
        "static int parakern_script_calls = 0;",
        "static float parakern_scripted(float) {",
        f"    const float script[] = {{0.5f, 1.0f, {ENOUGH_MS - 1}.0f}};   /* untimed, then the first case's timed runs */",
        "    const int i = parakern_script_calls++;",
        f"    return i < 3 ? script[i] : (i - 3) % {1 + TIMED_RUNS} == 0 ? 0.5f   /* each later case: 1 untimed, */",
        f"        : {ENOUGH_MS / TIMED_RUNS}f;                                   /* then TIMED_RUNS timed */",
        "}",
        f"static int {shim}({', '.join(dispatcher_arguments(s))})",
        "{",
        "    int first = 0, fits = 0;",
        f"    for (int k = {cases}; k >= 1; k--)",
        f"        if ({select_name(s)}(true, k, {', '.join(args)}) > 0) {{ first = k; fits++; }}",
        "    if (fits < 2) { parakern_cpu::last_message = \"needs two cases that fit\"; return PARAKERN_CUDA_ERROR; }",
        "    parakern_cpu::elapsed_hook = parakern_scripted;",
        "    const long before = parakern_cpu::launches;",
        f"    const int got = {tuned_name(s)}({', '.join(args)});",
        "    parakern_cpu::elapsed_hook = nullptr;",
        f"    const long expected = 3 + {1 + TIMED_RUNS} * (fits - 1) + 1;",
        "    if (got != first || parakern_cpu::launches - before != expected) {",
        "        parakern_cpu::last_message = \"dispatch_tuned chose case \" + std::to_string(got) + \" in \""
        " + std::to_string(parakern_cpu::launches - before) + \" launches, not case \" + std::to_string(first)"
        " + \" in \" + std::to_string(expected);",
        "        return PARAKERN_CUDA_ERROR;",
        "    }",
        "    return got;",
        "}",
        f"#define {dispatcher_name(s)} {shim}"])

