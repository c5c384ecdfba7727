"""CUDA generation: golden files, nvcc, kernels vs the case tree, launches, the CLI, and the
CUDA run on the CPU against the IR it must agree with.

PARAKERN_UPDATE_GOLDEN=1 rewrites tests/golden/*.cu from the current output (read the diff).
"""
import ast
import functools
import itertools
import random
import re
import shutil
import subprocess

import pytest
import sympy
from pycparser import c_ast, c_parser

from conftest import ROOT, SAMPLES, WRONG, sample_files
from parakern import syntax
from parakern.analysis import staging
from parakern.codegen import case_ptx, emit_file, kernel_source
from parakern.codegen.cprint import CodegenError, CPrinter, relation_c, sym_c
from parakern.commands.cli import main
from parakern.launch import launch_of
from parakern.pipeline import analyze
from parakern.source.diagnostics import Span
from parakern.symbolic.symbols import R_B, T, Z, sym

GOLDEN = ROOT / "tests" / "golden"
NVCC = shutil.which("nvcc")
GXX = shutil.which("g++")
SAMPLE_NAMES = [p.stem for p in sample_files()]


@functools.lru_cache(maxsize=None)
def analysis(name: str, text: "str | None" = None):
    """The analysis of samples/<name>.c under its relative name (stable golden files)."""
    text = text if text is not None else (SAMPLES / f"{name}.c").read_text()
    return analyze(text, f"samples/{name}.c")


def tree(name: str):
    (result,) = analysis(name).results
    return result.tree


def cached_matmul():
    """matmul with cache(a, b, c): tiles refilled per k, c staged once around the k loop."""
    text = (SAMPLES / "matmul.c").read_text().replace("meta_schedule {", "meta_schedule cache(a, b, c) {")
    return analysis("matmul_cached", text)


def nvcc(tmp_path, text: str, arch: str, *extra):
    source = tmp_path / "k.cu"
    source.write_text(text)
    return subprocess.run([NVCC, "-c", f"-arch={arch}", "-Werror", "all-warnings", *extra, str(source),
                           "-o", str(tmp_path / "k.o")], capture_output=True, text=True, timeout=300)


def c_value(text: str) -> sympy.Expr:
    """A C integer expression as sympy: `/` is floor division and `%` Mod (non-negative values)."""
    def go(n):
        if isinstance(n, ast.BinOp):
            a, b = go(n.left), go(n.right)
            return {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                    ast.Div: lambda: sympy.floor(a / b), ast.Mod: lambda: sympy.Mod(a, b)}[type(n.op)]()
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -go(n.operand)
        if isinstance(n, ast.Name):
            return sym(n.id)
        if isinstance(n, ast.Constant):
            return sympy.Integer(n.value)
        raise ValueError(ast.dump(n))
    return go(ast.parse(text, mode="eval").body)


def test_preamble_is_the_contract():
    text = emit_file(analysis("saxpy"))
    assert """#ifndef PARAKERN_CPU
#include <cuda_runtime.h>
#endif
#ifndef PARAKERN_LAUNCH
#define PARAKERN_LAUNCH(kernel, grid, block, shared, ...) kernel<<<(grid), (block), (shared)>>>(__VA_ARGS__)
#endif
#ifndef PARAKERN_DYNAMIC_SHARED
#define PARAKERN_DYNAMIC_SHARED(name) extern __shared__ __align__(16) unsigned char name[]
#endif
#define PARAKERN_NOTHING_TO_DO 0
#define PARAKERN_NO_CASE_FITS (-1)
#define PARAKERN_CUDA_ERROR (-2)
#define PARAKERN_INVALID_VALUES (-3)
""" in text
    header = text.split("#ifndef PARAKERN_CPU")[0]
    assert "samples/saxpy.c" in header and "sm_80" in header and "(H1)" in header
    assert text.index("int saxpy_0_dispatch(") < text.index("__global__ void") < text.index("static int saxpy_0_try")


