"""parakern verify: Definition 2 (ii) by execution on the CPU emulation of CUDA.

Every sample: every case of its case tree chosen by the dispatcher on an emulated device
and matching the serial C. Broken kernels are caught; the dispatcher picks the case the
device limits call for; the emulation refuses launches a GPU would refuse.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from parakern.verify import HEADER, Session, device, text, verify_file
from parakern.verify.points import TREE

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "samples").glob("*.c"))
sys.path.insert(0, str(ROOT / "tests" / "lsp"))
from wire import alive, descendants  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None,
                                reason="parakern verify needs gcc and g++")


def kernel_body(cu: str, kernel: str) -> tuple[int, int]:
    """(start, end) of the text of a __global__ function in the .cu."""
    start = cu.index(f"void {kernel}(")
    end = cu.index("\n}\n", start) + 3
    return start, end


def mutate(cu: str, kernel: str, old: str, new: str) -> str:
    start, end = kernel_body(cu, kernel)
    body = cu[start:end]
    assert old in body, f"{old!r} not in {kernel}"
    return cu[:start] + body.replace(old, new, 1) + cu[end:]


# ------------------------------------------------------------------ every sample


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_sample_every_case_chosen_and_matching(path):
    result = verify_file(path, points=3)
    report = text(result)
    assert result.ok, report
    for schedule in result.schedules:
        assert schedule.cases, report
        for case in schedule.cases:
            assert case.points, report
            assert case.mismatches == 0, report
            assert case.chosen >= 1, report              # the dispatcher launched this case
            for point in case.points:
                assert point.expected == case.index      # the device was built to select it
                assert set(point.chosen) == {case.index}, report


# ------------------------------------------------------------------ broken kernels are caught


def test_missing_barrier_and_mislabelled_case_are_caught():
    """Case 1 of jacobi stages `a` in shared memory: without the barrier after the loads a
    thread reads poisoned shared memory. Case 3's launcher reports the wrong case number."""

    def break_it(cu: str) -> str:
        cu = mutate(cu, "jacobi1d_0_case1", "__syncthreads();", ";")
        assert "return cudaPeekAtLastError() == cudaSuccess ? 3 :" in cu  # the mutation must apply
        return cu.replace("return cudaPeekAtLastError() == cudaSuccess ? 3 :",
                          "return cudaPeekAtLastError() == cudaSuccess ? 2 :", 1)

    result = verify_file(ROOT / "samples" / "jacobi1d.c", points=3, transform_cu=break_it)
    assert not result.ok
    cases = {c.index: c for c in result.schedules[0].cases}
    assert cases[1].mismatches >= 1, text(result)
    first = next(p for p in cases[1].points if p.mismatches).mismatches[0]
    assert first["array"] == "a" and first["expected"] != first["got"]
    assert not cases[3].ok and cases[3].chosen == 0
    assert all(not p.right_case and set(p.chosen) == {2} for p in cases[3].points)
    assert cases[2].ok and set(cases) == {1, 2, 3}


def test_wrong_index_is_caught_in_that_case_only():
    def break_it(cu: str) -> str:
        return mutate(cu, "stencil2d_0_case2", "int j = bx * Bx + tx + 1;", "int j = bx * Bx + tx + 2;")

    result = verify_file(ROOT / "samples" / "stencil2d.c", points=3, transform_cu=break_it)
    cases = {c.index: c for c in result.schedules[0].cases}
    assert cases[2].mismatches >= 1 and not cases[2].ok
    assert cases[1].ok and set(cases) == {1, 2}
    assert "mismatch out[" in text(result)


def test_a_crashing_kernel_costs_its_points_only():
    def break_it(cu: str) -> str:
        return mutate(cu, "saxpy_0_case1", "{", "{ *(volatile int *)0 = 0;")

    result = verify_file(ROOT / "samples" / "saxpy.c", points=2, transform_cu=break_it)
    points = result.schedules[0].cases[0].points
    assert len(points) == 2 and not result.ok
    assert all("GPU version (emulated) crashed" in p.error for p in points)


