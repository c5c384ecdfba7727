"""Reference figures measured on the same GPU as the bench, through CuPy (its own process, so
that its context does not meet pycuda's): a device-to-device copy (the bandwidth ceiling of
memory-bound kernels), cuBLAS SGEMM (`cupy.matmul` on float32, FP32 arithmetic: TF32 is used
only when CUPY_TF32=1, which this script refuses), CuPy's elementwise add of two int32
matrices (matadd's reference) and a transposing copy (transpose's).

    python bench/gpu_references.py --out references.json [--repeat 20]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys


def timed(cupy, fn, repeat: int) -> list:
    """Seconds of each of `repeat` calls of fn, after three warm-up calls (CUDA events)."""
    for _ in range(3):
        fn()
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(repeat):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) / 1000.0)
    return times


def summary(times: list, **extra) -> dict:
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times), **extra}


def copy_reference(cupy, nbytes: int, repeat: int) -> dict:
    src = cupy.ones(nbytes // 4, dtype=cupy.int32)
    dst = cupy.empty_like(src)
    t = timed(cupy, lambda: cupy.cuda.runtime.memcpy(dst.data.ptr, src.data.ptr, src.nbytes,
                                                     cupy.cuda.runtime.memcpyDeviceToDevice), repeat)
    s = summary(t, bytes=src.nbytes)
    s["gbs"] = 2 * src.nbytes / s["median_s"] / 1e9   # bytes read + bytes written
    return s


def sgemm_reference(cupy, n: int, repeat: int) -> dict:
    rng = cupy.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=cupy.float32)
    b = rng.standard_normal((n, n), dtype=cupy.float32)
    c = cupy.empty((n, n), dtype=cupy.float32)
    t = timed(cupy, lambda: cupy.matmul(a, b, out=c), repeat)
    s = summary(t, n=n)
    s["tflops"] = 2 * n ** 3 / s["median_s"] / 1e12
    return s


def add_reference(cupy, n: int, repeat: int, copy_gbs: float) -> dict:
    a = cupy.arange(n * n, dtype=cupy.int32).reshape(n, n)
    b = a + 1
    c = cupy.empty_like(a)
    t = timed(cupy, lambda: cupy.add(a, b, out=c), repeat)
    s = summary(t, n=n, bytes=3 * a.nbytes)
    s["gbs"] = 3 * a.nbytes / s["median_s"] / 1e9
    s["copy_fraction"] = s["gbs"] / copy_gbs
    return s


def transpose_reference(cupy, n: int, repeat: int, copy_gbs: float) -> dict:
    a = cupy.arange(n * n, dtype=cupy.float32).reshape(n, n)
    c = cupy.empty_like(a)
    t = timed(cupy, lambda: c.__setitem__(Ellipsis, a.T), repeat)
    s = summary(t, n=n, bytes=2 * a.nbytes)
    s["gbs"] = 2 * a.nbytes / s["median_s"] / 1e9
    s["copy_fraction"] = s["gbs"] / copy_gbs
    return s


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    if os.environ.get("CUPY_TF32", "0") != "0":
        print("gpu_references: unset CUPY_TF32: SGEMM must be FP32 to compare with FP32 kernels", file=sys.stderr)
        return 2
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no cupy, or no GPU
        print(f"gpu_references: CuPy cannot use a GPU here ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 3
    props = cupy.cuda.runtime.getDeviceProperties(0)
    out = {"device": props["name"].decode(), "cupy": cupy.__version__,
           "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(), "copy": {}}
    for mib in (64, 256, 1024):
        out["copy"][f"{mib}MiB"] = copy_reference(cupy, mib << 20, args.repeat)
    out["sgemm"] = {f"n{n}": sgemm_reference(cupy, n, args.repeat) for n in (1024, 2048, 4096)}
    out["add_int32"] = {"N8192": add_reference(cupy, 8192, args.repeat, out["copy"]["256MiB"]["gbs"])}
    out["transpose_float32"] = {"N8192": transpose_reference(cupy, 8192, args.repeat, out["copy"]["256MiB"]["gbs"])}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2)
    print(json.dumps({"copy_GBs": {k: round(v["gbs"]) for k, v in out["copy"].items()},
                      "sgemm_TFLOPs": {k: round(v["tflops"], 1) for k, v in out["sgemm"].items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