def test_kernel_arguments_and_thread_mapping():
    text = emit_file(analysis("matadd"))
    assert "__global__ void matadd_0_case1(int *__restrict__ c, const int *__restrict__ a,\n" \
           "                               const int *__restrict__ b, int N, int B0, int B1)" in text
    assert "const int v = blockIdx.y;" in text and "const int q = threadIdx.x;" in text
    assert "c[(long long)i * N + j] = a[(long long)i * N + j] + b[(long long)i * N + j];" in text
    assert "int matadd_0_dispatch(int N, int B0, int B1, const int *a, const int *b, int *c);" in text
    # granularity reduction, where the tree has it: the new outermost grid level
    transpose = emit_file(analysis("transpose"))
    assert "const int k = blockIdx.z;" in transpose


def test_matmul_between_loop_wraps_the_body():
    kernel = kernel_source(tree("matmul").cases[0], 1)
    loop = kernel.index("for (int k = 0; k < n / B0; k++) {")
    assert loop < kernel.index("int p = i * B0 + v;")
    assert "dim0" not in kernel.split("{", 1)[1].replace("[0, dim0)", "")  # derived, only in a comment


def test_staging_follows_the_plan_jacobi():
    t = tree("jacobi1d")
    case = t.cases[0]
    kernel = kernel_source(case, 1)
    assert "PARAKERN_DYNAMIC_SHARED(parakern_shared);" in kernel
    assert "int *a_shared = (int *)parakern_shared;" in kernel
    assert kernel.count("__syncthreads();") == 2  # after the loads, before the write-back
    # the uniform choice on t % 2 selects the regions, as the plan's `when`
    assert "if (t % 2 != 0) {" in kernel and "} else if (t % 2 == 0) {" in kernel
    assert "a_shared[B*s + 2 + (p1 - (B*i*s + 1))] = (a_shared[np - (B*i*s + N)]" in kernel
    assert kernel.count("a[g] = a_shared[B*s + 2 + e];") == 2  # whole write-back of the written region
    assert "write-through" not in kernel
    (st,) = staging.plan(case.kernel)
    assert st.elements == 2 * sym("B") * sym("s") + 2


def test_staging_write_through_and_overlap_polydiv():
    kernel = kernel_source(tree("polydiv").cases[0], 1)
    assert "int *b_shared = (int *)(parakern_shared + 4*B*s + 4);" in kernel
    # a[N - 1] may lie in the window too: the first region holding an element keeps its copy
    slot = "a_shared[x == N - 1 ? 0 : 1 + (x - (B*s*u - M + N))]"
    assert f"{slot} = (({slot} - e) % P + P) % P;" in kernel
    assert f"a[x] = {slot};  /* write-through */" in kernel
    assert "int e = a_shared[0] * b_shared[p - B*s*u] % P;" in kernel


def test_threads_that_communicate_across_the_between_loop_wait_at_a_barrier():
    """block_smooth: sweep t + 1 reads what the block's other threads wrote in sweep t, which
    MetaFork's join after each meta_for allows; the kernel then waits at a barrier after each
    iteration (before: none, and verify found every point wrong). Where the threads keep to
    their own elements (matmul's c across k) no barrier is added."""
    from parakern.analysis.dependence import threads_communicate
    path = SAMPLES / "polybench" / "block_smooth.c"
    (result,) = analyze(path.read_text(), str(path)).results
    assert threads_communicate(result.schedule)
    kernel = kernel_source(result.tree.cases[0], 1)
    loop = kernel[kernel.index("for (int t = 0; t < sweeps; t++) {"):]
    assert loop.count("__syncthreads();  /* the next iteration reads what other threads wrote */") == 1
    assert loop.index("__syncthreads()") > loop.index("a[p] = ")
    matmul = tree("matmul")
    assert not threads_communicate(matmul.schedule)
    assert "__syncthreads" not in kernel_source(matmul.cases[0], 1)