# ------------------------------------------------------------------ the dispatcher's choice


@pytest.fixture(scope="module")
def jacobi():
    path = ROOT / "samples" / "jacobi1d.c"
    with Session(path.read_text(), str(path)) as session:
        yield session


@pytest.mark.parametrize("R_B, Z, T, case", [
    (65536, 4096, 64, 1),  # everything fits: staged, granularity kept
    (65536, 100, 64, 2),   # 8*B + 8 <= Z < 8*B*s + 8: granularity reduced
    (65536, 16, 64, 3),    # Z < 8*B + 8: no shared memory
    (2048, 4096, 64, 3),   # 2048 <= R_B < 3072: only case 3's 14 registers a thread fit
])
def test_dispatcher_picks_the_case_of_the_device(jacobi, R_B, Z, T, case):
    values = {"N": 50, "s": 4, "B": 4}          # 8*B*s + 8 = 136, 8*B + 8 = 40
    point = jacobi.run("jacobi1d:0", values, device(R_B, Z, T), rule=TREE)   # the tree's order
    assert point.expected == case
    assert point.chosen == (case,) * 3          # T = 3 time steps: three launches
    assert point.ok, (point.error, point.mismatches)


@pytest.mark.parametrize("R_B, T", [(1024, 64), (65536, 2)])
def test_dispatcher_says_when_no_case_fits(jacobi, R_B, T):
    point = jacobi.run("jacobi1d:0", {"N": 50, "s": 4, "B": 4}, device(R_B, 4096, T))
    assert point.expected == 0
    assert point.chosen == (-1,) * 3 and point.right_case
    assert "no case that fits" in point.error


# ------------------------------------------------------------------ the emulation itself

EMULATION_TEST = r"""
#include <stdio.h>
__global__ void reverse(float *a, int n)
{
    PARAKERN_DYNAMIC_SHARED(parakern_shared);
    float *s = (float *)parakern_shared;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) s[threadIdx.x] = a[i];
    __syncthreads();
    int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
    if (i < n && j < n) a[i] = s[blockDim.x - 1 - threadIdx.x];
}
__global__ void early_exit(int *count)
{
    if (threadIdx.x % 2) return;          /* exited threads leave the barrier */
    __syncthreads();
    count[threadIdx.x] = 1;
}
int main()
{
    float a[64];
    int count[64] = {0};
    for (int i = 0; i < 64; i++) a[i] = i;
    parakern_cpu_set_device(65536, 1024, 64, 512);
    PARAKERN_LAUNCH(reverse, 2, 32, 32 * sizeof(float), a, 64);
    printf("ok %d %g %g %g\n", cudaGetLastError(), a[0], a[31], a[32]);
    PARAKERN_LAUNCH(reverse, 1, 128, 0, a, 64);            /* 128 threads > maxThreadsPerBlock 64 */
    printf("threads %d\n", cudaGetLastError());
    PARAKERN_LAUNCH(reverse, 1, 32, 768, a, 64);            /* above sharedMemPerBlock, not raised */
    printf("shared %d\n", cudaGetLastError());
    printf("raise %d\n", cudaFuncSetAttribute(reverse, cudaFuncAttributeMaxDynamicSharedMemorySize, 768));
    PARAKERN_LAUNCH(reverse, 1, 32, 768, a, 64);
    printf("raised %d\n", cudaGetLastError());
    printf("optin %d\n", cudaFuncSetAttribute(reverse, cudaFuncAttributeMaxDynamicSharedMemorySize, 2048));
    cudaGetLastError();
    parakern_cpu_set_registers((const void *)reverse, 40);
    cudaFuncAttributes attr;
    cudaFuncGetAttributes(&attr, reverse);
    parakern_cpu_set_device(2048, 1024, 64);
    PARAKERN_LAUNCH(reverse, 1, 64, 0, a, 64);              /* 40 * 64 registers > 2048 */
    printf("registers %d %d\n", attr.numRegs, cudaGetLastError());
    PARAKERN_LAUNCH(early_exit, 1, 8, 0, count);
    printf("exit %d %d %d %d\n", cudaGetLastError(), count[0], count[1], count[6]);
    return 0;
}
"""


