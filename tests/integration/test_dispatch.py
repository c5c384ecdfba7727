"""The one dispatch rule: the generated C dispatchers, run on the CPU emulation, and the Python
rule (parakern.dispatch.choose) pick the same case, with the same launch, on many random
devices (limits, and the SMs and speeds of a few GPUs), compiled register counts and parameter
points: the default dispatcher (the time model's fastest case that fits) and the tree's (both
passes); the launch limits."""
import functools
import random
import shutil
import subprocess

import pytest
import sympy

from conftest import SAMPLES
from parakern import dispatch
from parakern.analysis.facts import check_facts, substitutions
from parakern.codegen import dispatcher_name, emit_file, kernel_name
from parakern.codegen.tree_dispatcher import forwarded, is_array, tree_name
from parakern.machine.devices import get_profile
from parakern.pipeline import analyze
from parakern.tuning.space import block_parameters
from parakern.verify.build import HEADER
from parakern.verify.points import device, profile_arguments

GXX = shutil.which("g++")
LINES = 150            # (device, registers, point) lines per sample
BASES = ("h100", "t4", "a100")   # the SMs, per-SM limits and speeds of the emulated devices

# Only the choice is under test: the launch is recorded, not run (the arrays are null).
RECORDER = r"""
#include <cstdio>
#undef PARAKERN_LAUNCH
static dim3 launched_grid, launched_block;
static size_t launched_shared;
#define PARAKERN_LAUNCH(kernel, grid, block, shared, ...) \
    (launched_grid = dim3(grid), launched_block = dim3(block), launched_shared = (size_t)(shared), (void)0)
"""


@functools.lru_cache(maxsize=None)
def _analysis(name: str):
    text = (SAMPLES / f"{name.removesuffix('_cached')}.c").read_text()
    if name.endswith("_cached"):   # tiles in shared memory, some above the 48 KiB default
        text = text.replace("meta_schedule {", "meta_schedule cache(a, b, c) {")
    return analyze(text, f"samples/{name}.c")


def _schedules(name: str) -> list:
    return [r for r in _analysis(name).results if r.tree is not None and r.tree.cases]


def _main(results) -> str:
    """Reads `schedule base regsPerBlock sharedMemPerBlockOptin maxThreadsPerBlock numRegs... params...`
    lines; prints per line, for the default dispatcher and then the tree's, its return value and
    the launch it made."""
    profiles = [", ".join(map(str, profile_arguments(get_profile(key)))) for key in BASES]
    lines = ["int main() {", "    int which, base;", "    while (scanf(\"%d %d\", &which, &base) == 2) {",
             "        long long rpb, optin, tmax;",
             "        if (scanf(\"%lld %lld %lld\", &rpb, &optin, &tmax) != 3) return 1;"]
    lines += [f"        if (base == {i}) parakern_cpu_set_profile({args});" for i, args in enumerate(profiles)]
    lines += ["        parakern_cpu_set_device((int)rpb, (size_t)optin, (int)tmax);",
              "        int r = -3, r_tree = -3;"]
    for i, result in enumerate(results):
        s = result.schedule
        lines.append(f"        if (which == {i}) {{")
        for k in range(1, len(result.tree.cases) + 1):
            lines += ["            { int regs; if (scanf(\"%d\", &regs) != 1) return 1;",
                      f"              parakern_cpu_set_registers((const void *){kernel_name(s, k)}, regs); }}"]
        for p in s.params:
            floating = p.ctype in ("float", "double")
            lines.append(f"            {'double' if floating else 'long long'} v_{p.name};"
                         f" if (scanf(\"{'%lf' if floating else '%lld'}\", &v_{p.name}) != 1) return 1;")
        args = forwarded(s, lambda x: "nullptr" if is_array(x) else f"({x.ctype})v_{x.name}")
        lines += ["            launched_grid = launched_block = dim3(0, 0, 0); launched_shared = 0;",
                  f"            r = {dispatcher_name(s)}({', '.join(args)});",
                  "            printf(\"%d %u %u %u %u %u %u %zu \", r, launched_grid.x, launched_grid.y, launched_grid.z,",
                  "                   launched_block.x, launched_block.y, launched_block.z, launched_shared);",
                  "            launched_grid = launched_block = dim3(0, 0, 0); launched_shared = 0;",
                  f"            r_tree = {tree_name(s)}({', '.join(args)});", "        }"]
    lines += ["        printf(\"%d %u %u %u %u %u %u %zu\\n\", r_tree, launched_grid.x, launched_grid.y, launched_grid.z,",
              "               launched_block.x, launched_block.y, launched_block.z, launched_shared);",
              "    }", "}"]
    return "\n".join(lines) + "\n"