def test_ir_levels_carried_into_the_source():
    t = tree("matmul")
    level0 = t.cases[0]
    reduced = next(c for c in t.cases if c.kernel.ir_level >= 1)
    assert level0.kernel.ir_level == 0
    assert "#pragma unroll" not in kernel_source(level0, 1)
    k2 = kernel_source(reduced, t.cases.index(reduced) + 1)
    assert k2.count("#pragma unroll 1") == k2.count("for (") > 0
    assert all(line.strip() == "#pragma unroll 1" for a, line in zip(k2.split("\n")[1:], k2.split("\n"))
               if a.strip().startswith("for ("))


def test_ptx_available():
    ptx = case_ptx(tree("saxpy").cases[0])
    assert ".entry" in ptx and "saxpy_kernel0" in ptx


# ------------------------------------------------------------------ launch
def test_jacobi_launch_dims_and_shared_bytes():
    t = tree("jacobi1d")
    N, B, s = sym("N"), sym("B"), sym("s")
    dim = sympy.floor((N - 2) / (B * s))
    text = emit_file(analysis("jacobi1d"))
    for k, case in enumerate(t.cases, 1):
        launch = launch_of(case)
        reduced = "(3b)" in case.decisions
        assert launch.grid == (dim, s if reduced else 1, 1)
        assert launch.block == (B, 1, 1) and launch.threads == B
        assert sympy.expand(launch.shared_bytes - sympy.sympify(case.counter("shared_memory"))) == 0
        if case.kernel.cached:
            assert sympy.expand(launch.shared_bytes - staging.shared_bytes(case.kernel)) == 0
        helper = text[text.index(f"static int jacobi1d_0_try_case{k}("):]
        helper = helper[:helper.index("\n}\n")]
        grid_x = re.search(r"const long long grid_x = (.+);", helper).group(1)
        assert sympy.simplify(c_value(grid_x) - dim) == 0
        assert ("grid_y = s;" in helper) == reduced
        assert "const long long block_x = B;" in helper
        shared = re.search(r"const long long shared_bytes = (.+);", helper)
        if case.counter("shared_memory") == 0:
            assert shared is None and f"PARAKERN_LAUNCH(jacobi1d_0_case{k}, grid, block, 0, " in helper
        else:
            assert sympy.expand(c_value(shared.group(1)) - case.counter("shared_memory")) == 0
            assert "cudaFuncSetAttribute(jacobi1d_0_case" in helper
        relations = case.constraints.relations
        assert f"if (!by_fit && !({relation_c(relations)}))" in helper   # the second pass tests the fit alone
        assert "1024LL * ((attr.numRegs + 7) / 8) * ((threads + 127) / 128) > R_B" in helper
        assert "threads > T" in helper
    expected = {sympy.expand(8 * B * s + 8), sympy.expand(8 * B + 8), 0}
    assert {sympy.expand(sympy.sympify(launch_of(c).shared_bytes)) for c in t.cases} == expected


def test_dispatcher_contract_text():
    text = emit_file(analysis("jacobi1d"))
    assert "int jacobi1d_0_dispatch_tree(int N, int s, int B, int *a, int t)\n{\n    return jacobi1d_0_select(false, 0, " in text
    start = text.index("static int jacobi1d_0_select(bool probe, int only, int N, int s, int B, int *a, int t)\n{")
    disp = text[start:text.index("int jacobi1d_0_dispatch_tree(int N", start)]
    assert "cudaGetDevice(&device)" in disp and "cudaGetDeviceProperties(&prop, device)" in disp
    assert "static thread_local cudaDeviceProp prop;" in disp   # a host thread per GPU reads its own
    assert disp.index("jacobi1d_0_try_case1(") < disp.index("jacobi1d_0_try_case3(")
    assert disp.rstrip().endswith("return PARAKERN_NO_CASE_FITS;\n}")
    assert "if (probe)\n        return 1;" in text   # asked, not launched
    assert "R_B < 2048*((B + 127)/128)   (registers)" in disp
    helper = text[text.index("static int jacobi1d_0_try_case1("):]
    assert "bool by_fit, bool probe, long long N," in helper  # 64-bit constraint arithmetic
    assert "const long long R_B = prop.regsPerBlock;" in helper
    assert "const long long Z = (long long)prop.sharedMemPerBlockOptin;" in helper
    assert "const long long T = prop.maxThreadsPerBlock;" in helper
    assert "return cudaPeekAtLastError() == cudaSuccess ? 1 : PARAKERN_CUDA_ERROR;" in helper
    # the second pass, by the real fit, after the first in the same order
    first = disp.index("jacobi1d_0_try_case1(prop, attrs[0], raised[0], false,")
    second = disp.index("jacobi1d_0_try_case1(prop, attrs[0], raised[0], true,", first)
    assert first < disp.index("jacobi1d_0_try_case3(prop, attrs[2], raised[2], false,") < second
    # only > 0: that case alone, by its fit (dispatch_auto's choice among the cases), before both passes
    alone = disp.index("switch (only) {")
    assert alone < first and "case 3:\n        return jacobi1d_0_try_case3(prop, attrs[2], raised[2], true, probe," in disp