def test_emulation_runs_blocks_and_refuses_what_a_gpu_refuses(tmp_path):
    source = tmp_path / "emulation.cu"
    source.write_text(EMULATION_TEST)
    exe = tmp_path / "emulation"
    subprocess.run(["g++", "-std=c++17", "-O1", "-pthread", "-include", str(HEADER), "-x", "c++", str(source),
                    "-o", str(exe)], check=True, capture_output=True, text=True)
    lines = dict(line.split(" ", 1) for line in subprocess.run([str(exe)], capture_output=True, text=True,
                                                               check=True, timeout=60).stdout.splitlines())
    assert lines["ok"] == "0 31 0 63"                     # each block reversed through shared memory
    assert lines["threads"] == "9"                        # cudaErrorInvalidConfiguration
    assert lines["shared"] == "1"                         # cudaErrorInvalidValue
    assert lines["raise"] == "0" and lines["raised"] == "0"
    assert lines["optin"] == "1"                          # above sharedMemPerBlockOptin
    assert lines["registers"] == "40 701"                 # cudaErrorLaunchOutOfResources
    assert lines["exit"] == "0 1 0 1"


# ------------------------------------------------------------------ command line


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "parakern", "verify", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300)


def test_cli_json_and_exit_status():
    done = _cli("samples/saxpy.c", "--points", "2", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["ok"] and doc["schedules"][0]["cases"][0]["chosen"] == 2
    assert "1e-5" in doc["tolerance"]


def test_cli_usage_and_missing_tools(tmp_path):
    assert _cli("no/such/file.c").returncode == 2
    assert _cli("samples/saxpy.c", "--points", "0").returncode == 2
    env = dict(os.environ, PATH=str(tmp_path))                 # no gcc, no g++
    done = _cli("samples/saxpy.c", env=env)
    assert done.returncode == 3
    assert "gcc" in done.stderr and "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


def test_cli_reports_a_file_without_schedules(tmp_path):
    plain = tmp_path / "plain.c"
    plain.write_text("int add(int a, int b) { return a + b; }\n")
    done = _cli(str(plain))
    assert done.returncode == 1
    assert "nothing to verify" in done.stdout and "Traceback" not in done.stderr


def test_cli_says_where_the_rejected_schedule_is():
    """The front end's rejection with its position, as optimize prints it (before: the message alone)."""
    done = _cli("samples/wrong/write_param.c")
    assert done.returncode == 1
    assert "nothing to verify: samples/wrong/write_param.c:7:17: error: cannot assign to 'n' inside " \
           "meta_schedule" in done.stdout


def test_cli_build_dir_that_cannot_be_made_is_usage(tmp_path):
    taken = tmp_path / "file"
    taken.write_text("")
    done = _cli("samples/saxpy.c", "--build-dir", str(taken))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"parakern verify: --build-dir {taken} is a file: give a folder"


def test_assert_without_its_header_is_named_at_its_line(tmp_path):
    """An assert without <assert.h> compiled under -w, and the serial library then failed to
    load on the undefined symbol 'assert', at every point; gcc now says where and what to add."""
    text = (ROOT / "samples" / "matmul.c").read_text()
    assert "#include <assert.h>" in text
    source = _program(tmp_path, "no_header.c", text.replace("#include <assert.h>", ""))
    done = _cli(str(source))
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert "the serial C file failed to compile" in done.stdout
    line = next(k for k, t in enumerate(source.read_text().split("\n"), 1) if "assert(" in t)
    assert f"no_header.c:{line}:" in done.stdout and "#include <assert.h>" in done.stdout


@pytest.mark.parametrize("bounds", ["for (int k = rowptr[r]; k < rowptr[r + 1]; k++)",
                                    "int lo = rowptr[r], hi = rowptr[r + 1];\n            for (int k = lo; k < hi; k++)"],
                         ids=["direct", "locals"])
def test_a_sparse_matrix_vector_product_is_verified(tmp_path, bounds):
    """CSR: rowptr bounds the k loop and col subscripts x. Random inputs in [0, 100) crashed the
    serial C (SIGSEGV at every point); they now stay below the extents they index (rowptr:
    nnz, col: m). With the bounds in locals, dispatch_auto's C named `hi` and did not compile."""
    program = f"""#include "metafork.h"
void spmv(int m, int nnz, int B, int rowptr[m + 1], int col[nnz], float val[nnz], float x[m], float y[m])
{{
    meta_schedule {{
        meta_for (int i = 0; i < (m + B - 1) / B; i++)
            meta_for (int j = 0; j < B; j++) {{
                int r = i * B + j;
                if (r < m) {{
                    float acc = 0.0f;
                    {bounds}
                        acc += val[k] * x[col[k]];
                    y[r] = acc;
                }}
            }}
    }}
}}
"""
    source = _program(tmp_path, "spmv.c", program)
    result = verify_file(source, points=2)
    report = text(result)
    assert result.ok and all(c.points for s in result.schedules for c in s.cases), report


# ------------------------------------------------------------------ user names

HARNESS_NAMES = """
#include "metafork.h"

void names(int r, int prop, int device, int launched, int grid, int block, int threads, int attr, int attrs,
           int raised, int by_fit, int shared_bytes, int values, float e[r], float g[r], float pointers[r],
           float a_shared[r])
{
    int gr = (r + threads - 1) / threads;
    meta_schedule cache(e, g) {
        meta_for (int tid = 0; tid < gr; tid++)
            meta_for (int nthreads = 0; nthreads < threads; nthreads++) {
                int g0 = tid * threads + nthreads;
                int g1 = g0 + 1;
                if (g1 < r)
                    pointers[g0] = e[g0] + e[g1] * (float)(prop + device + launched + grid + block + attr + attrs
                                   + raised + by_fit + shared_bytes + values) + g[g0] + a_shared[g0];
            }
    }
}
"""


def _program(tmp_path, name: str, text: str):
    """`text` written as tmp_path/name beside the samples' metafork.h (its serial C includes it)."""
    (tmp_path / "metafork.h").write_text((ROOT / "samples" / "metafork.h").read_text())
    source = tmp_path / name
    source.write_text(text)
    return source


def test_names_of_the_harness_are_the_users_to_choose(tmp_path):
    """Every local the generated dispatcher, the verify wrapper and the bench hook declare
    (r, prop, device, launched, grid, block, threads, attr, attrs, raised, by_fit, shared_bytes,
    values, pointers) and those of the staging code (tid, nthreads, e, g, g0, g1, a_shared) are
    names a user may give parameters, arrays and loop variables."""
    source = _program(tmp_path, "names.c", HARNESS_NAMES)
    result = verify_file(source, points=2)
    report = text(result)
    assert result.ok and all(c.points for s in result.schedules for c in s.cases), report


FIXED_BLOCK = """
#include "metafork.h"
#define BS 256

void scale(int n, float x[n], float y[n])
{
    int blocks = (n + BS - 1) / BS;
    meta_schedule cache(x) {
        meta_for (int b = 0; b < blocks; b++)
            meta_for (int t = 0; t < BS; t++) {
                int i = b * BS + t;
                if (i + 1 < n)
                    y[i] = 0.5f * (x[i] + x[i + 1]);
            }
    }
}
"""


def test_blocks_of_hundreds_of_threads_are_verified(tmp_path):
    """A block fixed at 256 threads (#define BS 256) runs on the emulation (fibers, up to 1024
    threads per block), with several blocks and an uneven size."""
    source = _program(tmp_path, "scale.c", FIXED_BLOCK)
    result = verify_file(source, points=2)
    report = text(result)
    assert result.ok, report
    points = [p for s in result.schedules for c in s.cases for p in c.points]
    assert points and all(p.threads == 256 for p in points), report
    assert any(p.realistic and p.uneven for p in points), report
    assert "256 threads per block" in report


def stepped_tile() -> str:
    """samples/transpose.c with a 3 x 4 thread block fixed at compile time."""
    text = (ROOT / "samples" / "transpose.c").read_text()
    assert "int B0, int B1, " in text and '#include "metafork.h"\n' in text
    return text.replace("int B0, int B1, ", "").replace('#include "metafork.h"\n',
                                                        '#include "metafork.h"\n#define B0 3\n#define B1 4\n')


def test_stepped_copy_coordinates_carry_across_rows(tmp_path):
    """A tile of s elements per thread is copied with coordinates that step by nthreads's
    (analysis/staging.stepped): 12 threads over rows of 4*s elements of a and of 3 of c, so
    every step carries into the next row, and more than one row at a time; every case
    matches the serial C on the emulation."""
    from parakern.codegen.emit import emit
    from parakern.pipeline import analyze
    source = _program(tmp_path, "transpose3x4.c", stepped_tile())
    cu = emit(analyze(source.read_text(), str(source)), ()).text
    assert "e1 += de1; e0 += de0;" in cu and "if (e1 >= 3) { e1 -= 3; e0++; }" in cu
    result = verify_file(source, points=3)
    report = text(result)
    assert result.ok, report
    assert [c.index for c in result.schedules[0].cases if c.points and c.mismatches == 0]


def test_a_block_asserted_a_warp_wide_with_sizes_it_divides_is_verified(tmp_path):
    """`assert(Bx >= 32 && Bx * By <= 256 && (N - 2) % Bx == 0)`: sampling rarely meets the
    divisibility and z3's small bounds (blocks up to 16) exclude Bx >= 32, so the staged case
    had no point ("0 of 3 points"); the bounds now rise to the least Bx the facts allow."""
    from unit.test_points import STAGED
    source = _program(tmp_path, "st.c", STAGED)
    result = verify_file(source, points=3)
    report = text(result)
    assert result.ok, report
    cases = result.schedules[0].cases
    assert [len(c.points) for c in cases] == [3, 3] and all(c.chosen == 3 for c in cases), report
    assert "no parameter point within the bounds" not in report
    assert "N=34 Bx=32 By=4 (128 threads per block, uneven)" in report


def test_typedef_types_of_the_parameters_are_verified(tmp_path):
    """`typedef float real;` on the arrays and a scalar: verify refused the function ("a type
    the verifier cannot pass") that optimize, emit and tune accepted (bug hunt)."""
    source = _program(tmp_path, "td.c", """#include "metafork.h"
typedef float real;
typedef int count;
void scale(count n, int B, real alpha, real a[n], real b[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                b[i * B + j] = alpha * a[i * B + j];
    }
}
""")
    result = verify_file(source, points=2)
    assert result.ok, text(result)


def test_a_static_function_is_verified(tmp_path):
    """verify looked the function up by its name in the libraries it built: a `static` one has
    none, and every point failed with "undefined symbol: scale" (bug hunt)."""
    source = _program(tmp_path, "st.c", """#include "metafork.h"
static inline void scale(int n, int B, float a[n], float b[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                b[i * B + j] = 2.0f * a[i * B + j];
    }
}
""")
    result = verify_file(source, points=2)
    assert result.ok, text(result)


def test_a_schedule_behind_a_test_of_the_other_arguments_is_reached(tmp_path):
    """The schedule in the else of `if (flag)`, and one run only at the fourth step of a step
    loop: the function's other integer arguments were always 3, so neither schedule ever ran
    ("0 of 3 points: ... never reached the schedule"). Where a point does not reach it, the
    next points try 0, 1, 2, 4, 8 for those arguments."""
    source = _program(tmp_path, "reach.c", """#include "metafork.h"
void pick(int n, int B, int flag, int steps, float a[n])
{
    if (flag) {
        for (int i = 0; i < n; i++)
            a[i] = 0.0f;
    } else {
        meta_schedule {
            meta_for (int g = 0; g < n / B; g++)
                meta_for (int t = 0; t < B; t++)
                    a[g * B + t] = 2.0f * a[g * B + t];
        }
    }
    for (int s = 0; s < steps; s++)
        if (s % 4 == 3) {
            meta_schedule {
                meta_for (int g = 0; g < n / B; g++)
                    meta_for (int t = 0; t < B; t++)
                        a[g * B + t] = a[g * B + t] + 1.0f;
            }
        }
}
""")
    result = verify_file(source, points=2)
    assert result.ok, text(result)
    assert all(len(c.points) == 2 for s in result.schedules for c in s.cases), text(result)


def _every_math_function(ctype: str) -> str:
    """A sum of every <math.h> function of syntax.MATH_ARITY at `ctype` (its float twin for
    float), with arguments inside each one's domain for v in [-1, 1]."""
    from parakern import syntax
    inside = {"sqrt": "2 + v", "log": "2 + v", "log2": "2 + v", "log10": "2 + v", "log1p": "1 + v",
              "asin": "v / 2", "acos": "v / 2", "atanh": "v / 2", "acosh": "2 + v * v", "tgamma": "2 + v",
              "lgamma": "2 + v", "pow": "2 + v, C"}
    plain = {1: "v", 2: "v, C", 3: "v, C, C"}
    suffix, c = ("f", "0.75f") if ctype == "float" else ("", "0.75")
    terms = [f"{name}{suffix}({inside.get(name, plain[n]).replace('C', c)})"
             for name, n in sorted(syntax.MATH_ARITY.items())]
    return "\n                    + ".join(terms)


@pytest.mark.parametrize("ctype", ["float", "double"])
def test_every_math_function_runs_as_the_serial_c_does(tmp_path, ctype):
    """fmod, atan2, erf, round, log1p... were refused (PK007) though CUDA has them; erf, ending
    in f, would have been typed float. Each is counted through libdevice and verified."""
    program = f"""#include <math.h>
#include "metafork.h"
void every(int n, int B, {ctype} x[n], {ctype} y[n])
{{
    meta_schedule {{
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++) {{
                {ctype} v = x[i * B + j];
                y[i * B + j] = {_every_math_function(ctype)};
            }}
    }}
}}
"""
    source = _program(tmp_path, "every.c", program)
    result = verify_file(source, points=2)
    report = text(result)
    assert result.ok and all(c.points for s in result.schedules for c in s.cases), report


CLAMP = """#include "metafork.h"
static int min(int a, int b) { return a < b ? a : b; }
static int max(int a, int b) { return a > b ? a : b; }
void clamp(int N, int B, double in[N], double out[N])
{
    meta_schedule {
        meta_for (int i = 0; i < N / B; i++)
            meta_for (int j = 0; j < B; j++) {
                int p = i * B + j;
                out[p] = in[min(p + 1, N - 1)] - in[max(p - 1, 0)];
            }
    }
}
"""


def test_min_and_max_of_two_ints_run_as_the_serial_c_does(tmp_path):
    """The emulation's min and max returned a reference to their own by-value argument when
    both had one type (decltype(a < b ? a : b) is int&): every such kernel was a mismatch."""
    result = verify_file(_program(tmp_path, "clamp.c", CLAMP), points=3)
    report = text(result)
    assert result.ok and all(c.points for s in result.schedules for c in s.cases), report


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not on PATH")
def test_the_emulation_header_compiles_without_a_warning(tmp_path):
    """The emulation is built with -w: a warning in its own header (g++ -Wall said 'a is used
    uninitialized' of min's dangling reference) must show here."""
    header = Path(__file__).resolve().parents[2] / "server" / "parakern" / "verify" / "parakern_cpu.h"
    use = tmp_path / "use.cpp"
    use.write_text("int f(int a, int b) { return min(a, b) + max(a, b); }\n"
                   "double g(double a, int b) { return min(a, b) * max(b, a); }\n")
    done = subprocess.run(["g++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-c", "-include", str(header),
                           str(use), "-o", str(tmp_path / "use.o")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_min_and_max_without_definitions_say_what_to_add(tmp_path):
    """A schedule may call min and max (CUDA has them), but C has none: verify printed gcc's
    'implicit declaration of function max' alone."""
    program = CLAMP.replace("static int min(int a, int b) { return a < b ? a : b; }\n", "").replace(
        "static int max(int a, int b) { return a > b ? a : b; }\n", "")
    result = verify_file(_program(tmp_path, "clamp.c", program), points=1)
    report = text(result)
    assert not result.ok and "clamp.c:8:" in report
    assert "max and min: CUDA's, which C does not have: define them in the file for its serial C" in report


def test_back_substitution_counting_down_is_verified(tmp_path):
    """A thread per system solving U x = y from its last row up: the serial loop counts down,
    and each row reads the rows solved before it (bug hunt: PK015 refused it)."""
    program = """#include "metafork.h"
void backsub(int nb, int n, int B, double U[nb][n][n], double y[nb][n], double x[nb][n])
{
    int g = (nb + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int s = b * B + t;
                if (s < nb) {
                    for (int i = n - 1; i >= 0; i--) {
                        double acc = y[s][i];
                        for (int j = i + 1; j < n; j++)
                            acc -= U[s][i][j] * x[s][j];
                        x[s][i] = acc / (U[s][i][i] + 4.0);
                    }
                }
            }
    }
}
"""
    result = verify_file(_program(tmp_path, "backsub.c", program), points=3)
    report = text(result)
    assert result.ok and all(c.points for s in result.schedules for c in s.cases), report


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_verify_killed_while_g_plus_plus_runs_leaves_nothing_in_tmpdir(tmp_path, signum):
    """verify killed while it compiles (issue 34): killing g++'s driver alone left its cc1plus
    writing a .s in TMPDIR that nobody removed. The compilers' temporaries are in verify's own
    directory, removed however verify ends, and an interrupted verify kills them all at once."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "parakern", "verify", str(ROOT / "samples" / "saxpy.c")],
                               env={**os.environ, "TMPDIR": str(tmp)}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 180
    while not any(_name(p) == "cc1plus" for p in descendants(process.pid)):   # the emulated CUDA: seconds
        assert process.poll() is None and time.monotonic() < deadline, "verify ended before it compiled"
        time.sleep(0.01)
    below = [p for p in descendants(process.pid) if not _name(p).startswith("python")]   # not the janitor
    os.kill(process.pid, signum)
    _, errors = process.communicate(timeout=60)
    assert "Traceback" not in errors
    # at once when verify could act on the signal; after SIGKILL the compile ends by itself
    deadline = time.monotonic() + (5 if signum != signal.SIGKILL else 120)
    while any(alive(p) for p in below) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in below if alive(p)], [_name(p) for p in below if alive(p)]
    deadline = time.monotonic() + 10        # the janitor removes verify's directory
    while list(tmp.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sorted(p.name for p in tmp.rglob("*")) == []


# ------------------------------------------------------------------ extents the host code sets

HOST_EXTENT = """#include "metafork.h"

void scale(int n, int B, float x[n], float y[n])
{
    int g = n / B;
    if (n % B)
        g++;
    meta_schedule {
        meta_for (int i = 0; i < g; i++)
            meta_for (int j = 0; j < B; j++) {
                int k = i * B + j;
                if (k < n)
                    y[k] = 2.0f * x[k];
            }
    }
}
"""


@pytest.mark.parametrize("arrays", ["float x[n], float y[n]", "float *x, float *y"], ids=["sized", "pointers"])
def test_a_grid_extent_the_host_code_changes_is_verified(tmp_path, arrays):
    """`g = n / B; if (n % B) g++;`: g is no derived scalar (it changes after its definition),
    so its value is the host's. verify said "no parameter point within the bounds selects this
    case": the fact g >= 1 was judged with g unknown. It is judged on the value each call gets."""
    result = verify_file(_program(tmp_path, "scale.c", HOST_EXTENT.replace("float x[n], float y[n]", arrays)),
                         points=3)
    report = text(result)
    assert result.ok, report
    points = [p for c in result.schedules[0].cases for p in c.points]
    assert len(points) == 3 and all(p.expected_calls == (1,) for p in points), report
    assert any(p.realistic for p in points), report


HOST_STEPS = """#include "metafork.h"

void steps(int n, int B, float x[n], float y[n])
{
    for (int r = 0; r < 3; r++) {
        int g = n / B;
        if (n % B)
            g++;
        if (r == 1)
            g = 0;          /* nothing to do at this step */
        meta_schedule {
            meta_for (int i = 0; i < g; i++)
                meta_for (int j = 0; j < B; j++) {
                    int k = i * B + j;
                    if (k < n)
                        y[k] = y[k] + x[k];
                }
        }
    }
}
"""


def test_each_call_is_judged_on_the_values_the_host_gave_it(tmp_path):
    """The second call's grid is empty: the dispatcher must launch nothing there (status 0),
    as the serial C runs nothing; the others launch the case. A dispatcher that launches at
    the empty step, or picks another case, fails."""
    source = _program(tmp_path, "steps.c", HOST_STEPS)
    with Session(HOST_STEPS, str(source)) as session:
        point = session.run("steps:0", {"n": 100, "B": 32}, device(65536, 1 << 16, 1024))
        assert point.ok and point.expected_calls == (1, 0, 1) and point.chosen == (1, 0, 1), point
    bad = verify_file(source, points=1, transform_cu=lambda cu: cu.replace(
        "return cudaPeekAtLastError() == cudaSuccess ? 1 :", "return cudaPeekAtLastError() == cudaSuccess ? 2 :"))
    assert not bad.ok and bad.schedules[0].cases[0].points[0].expected_calls == (1, 0, 1), text(bad)


def test_a_fact_the_host_values_break_is_named_with_its_position(tmp_path):
    """A divisor the host code sets to 0 at one step: the analysis assumed it is not."""
    program = HOST_STEPS.replace("if (r == 1)\n            g = 0;          /* nothing to do at this step */",
                                 "int d = r == 1 ? 0 : 2;").replace("y[k] + x[k]", "y[k] + x[k] * (k % d + 1)")
    source = _program(tmp_path, "divisor.c", program)
    from parakern.verify.points import host_check
    with Session(program, str(source)) as session:
        target = session.targets["steps:0"]
        calls = [{"n": 100, "B": 32, "r": r, "g": 4} for r in range(3)]
        expected, problem = host_check(target.model, {"n": 100, "B": 32}, calls, device(65536, 1 << 16, 1024))
    line = next(k for k, t in enumerate(program.split("\n"), 1) if "k % d" in t)
    assert expected == (1,) and "at call 2 of the schedule the host code set r = 1, d = 0" in problem
    assert "d != 0 (divisor" in problem and f"line {line}:" in problem, problem