def _value(rng: random.Random, block: bool) -> int:
    """Mostly powers of two (the facts ask for divisibility), sometimes anything; sizes large
    enough to cross gridDim.y's 65535, block sizes beyond maxThreadsPerBlock."""
    if block:
        choices = [1 << rng.randint(0, 6), rng.randint(1, 40), rng.choice([512, 1024, 2048])]
    else:
        choices = [1 << rng.randint(0, 18), rng.randint(1, 3000), rng.randint(60000, 300000)]
    return rng.choices(choices, weights=(6, 2, 1))[0]


def _point(rng: random.Random, result) -> "dict | None":
    s = result.schedule
    blocks = block_parameters(s)
    for _ in range(2000):
        values = {p.name: (rng.choice([0.5, 2.0]) if p.ctype in ("float", "double")
                           else _value(rng, p.name in blocks)) for p in s.params}
        ints = {n: v for n, v in values.items() if isinstance(v, int)}
        if not check_facts(s, substitutions(s, ints, as_run=True)):   # the facts keep C's division that of sympy
            return values
    return None


def _machine(rng: random.Random, result, values: dict) -> tuple:
    """(regsPerBlock, sharedMemPerBlockOptin, maxThreadsPerBlock, numRegs per case): R per
    thread near the tree's thresholds, compiled counts near the IR's, some that do not fit (some
    above the 255 a thread can address: no GPU reports them, but they show R's cap)."""
    tree = result.tree
    launch = dispatch.case_rules(tree)[0].launch
    threads = max(1, int(sympy.sympify(launch.threads).xreplace(substitutions(result.schedule, {
        n: v for n, v in values.items() if isinstance(v, int)}))))
    counted = [int(case.counter("registers")) for case in tree.cases]   # the thresholds on R
    r = rng.choice([rng.choice(counted) + rng.randint(-3, 2), rng.randint(8, 64), 255, rng.randint(1, 255)])
    rpb = rng.choice([65536, 32768, r * threads, r * threads + rng.randint(0, threads), rng.randint(1, 65536)])
    optin = rng.choice([0, 48 * 1024, 99 * 1024, 227 * 1024, rng.randint(0, 1 << 18), rng.randint(0, 4096)])
    tmax = rng.choice([1024, 1024, rng.randint(1, 1024), 64])
    regs = [rng.choice([ir, ir, max(1, ir + rng.randint(-10, 16)), rng.randint(1, ir), rng.randint(1, 300)])
            for ir in counted]
    return max(1, rpb), optin, tmax, regs


@pytest.mark.skipif(GXX is None, reason="g++ is not on PATH")
@pytest.mark.parametrize("name", ["saxpy", "matadd", "jacobi1d", "matmul", "matmul_cached", "transpose",
                                  "polydiv", "stencil2d", "matvec"])