# ------------------------------------------------------------------ printing
def _random_expr(rng, depth):
    span = Span("x", 1, 1, 1, 2)
    if depth == 0 or rng.random() < 0.2:
        if rng.random() < 0.3:
            return syntax.Const(rng.randint(0, 9), "int", span, str(rng.randint(0, 9)))
        return syntax.Var(rng.choice("abcd"), "int", span)
    kind = rng.random()
    if kind < 0.65:
        op = rng.choice(list("+-*/%") + ["<<", ">>", "<", "<=", "==", "!=", "&", "|", "^", "&&", "||"])
        return syntax.Binary(op, _random_expr(rng, depth - 1), _random_expr(rng, depth - 1), "int", span)
    if kind < 0.8:
        return syntax.Unary(rng.choice("-!~+"), _random_expr(rng, depth - 1), "int", span)
    if kind < 0.9:
        return syntax.Ternary(*(_random_expr(rng, depth - 1) for _ in range(3)), "int", span)
    return syntax.Cast(rng.choice(["float", "long"]), _random_expr(rng, depth - 1), span)


def _shape(node):
    """The tree as nested tuples, from our syntax or from pycparser's AST."""
    if isinstance(node, syntax.Binary) or isinstance(node, c_ast.BinaryOp):
        return (node.op, _shape(node.left), _shape(node.right))
    if isinstance(node, syntax.Unary):
        return ("u" + node.op, _shape(node.operand))
    if isinstance(node, c_ast.UnaryOp):
        return ("u" + node.op, _shape(node.expr))
    if isinstance(node, syntax.Ternary):
        return ("?", _shape(node.cond), _shape(node.then), _shape(node.other))
    if isinstance(node, c_ast.TernaryOp):
        return ("?", _shape(node.cond), _shape(node.iftrue), _shape(node.iffalse))
    if isinstance(node, syntax.Cast):
        return ("cast", node.ctype, _shape(node.operand))
    if isinstance(node, c_ast.Cast):
        return ("cast", " ".join(node.to_type.type.type.names), _shape(node.expr))
    if isinstance(node, syntax.Var) or isinstance(node, c_ast.ID):
        return node.name
    if isinstance(node, syntax.Const):
        return node.text
    if isinstance(node, c_ast.Constant):
        return node.value
    raise TypeError(node)


def test_printed_expressions_parse_back_to_the_same_tree():
    rng = random.Random(7)
    parser = c_parser.CParser()
    for _ in range(400):
        e = _random_expr(rng, 5)
        text = CPrinter().expr(e)
        parsed = parser.parse(f"int f(void) {{ return {text}; }}").ext[0].body.block_items[0].expr
        assert _shape(parsed) == _shape(e), text


