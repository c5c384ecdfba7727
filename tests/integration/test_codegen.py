"""CUDA generation: golden files, nvcc, kernels vs the case tree, launches, the CLI, and the
CUDA run on the CPU against the IR it must agree with.

PARAKERN_UPDATE_GOLDEN=1 rewrites tests/golden/*.cu from the current output (read the diff).
"""
import dataclasses
import os
import re
import shutil
import subprocess
import sys

import pytest
import sympy

from conftest import KERNEL_HEAD, ROOT, SAMPLES
from parakern.codegen import dispatcher_name, emit_file, emit_schedule, kernel_name, kernel_source, register_cap
from parakern.codegen.cprint import relation_c
from parakern.pipeline import analyze
from unit.test_codegen import (
    EMULATION,
    GOLDEN,
    GXX,
    NVCC,
    POINTER_SIZES,
    RUNS,
    SAMPLE_NAMES,
    _machine,
    analysis,
    cached_matmul,
    nvcc,
    tree,
)


# ------------------------------------------------------------------ golden files and nvcc
@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_golden(name, golden_registers):
    """Compared whether or not ptxas is installed: golden_registers gives the counter
    ptxas's recorded answers where it is missing."""
    text = emit_file(analyze((SAMPLES / f"{name}.c").read_text(), f"samples/{name}.c"))
    golden = GOLDEN / f"{name}.cu"
    if os.environ.get("PARAKERN_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(exist_ok=True)
        golden.write_text(text)
    assert golden.exists(), f"no golden file {golden}: run with PARAKERN_UPDATE_GOLDEN=1"
    assert text == golden.read_text(), f"{name}: emitted CUDA differs from {golden} (PARAKERN_UPDATE_GOLDEN=1 rewrites it)"


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_nvcc_compiles_without_warnings(tmp_path, name, arch):
    """The host code too, under gcc's -Wall -Wextra: every try function's `raised` and the time
    models' unread parameters were -Wunused-parameter (640 warnings over the samples)."""
    done = nvcc(tmp_path, emit_file(analysis(name)), arch, "-Xcompiler", "-Wall,-Wextra")
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_emit_schedule_compiles_alone(tmp_path):
    (result,) = analysis("saxpy").results
    text = emit_schedule(result) + "\n" + emit_schedule(result, preamble=True).split("/* ---", 1)[0]
    done = nvcc(tmp_path, text, "sm_80")  # the preamble twice: still no warning
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr
    assert "int saxpy_0_dispatch(int n, int B, float alpha, const float *x, float *y);" in text


# ------------------------------------------------------------------ the kernels follow the tree
@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_one_kernel_per_case_with_its_constraints(name):
    text = emit_file(analysis(name))
    t = tree(name)
    s = t.schedule
    assert text.count("__global__ void") == len(t.cases) > 0
    assert f"int {dispatcher_name(s)}(" in text
    for k, case in enumerate(t.cases, 1):
        kname = kernel_name(s, k)
        assert re.search(KERNEL_HEAD + rf"{kname}\(", text)
        constraints = relation_c(case.constraints.relations)
        assert f"runs where  {constraints}" in text
        assert " ".join(case.decisions) in text
        assert f"PARAKERN_LAUNCH({kname}, " in text
        # the dispatcher tries the cases in the tree's order
        assert text.index(f"_try_case{k}(prop") < text.index(f"_try_case{k + 1}(prop") \
            if k < len(t.cases) else True
    for u in t.uncovered:
        assert relation_c(u.constraints.relations) in text
    assert text.count("PARAKERN_LAUNCH(") == len(t.cases) + 1  # + the macro's definition
    assert "<<<" not in text.split("#define PARAKERN_NO_CASE_FITS")[1]  # launches only through the macro


def test_staging_between_loops_matmul_cached():
    (result,) = cached_matmul().results
    kernel = kernel_source(result.tree.cases[0], 1)
    body = kernel[kernel.index("{\n"):]
    loop = body.index("for (int k = 0; k < n / B0; k++) {")
    # c's tile does not move with k: loaded once before the loop, written back once after it
    assert body.index("/* load the B0 x (s*ub1) tile of c") < loop
    assert body.index("/* load the B0 x B0 tile of a from (B0*i, B0*k)") > loop
    assert body.index("/* write back the B0 x (s*ub1) tile of c") > body.index("/* the block is done")
    assert body.count("__syncthreads();") == 4


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="the register cap is measured with ptxas")
def test_level3_register_cap(tmp_path):
    (result,) = cached_matmul().results
    case = result.tree.cases[0]
    capped = dataclasses.replace(case, kernel=dataclasses.replace(case.kernel, ir_level=3))
    cap = register_cap(capped.kernel)
    assert cap is not None
    source = kernel_source(capped, 1)
    assert f"__global__ void __maxnreg__({cap}) matmul_0_case1(" in source
    assert f"capped at {cap}" in source
    if NVCC is not None:
        from parakern.codegen.emit import PREAMBLE
        done = nvcc(tmp_path, PREAMBLE + source + "\n", "sm_80", "-Xptxas", "-v")
        assert done.returncode == 0, done.stderr
        used = int(re.search(r"Used (\d+) registers", done.stdout + done.stderr).group(1))
        assert used <= cap
    # level 3 where no cap can bind is level 2 without __maxnreg__
    small = dataclasses.replace(tree("saxpy").cases[0].kernel, ir_level=3)
    assert register_cap(small) is None
    assert "__maxnreg__" not in kernel_source(dataclasses.replace(tree("saxpy").cases[0], kernel=small), 1)


