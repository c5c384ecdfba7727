"""The PolyBench-style corpus (samples/polybench/): each program is right as serial C (against
its plain-loop `<name>_ref`), analyses without errors, emits CUDA that nvcc compiles for sm_80
and sm_90 without a warning, and verifies on the CPU emulation with realistic block shapes."""
from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy
import pytest
from pycparser import c_generator

from conftest import ROOT, SAMPLES
from parakern.codegen import emit_file
from parakern.pipeline import analyze
from parakern.verify import text as verify_text
from parakern.verify import verify_source
from parakern.verify.runner import CTYPES
from parakern.verify.signature import signature

CORPUS = sorted((SAMPLES / "polybench").glob("*.c"))
NVCC = shutil.which("nvcc")

# scalar arguments per program (the meta function's; its _ref takes the ones it names)
VALUES = {
    "gemm": dict(ni=37, nj=29, nk=23, B0=8, B1=4, alpha=1.5, beta=0.5),
    "two_mm": dict(ni=19, nj=17, nk=13, nl=21, B0=4, B1=8, alpha=1.5, beta=0.5),
    "atax": dict(m=33, n=27, B=8),
    "bicg": dict(m=33, n=27, B=8),
    "gesummv": dict(n=45, BS=16, alpha=1.5, beta=0.5),
    "syrk": dict(n=29, m=13, B0=4, B1=8, alpha=1.5, beta=0.5),
    "syr2k": dict(n=29, m=13, B0=4, B1=8, alpha=1.5, beta=0.5),
    "mvt": dict(n=37, B=8),
    "jacobi2d": dict(tsteps=3, n=30, Bx=8, By=4),
    "fdtd2d": dict(tmax=3, nx=21, ny=26, Bx=8, By=4),
    "heat3d": dict(tsteps=2, n=12, Bx=4, By=2, Bz=2),
    "conv2d": dict(h=20, w=27, Bx=8, By=4),
    "covariance": dict(m=14, n=19, B0=4, B1=8, float_n=19.0),
    "doitgen": dict(nr=5, nq=6, np=11, B=4),
    "elementwise3d": dict(nz=5, ny=7, nx=13, Bz=2, By=2, Bx=8),
    "heat1d": dict(N=130, T=3, s=2, B=8),
    "stencil3d": dict(n=12, Bx=4, By=2, Bz=2),
    "mm_tile": dict(ni=16, nj=24, nk=13, B0=4, B1=8),
    "scale_cols": dict(m=19, n=27, B0=4, B1=8, alpha=1.5),
    "trmv": dict(n=45, m=13, B=8),
    "three_mm": dict(ni=19, nj=17, nk=13, nl=21, nm=11, B0=4, B1=8),
    "periodic": dict(N=96, B=32),
    "upsample": dict(n=13, Bx=8, By=4),
    "block_smooth": dict(n=96, B=32, sweeps=5),
    "redblack": dict(n=34, B=8),
}


def test_the_corpus_is_complete():
    assert len(CORPUS) >= 12
    assert {p.stem for p in CORPUS} == set(VALUES)


def _library(path: Path, build: Path) -> ctypes.CDLL:
    lib = build / f"{path.stem}.so"
    subprocess.run(["gcc", "-std=c99", "-O1", "-shared", "-fPIC", "-include", str(SAMPLES / "metafork.h"),
                    str(path), "-o", str(lib), "-lm"], check=True, timeout=120)
    return ctypes.CDLL(str(lib))


def _call(lib, sig, values: dict, arrays: dict) -> None:
    args, types = [], []
    for a in sig.arguments:
        if a.is_array:
            args.append(ctypes.c_void_p(arrays[a.name].ctypes.data))
            types.append(ctypes.c_void_p)
        else:
            args.append(values[a.name])
            types.append(CTYPES[a.ctype])
    function = getattr(lib, sig.function)
    function.argtypes, function.restype = types, None
    function(*args)


def _sizes(sig, values: dict) -> dict:
    generate = c_generator.CGenerator()
    sizes = {}
    for a in sig.arguments:
        if a.is_array:
            count = 1
            for d in a.dims:
                count *= int(eval(generate.visit(d).replace("/", "//"), {}, dict(values)))  # noqa: S307
            sizes[a.name] = count
    return sizes


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_serial_c_matches_the_plain_loops(path, tmp_path):
    text = path.read_text()
    lib = _library(path, tmp_path)
    meta, ref = signature(text, str(path), path.stem), signature(text, str(path), f"{path.stem}_ref")
    values = VALUES[path.stem]
    sizes = _sizes(meta, values)
    rng = numpy.random.default_rng(3)
    inputs = {a.name: rng.uniform(-1, 1, sizes[a.name]).astype(numpy.dtype(CTYPES[a.ctype]))
              for a in meta.arguments if a.is_array}
    got = {n: a.copy() for n, a in inputs.items()}
    want = {n: a.copy() for n, a in inputs.items()}
    _call(lib, meta, values, got)
    _call(lib, ref, values, want)
    for name in inputs:
        assert numpy.allclose(got[name], want[name], rtol=1e-6, atol=1e-6), name
    assert any(not numpy.array_equal(got[n], inputs[n]) for n in inputs)   # the program did something


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_analyses_without_errors(path):
    analysis = analyze(path.read_text(), str(path.relative_to(ROOT)))
    errors = [d for d in analysis.diagnostics if d.severity.value == "error"]
    assert not errors, [f"{d.span.line}:{d.span.col} {d.message}" for d in errors]
    assert analysis.results and all(r.tree is not None and r.tree.cases for r in analysis.results)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_emitted_cuda_compiles_without_warnings(path, tmp_path):
    source = tmp_path / f"{path.stem}.cu"
    source.write_text(emit_file(analyze(path.read_text(), str(path.relative_to(ROOT)))))
    done = subprocess.run([NVCC, "-c", "-Werror", "all-warnings", "-gencode", "arch=compute_80,code=sm_80",
                           "-gencode", "arch=compute_90,code=sm_90", "-o", str(tmp_path / "k.o"), str(source)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr[-3000:]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_verifies_with_realistic_blocks(path):
    result = verify_source(path.read_text(), str(path.relative_to(ROOT)), points=2)
    report = verify_text(result)
    assert result.ok, report
    points = [p for s in result.schedules for c in s.cases for p in c.points]
    assert points and all(p.ok for p in points), report
    # a warp or more per block and several blocks wherever the case allows it: most points
    assert sum(p.realistic for p in points) >= len(points) // 2, report