def test_minimal_parentheses():
    span = Span("x", 1, 1, 1, 2)

    def v(n):
        return syntax.Var(n, "int", span)

    def b(op, x, y):
        return syntax.Binary(op, x, y, "int", span)

    p = CPrinter().expr
    assert p(b("-", v("a"), b("-", v("b"), v("c")))) == "a - (b - c)"
    assert p(b("-", b("-", v("a"), v("b")), v("c"))) == "a - b - c"
    assert p(b("*", b("+", v("a"), v("b")), v("c"))) == "(a + b) * c"
    assert p(b("+", v("a"), b("*", v("b"), v("c")))) == "a + b * c"
    assert p(b("%", b("*", v("a"), v("b")), v("c"))) == "a * b % c"
    assert p(syntax.Unary("-", syntax.Unary("-", v("x"), "int", span), "int", span)) == "-(-x)"
    assert p(syntax.Cast("float", b("+", v("a"), v("b")), span)) == "(float)(a + b)"
    assert p(b("||", b("&&", v("a"), v("b")), v("c"))) == "(a && b) || c"  # gcc -Wparentheses


def test_sympy_to_c_integer_semantics():
    N, B, s, t = sym("N"), sym("B"), sym("s"), sym("t")
    assert sym_c(sympy.floor((N - 2) / (B * s))) == "(N - 2)/(B*s)"
    assert sym_c(8 * sympy.floor(N / B)) == "8*(N/B)"
    assert sym_c(sympy.Mod(t, 2)) == "t % 2"
    assert sym_c(sympy.Ne(sympy.Mod(t, 2), 0)) == "t % 2 != 0"
    assert sym_c(sympy.ceiling(N / B)) == "(B + N - 1)/B"
    # a floor inside is an integer too (sympy leaves it undecided): integer division, not ceil()
    # of a truncated quotient (the time model's global bytes of matmul, printed in dispatch_auto)
    assert sym_c(sympy.ceiling(s * sympy.floor(N / B) / sympy.Min(32, t))) == \
        "(s*(N/B) + ((32) <= (t) ? (32) : (t)) - 1)/((32) <= (t) ? (32) : (t))"
    assert relation_c([sympy.Le(3072, R_B), sympy.Le(8 * B * s + 8, Z), sympy.Le(B, T)]) == \
        "3072 <= R_B && 8*B*s + 8 <= Z && B <= T"
    for not_integer in (N / 2, (N + 1) / 2, sympy.Rational(1, 3) * B * s):
        with pytest.raises(CodegenError):
            sym_c(not_integer)


# ------------------------------------------------------------------ the command line
def test_cli_emit_writes_the_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "saxpy.cu"
    assert main(["emit", "samples/saxpy.c", "-o", str(out)]) == 0
    assert out.read_text() == emit_file(analysis("saxpy"))
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_cli_emit_to_stdout(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["emit", "samples/saxpy.c", "--target", "sm_80"]) == 0
    assert capsys.readouterr().out == emit_file(analysis("saxpy"))