@pytest.mark.skipif(GXX is None, reason="g++ is not on PATH")
def test_dispatcher_falls_back_on_the_real_fit(tmp_path):
    """matmul's case 1 (counted 48 registers: 6144 per 128 threads <= R_B) compiled by nvcc into a
    kernel needing 60 (8192), on a device with R_B = 7000: no other case's region (R_B < 6144)
    contains it, so without the second pass nothing would run. The tree's dispatcher launches case 2,
    whose real kernel fits (40 registers: 5120), and the product is right; with every case
    needing 60, nothing fits."""
    from parakern.verify.build import HEADER
    text = emit_file(analysis("matmul"))
    n, b0, ub1, s = 8, 4, 4, 2            # 16 threads per block
    main = f"""
#include <stdio.h>
int main() {{
    static float a[{n * n}], b[{n * n}], c[{n * n}];
    for (int i = 0; i < {n * n}; i++) {{ a[i] = (float)(i % 7); b[i] = (float)(i % 5); c[i] = 0.0f; }}
    parakern_cpu_set_device(7000, 48 * 1024, 1024);
    parakern_cpu_set_registers((const void *)matmul_0_case1, 60);
    parakern_cpu_set_registers((const void *)matmul_0_case2, 40);
    int r = matmul_0_dispatch_tree({n}, {b0}, {ub1}, {s}, a, b, c);
    float worst = 0.0f;
    for (int i = 0; i < {n}; i++)
        for (int j = 0; j < {n}; j++) {{
            float want = 0.0f;
            for (int k = 0; k < {n}; k++) want += a[i * {n} + k] * b[k * {n} + j];
            float d = c[i * {n} + j] - want;
            if (d < 0) d = -d;
            if (d > worst) worst = d;
        }}
{{too_many}}
    int none = matmul_0_dispatch_tree({n}, {b0}, {ub1}, {s}, a, b, c);
    printf("%d %g %d\\n", r, worst, none);
}}
"""
    cases = len(tree("matmul").cases)
    assert "6144*((B0*ub1 + 127)/128) <= R_B" in str(tree("matmul").cases[0].constraints) and cases > 2
    main = main.replace("{too_many}", "\n".join(
        f"    parakern_cpu_set_registers((const void *)matmul_0_case{k}, 60);" for k in range(1, cases + 1)))
    source = tmp_path / "fallback.cpp"
    source.write_text(text + main)
    build = subprocess.run([GXX, "-std=c++17", "-O1", "-include", str(HEADER), str(source), "-o",
                            str(tmp_path / "fallback"), "-pthread"], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[:3000]
    out = subprocess.run([str(tmp_path / "fallback")], capture_output=True, text=True, timeout=120).stdout.split()
    assert out == ["2", "0", "-1"]


def test_cli_emit_subprocess_exit_code():
    done = subprocess.run([sys.executable, "-m", "parakern", "emit", "samples/saxpy.c"], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0 and "saxpy_0_dispatch" in done.stdout


@pytest.mark.skipif(GXX is None, reason="g++ is not on PATH")
@pytest.mark.parametrize("name", list(RUNS))
def test_cuda_agrees_with_the_ir_on_the_cpu(tmp_path, name):
    """Every case's try function, run on a small CPU emulation of CUDA (threads and barriers per
    block, a poisoned shared buffer), writes exactly what the IR of the same case computes."""
    import ctypes

    from parakern.ir.host import HostKernel, parameter_values
    result = (cached_matmul() if name == "matmul_cached" else analysis(name)).results[0]
    s = result.tree.schedule
    ctype = {"int": ctypes.c_int, "float": ctypes.c_float, "double": ctypes.c_double}
    main_lines, expected = ["int main() {"], []
    for params in RUNS[name]:
        values = parameter_values(s, {k: v for k, v in params.items() if isinstance(v, int)})
        by_name = {str(k): v for k, v in values.items()}
        sizes = {a.name: int(sympy.Mul(*[sympy.sympify(d).subs(values).subs(by_name) for d in
                                           (a.dims or (sympy.sympify(POINTER_SIZES[name][a.name]),))]))
                 for a in s.arrays}
        init = {a.name: [(i * 7 + 3 * j + 1) % 11 + (0 if a.ctype == "int" else 0.5) for i in range(sizes[a.name])]
                for j, a in enumerate(s.arrays)}
        for k, case in enumerate(result.tree.cases, 1):
            threads = int(sympy.sympify(case.counter("threads")).subs(values))
            machine = _machine(case, values, threads)
            if machine is None:
                continue
            r, z, t = machine
            arrays = {n: (ctype[s.array(n).ctype] * len(v))(*v) for n, v in init.items()}
            HostKernel(case.kernel).launch(dict(params, **arrays))
            expected.append((k, [list(arrays[a.name]) for a in s.arrays]))
            main_lines.append("  {")
            for a in s.arrays:
                main_lines.append(f"    static {a.ctype} {a.name}[] = {{{', '.join(map(str, init[a.name]))}}};")
            main_lines.append(f"    emu_prop.maxThreadsPerBlock = {t}; emu_prop.sharedMemPerBlockOptin = {z};"
                              f" emu_prop.regsPerBlock = {r};")
            call = ["emu_prop", "emu_attr", "emu_raised", "false", "false"] + [repr(params[p.name]) for p in s.params] \
                + [a.name for a in s.arrays]
            main_lines.append(f"    cudaFuncAttributes emu_attr; bool emu_raised = false;"
                              f" cudaFuncGetAttributes(&emu_attr, {s.function}_{s.index}_case{k});")
            main_lines.append(f'    printf("case %d\\n", {s.function}_{s.index}_try_case{k}({", ".join(call)}));')
            for a in s.arrays:
                fmt = "%d" if a.ctype == "int" else "%.9g"
                main_lines.append(f'    for (int i = 0; i < {sizes[a.name]}; i++)')
                main_lines.append(f'        printf("{fmt} ", {a.name}[i]);')
                main_lines.append('    printf("\\n");')
            main_lines.append("  }")
    source = tmp_path / "run.cpp"
    source.write_text(EMULATION + emit_file(cached_matmul() if name == "matmul_cached" else analysis(name))
                      + "\n".join(main_lines + ["}"]) + "\n")
    build = subprocess.run([GXX, "-std=c++20", "-O1", "-Wall", "-Wno-unknown-pragmas", "-Wno-unused-function",
                            str(source), "-o", str(tmp_path / "run"), "-pthread"],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0 and not build.stderr, build.stderr[:4000]
    out = subprocess.run([str(tmp_path / "run")], capture_output=True, text=True, timeout=300).stdout.split("\n")
    assert expected, "no case could be exercised"
    for n, (k, arrays) in enumerate(expected):
        chunk = out[n * (1 + len(arrays)):(n + 1) * (1 + len(arrays))]
        assert chunk[0] == f"case {k}", chunk[0]
        for got, want in zip(chunk[1:], arrays):
            values = [float(x) for x in got.split()]
            assert values == pytest.approx([float(w) for w in want], rel=1e-5), f"case {k}"


@pytest.mark.skipif(GXX is None, reason="g++ is not on PATH")
def test_dispatcher_asks_the_device_once(tmp_path):
    """In a time loop the tree's dispatcher runs once per step: it reads the device's properties and
    each kernel's attributes once per device, and raises a kernel's dynamic shared memory limit
    (above 48 KB) once, not at every launch."""
    from parakern.verify.build import HEADER
    text = emit_file(analysis("jacobi1d"))
    cases = len(tree("jacobi1d").cases)
    n, s, b = 1024 * 8 * 4 + 2, 8, 1024          # case 1 stages 8*B*s + 8 = 65544 bytes
    main = f"""
#include <stdio.h>
static int a[2 * {n}];
int main() {{
    parakern_cpu_set_device(65536, 200 * 1024, 1024);
    long before = parakern_cpu_attribute_queries();
    int first = jacobi1d_0_dispatch_tree({n}, {s}, {b}, a, 0);
    long after_first = parakern_cpu_attribute_queries();
    int second = jacobi1d_0_dispatch_tree({n}, {s}, {b}, a, 1);
    long after_second = parakern_cpu_attribute_queries();
    parakern_cpu_set_device(65536, 200 * 1024, 1024);   /* another device: asked again */
    int third = jacobi1d_0_dispatch_tree({n}, {s}, {b}, a, 0);
    printf("%d %d %d %ld %ld %ld\\n", first, second, third, after_first - before, after_second - after_first,
           parakern_cpu_attribute_queries() - after_second);
}}
"""
    source = tmp_path / "once.cpp"
    source.write_text(text + main)
    build = subprocess.run([GXX, "-std=c++17", "-O1", "-include", str(HEADER), str(source), "-o", str(tmp_path / "once"),
                            "-pthread"], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[:3000]
    out = subprocess.run([str(tmp_path / "once")], capture_output=True, text=True, timeout=120).stdout.split()
    assert out[:3] == ["1", "1", "1"]
    assert out[3:] == [str(cases + 1), "0", str(cases + 1)]   # every kernel's attributes + one raise; then none