def test_c_dispatcher_and_python_rule_agree(tmp_path, name):
    results = _schedules(name)
    assert results
    source = tmp_path / "dispatch.cpp"
    source.write_text(RECORDER + emit_file(_analysis(name)) + _main(results))
    build = subprocess.run([GXX, "-std=c++17", "-O0", "-w", "-include", str(HEADER), str(source), "-o",
                            str(tmp_path / "dispatch"), "-pthread"], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[:3000]

    rng = random.Random(f"dispatch:{name}")
    bases = random.Random(f"bases:{name}")   # apart: the points and devices are those the tree's rule was tested on
    lines, expected = [], []
    for _ in range(LINES):
        which = rng.randrange(len(results))
        result = results[which]
        values = _point(rng, result)
        assert values is not None, "no point satisfies the facts"
        rpb, optin, tmax, regs = _machine(rng, result, values)
        base = bases.randrange(len(BASES))
        ints = {n: v for n, v in values.items() if isinstance(v, int)}
        choice = dispatch.choose(result.tree, device(rpb, optin, tmax, get_profile(BASES[base])), ints, regs)
        lines.append(" ".join(map(str, [which, base, rpb, optin, tmax, *regs, *values.values()])))
        expected.append((lines[-1], choice))
    run = subprocess.run([str(tmp_path / "dispatch")], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[:3000]
    out = run.stdout.splitlines()
    assert len(out) == len(expected)
    passes, others = set(), 0
    for (line, choice), got in zip(expected, out):
        fields = [int(x) for x in got.split()]
        for case, launched, what in ((choice.case, fields[:8], "default"), (choice.tree, fields[8:], "tree")):
            assert launched[0] == (case or -1), f"{name}: {line}: {what}: C {launched[0]}, Python {choice}"
            if case is not None:
                sizes = choice.launches[case - 1]
                assert launched[1:] == [*sizes.grid, *sizes.block, sizes.shared_bytes], f"{name}: {line}: {what}"
        passes |= {choice.by, choice.tree_by}
        others += choice.case != choice.tree
    # the lines reach both outcomes, both rules, and the second pass where the tree has one
    assert {"", dispatch.FASTEST, dispatch.FIRST_PASS} <= passes, passes
    if len(dispatch.passes(results[0].tree)) > 1:
        assert dispatch.SECOND_PASS in passes, passes
    if len(results[0].tree.cases) > 1:   # the model's choice is not the tree's everywhere
        assert others > 0


ALL_SAMPLES = sorted(str(p.relative_to(SAMPLES))[:-2] for p in SAMPLES.rglob("*.c") if p.parent.name != "wrong")


@pytest.mark.parametrize("name", ALL_SAMPLES)
def test_the_dispatchers_take_their_arguments_in_the_c_functions_order(name):
    """saxpy(n, B, alpha, x, y) had saxpy_0_dispatch(n, B, alpha, y, x): the arrays in the order
    the body first used them. A call written as the C function's compiled, and was wrong."""
    from parakern.codegen.tree_dispatcher import dispatcher_arguments, host_arguments
    from parakern.verify.signature import signature
    text = (SAMPLES / f"{name}.c").read_text()
    for r in analyze(text, f"{name}.c").results:
        s = r.schedule
        declared = [a.name for a in signature(text, f"{name}.c", s.function).arguments]
        names = [x.name for x in host_arguments(s)]
        of_the_function = [n for n in names if n in declared]
        assert of_the_function == [n for n in declared if n in names]
        assert names[:len(of_the_function)] == of_the_function   # what the body declares comes after
        assert [d.rsplit(" ", 1)[-1].lstrip("*") for d in dispatcher_arguments(s)] == names


C_HOST = r"""
#include <stdio.h>
/* copied from the emitted file's dispatchers section, as a C programmer's header would */
int saxpy_0_dispatch(int n, int B, float alpha, const float *x, float *y);
void saxpy(int n, int B, float alpha, float x[n], float y[n]);

int main(void)
{
    enum { N = 1000 };
    static float x[N], y[N], z[N];
    for (int i = 0; i < N; i++) { x[i] = (float)i; y[i] = z[i] = (float)(3 * i % 17); }
    int status = saxpy_0_dispatch(N, 100, 2.0f, x, y);   /* the C function's order */
    saxpy(N, 100, 2.0f, x, z);
    int wrong = 0;
    for (int i = 0; i < N; i++) wrong += y[i] != z[i];
    printf("%d %d\n", status, wrong);
    return 0;
}
"""


@pytest.mark.skipif(GXX is None or shutil.which("gcc") is None, reason="gcc and g++ are not on PATH")
def test_a_c_host_calls_the_dispatcher_as_it_calls_the_function(tmp_path):
    """A host compiled by gcc found no saxpy_0_dispatch (the dispatchers had C++ names), and the
    C function's order of arguments gave 991 wrong elements of 1000. On the CPU emulation, where
    device memory is host memory."""
    assert _c_host(tmp_path, "saxpy", C_HOST) == ["1", "0"]


def _c_host(tmp_path, sample: str, main: str) -> list:
    """What a C main (gcc) prints, linked with the sample's serial C and its emitted kernels
    compiled for the CPU emulation."""
    text = (SAMPLES / f"{sample}.c").read_text()
    (tmp_path / "kernels.cu").write_text(emit_file(analyze(text, f"{sample}.c")))
    (tmp_path / "serial.c").write_text(text)
    (tmp_path / "main.c").write_text(main)
    (tmp_path / "metafork.h").write_text((SAMPLES / "metafork.h").read_text())
    steps = [[GXX, "-std=c++17", "-w", "-include", str(HEADER), "-x", "c++", "-c", "kernels.cu", "-o", "kernels.o"],
             ["gcc", "-std=c99", "-Wall", "-Werror", "-I.", "-c", "serial.c", "-o", "serial.o"],
             ["gcc", "-std=c99", "-Wall", "-Werror", "-c", "main.c", "-o", "main.o"],
             [GXX, "main.o", "serial.o", "kernels.o", "-pthread", "-o", "main"]]
    for step in steps:
        done = subprocess.run(step, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (step, done.stderr[-2000:])
    run = subprocess.run([str(tmp_path / "main")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return run.stdout.split()


FACTS_HOST = r"""
#include <stdio.h>
int matmul_0_dispatch(int n, int B0, int ub1, int s, const float *a, const float *b, float *c);
typedef struct matmul_0_auto matmul_0_auto;
struct matmul_0_auto { int status; long long B0, ub1, s; double predicted_seconds, covered; };
matmul_0_auto matmul_0_dispatch_auto(int n, const float *a, const float *b, float *c);

int main(void)
{
    static float a[48 * 48], b[48 * 48], c[48 * 48];
    for (int i = 0; i < 48 * 48; i++) { a[i] = b[i] = 1.0f; c[i] = -7.0f; }
    printf("%d ", matmul_0_dispatch(48, 32, 16, 1, a, b, c));   /* n % B0 != 0 */
    printf("%d ", matmul_0_dispatch(48, 0, 16, 1, a, b, c));    /* B0 = 0: a division by zero */
    printf("%d ", matmul_0_dispatch(0, 16, 16, 1, a, b, c));    /* n = 0: nothing to do */
    printf("%d ", matmul_0_dispatch_auto(0, a, b, c).status);
    int untouched = 1;
    for (int i = 0; i < 48 * 48; i++) untouched &= c[i] == -7.0f;
    printf("%d ", untouched);
    printf("%d\n", matmul_0_dispatch(48, 16, 16, 1, a, b, c) > 0 && c[0] == 41.0f);   /* c += a b */
    return 0;
}
"""


@pytest.mark.skipif(GXX is None or shutil.which("gcc") is None, reason="gcc and g++ are not on PATH")
def test_the_dispatchers_refuse_values_that_fail_an_assertion_and_run_nothing_for_an_empty_loop(tmp_path):
    """matmul_0_dispatch(48, 32, ...) broke `assert(n % B0 == 0)` and launched: every element
    wrong, status 1. B0 = 0 killed the process (SIGFPE); n = 0 said PARAKERN_NO_CASE_FITS, as
    if the device were too small."""
    invalid, nothing = "-3", "0"
    assert _c_host(tmp_path, "matmul", FACTS_HOST) == [invalid, invalid, nothing, nothing, "1", "1"]