def test_cli_emit_errors_are_diagnostics_and_exit_zero(tmp_path, capsys):
    out = tmp_path / "f.cu"
    assert main(["emit", str(WRONG / "one_bad_one_good.c"), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert re.search(r"one_bad_one_good\.c:7:17: error: .* \[PK004\]", err)
    text = out.read_text()
    assert "int f_1_dispatch(int n, int B, float *a)" in text and "f_0_" not in text


def test_cli_emit_bad_usage_and_unreadable_file(tmp_path, capsys):
    assert main(["emit", str(tmp_path / "missing.c")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["emit"]) == 2
    assert main(["emit", str(SAMPLES / "saxpy.c"), "--target", "sm_12"]) == 2
    assert main(["emit", str(SAMPLES / "saxpy.c"), "-o", str(tmp_path / "no" / "dir" / "x.cu")]) == 2


# ------------------------------------------------------------------ the CUDA runs like the IR
EMULATION = r"""
#define PARAKERN_CPU 1
#include <barrier>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>
struct dim3 { unsigned x, y, z; dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };
struct uint3 { unsigned x, y, z; };
static thread_local uint3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;
static thread_local std::barrier<> *emu_barrier;
static thread_local unsigned char *emu_shared;
#define __global__
#define __maxnreg__(n)
#define __align__(n) alignas(n)
static void __syncthreads() { emu_barrier->arrive_and_wait(); }
#define PARAKERN_DYNAMIC_SHARED(name) unsigned char *name = emu_shared
struct cudaDeviceProp { int maxThreadsPerBlock; size_t sharedMemPerBlockOptin; int regsPerBlock;
                        int multiProcessorCount, maxThreadsPerMultiProcessor, major, minor, l2CacheSize;
                        char name[256]; /* dispatch_tuned keys its cache file by it */ };
struct cudaFuncAttributes { int numRegs; };
enum cudaError_t { cudaSuccess = 0 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize };
enum cudaDeviceAttr { cudaDevAttrClockRate, cudaDevAttrMemoryClockRate, cudaDevAttrGlobalMemoryBusWidth };
static cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr, int) { *v = 1000; return cudaSuccess; }
template <class F> cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, F *, int, size_t)
{ *n = 1; return cudaSuccess; }
static cudaDeviceProp emu_prop;
static cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }
static cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int) { *p = emu_prop; return cudaSuccess; }
template <class F> cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, F *) { a->numRegs = 0; return cudaSuccess; }
template <class F> cudaError_t cudaFuncSetAttribute(F *, cudaFuncAttribute, int) { return cudaSuccess; }
static cudaError_t cudaGetLastError() { return cudaSuccess; }
static cudaError_t cudaPeekAtLastError() { return cudaSuccess; }
/* what dispatch_tuned calls (not called here: this test runs the try functions) */
enum cudaMemcpyKind { cudaMemcpyDeviceToDevice = 3 };
typedef struct emu_event *cudaEvent_t;
static cudaError_t cudaMalloc(void **p, size_t n) { *p = malloc(n); return cudaSuccess; }
static cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
static cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind) { memmove(d, s, n); return cudaSuccess; }
static cudaError_t cudaEventCreate(cudaEvent_t *e) { *e = nullptr; return cudaSuccess; }
static cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
static cudaError_t cudaEventRecord(cudaEvent_t) { return cudaSuccess; }
static cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
static cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t, cudaEvent_t) { *ms = 0; return cudaSuccess; }
static void emu_launch(dim3 grid, dim3 block, size_t shared, const std::function<void()> &body) {
    gridDim = grid; blockDim = block;
    unsigned n = block.x * block.y * block.z;
    for (unsigned bz = 0; bz < grid.z; bz++) for (unsigned by = 0; by < grid.y; by++)
    for (unsigned bx = 0; bx < grid.x; bx++) {
        std::vector<unsigned char> buffer(shared + 64, 0xA5);  /* never-loaded reads show */
        std::barrier<> barrier(n);
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < n; t++)
            threads.emplace_back([&, t] {
                blockIdx = {bx, by, bz};
                threadIdx = {t % block.x, t / block.x % block.y, t / (block.x * block.y)};
                emu_barrier = &barrier; emu_shared = buffer.data();
                body();
            });
        for (auto &t : threads) t.join();
        for (size_t i = shared; i < shared + 64; i++) if (buffer[i] != 0xA5) abort();
    }
}
#define PARAKERN_LAUNCH(kernel, grid, block, shared, ...) \
    emu_launch(grid, block, shared, [&] { kernel(__VA_ARGS__); })
"""
RUNS = {
    "jacobi1d": [dict(N=34, s=2, B=4, t=0), dict(N=35, s=3, B=2, t=1)],
    "matadd": [dict(N=6, B0=4, B1=2)],
    "matmul": [dict(n=12, B0=3, ub1=2, s=2)],
    "matvec": [dict(m=7, n=5, B=4)],
    "polydiv": [dict(N=12, M=5, P=7, s=2, B=2)],
    "saxpy": [dict(n=10, B=4, alpha=2.5)],
    "stencil2d": [dict(N=9, Bx=3, By=2)],
    "transpose": [dict(N=8, B0=2, B1=2, s=2)],
    "matmul_cached": [dict(n=12, B0=3, ub1=2, s=2)],
}
POINTER_SIZES = {"matvec": {"A": "m*n", "x": "n", "y": "m"}, "saxpy": {"x": "n", "y": "n"}}


def _machine(case, values, threads):
    """R_B, Z, T that satisfy the case's constraints and needs at these parameter values."""
    relations = [sympy.sympify(r).subs(values) for r in case.constraints.relations + case.needs.relations]
    for r, z, t in itertools.product([1024 * k for k in range(1, 9)] + [65536],
                                     [0, 8, 16, 24, 40, 64, 100, 200, 400, 1 << 20], [threads, 1024]):
        if all(bool(x.subs({R_B: r, Z: z, T: t})) for x in relations):
            return r, z, t
    return None


def test_occupancy_cases_get_a_diagnostic_not_a_dispatcher():
    from parakern.codegen import emit
    from parakern.pipeline import Options
    text = (SAMPLES / "saxpy.c").read_text()
    emitted = emit(analyze(text, "samples/saxpy.c", Options(occupancy="a100")))
    (d,) = emitted.diagnostics
    assert d.code == "PK030" and "P_occ" in d.message and d.span.line == 7
    assert "saxpy_0_dispatch" not in emitted.text and "PARAKERN_NO_CASE_FITS (-1)" in emitted.text


def test_a_dispatch_auto_that_cannot_be_printed_leaves_the_rest_of_the_schedule(monkeypatch):
    """A time-model quantity with no C form used to drop the whole schedule (PK030 error, no
    kernels, no dispatcher: verify then failed on the missing dispatcher); now only dispatch_auto
    is left out, with a warning that says so."""
    import importlib
    emit_module = importlib.import_module("parakern.codegen.emit")

    def fails(tree):
        raise CodegenError("'n/2' is not an integer", tree.schedule.keyword_span)
    monkeypatch.setattr(emit_module, "auto_code", fails)
    emitted = emit_module.emit(analyze((SAMPLES / "saxpy.c").read_text(), "saxpy.c"))
    assert "saxpy_0_dispatch(" in emitted.text and "__global__ void saxpy_0_case1" in emitted.text
    assert "dispatch_auto" not in emitted.text.split("/* ------------------------------------------------------------ kernels")[1]
    (d,) = emitted.diagnostics
    assert d.severity.value == "warning" and d.code == "PK030" and "no dispatch_auto" in d.message


def test_the_dispatcher_refuses_a_shift_count_out_of_range():
    """C leaves `x << s` undefined for s < 0 or s >= 32, as a division by zero: the dispatcher
    refuses such values with the divisors and assertions (PARAKERN_INVALID_VALUES)."""
    text = emit_file(analyze("""void sh(int n, int B, int s, int a[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                a[i * B + j] = a[i * B + j] << s;
    }
}
""", "sh.c"))
    refused = next(line for line in text.split("\n") if "return PARAKERN_INVALID_VALUES;" in line
                   or line.strip().startswith("if (!((((long long)B) != 0)"))
    assert "((long long)s) >= 0" in refused and "((long long)s) < 32" in refused, refused



def test_the_dispatcher_refuses_a_negative_parameter():
    """The analysis takes every parameter as >= 0 (H1): at s = -1 every thread writes y[0], a race
    it never looked for, so the dispatchers refuse a negative value (a trial launched it)."""
    text = emit_file(analyze("""void g(int n, int s, int B, float x[n], float y[n])
{
    int blocks = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < blocks; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if ((s + 1) * i < n && i < n)
                    y[(s + 1) * i] = x[i];
            }
    }
}
""", "g.c"))
    lines = text.split("\n")
    refusals = [lines[k - 1] for k, line in enumerate(lines) if line.strip() == "return PARAKERN_INVALID_VALUES;"]
    assert refusals and all("(((long long)s) >= 0)" in r and "(((long long)n) >= 0)" in r for r in refusals)
