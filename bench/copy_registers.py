"""Registers and spills (ptxas -v) of every kernel of every sample with cache(...), this tree
against another (a baseline checkout), in one table; without a GPU.

    python bench/copy_registers.py --baseline /tmp/main          # git archive main server | tar -x -C /tmp/main
    python bench/copy_registers.py --baseline /tmp/main --only matmul

Each configuration (a sample with cache(...), the compile-time instances of `FIXES`, and matmul
with cache(a, b) at the four points of docs/bench/register-tiles.md, with and without
--register-tiles) is emitted by each tree (`python -m parakern emit`, the tree's `server/`
first on PYTHONPATH), compiled with `nvcc -cubin -arch=<arch> -O3 -Xptxas -v`, and each kernel
printed with its registers and spilled bytes (stores/loads) in both, marked `WORSE` where this
tree's kernel has more spilled bytes, or more registers as the SM allocates them (per warp in
units of 256: 42 and 48 registers take the same, so the same blocks fit), `more, same allocation`
where only the count rose within that unit, `better` where fewer registers or spills. The last line
counts them. Needs nvcc; exits 2 without it, 1 where any kernel is worse.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from sass_counts import ptxas_figures  # noqa: E402  (the sibling script: one parser of ptxas's log)
from parakern.counters.registers import ALLOCATION_UNIT, WARP_SIZE  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MATMUL_POINTS = ("B0=16,ub1=16,s=1", "B0=32,ub1=32,s=4", "B0=16,ub1=16,s=2", "B0=8,ub1=32,s=1")
# Compile-time instances of the samples with cache(...): block sizes a user would pick.
FIXES = {
    "jacobi1d.c": ("B=128,s=4",), "polydiv.c": ("B=128,s=2",),
    "stencil2d.c": ("Bx=32,By=8", "Bx=16,By=16"), "transpose.c": ("B0=32,B1=32,s=4", "B0=8,B1=32,s=2"),
    "conv2d.c": ("Bx=32,By=8",), "heat1d.c": ("B=128,s=4",), "jacobi2d.c": ("Bx=32,By=8",),
    "mm_tile.c": ("B0=16,B1=16",), "periodic.c": ("B=128",), "stencil3d.c": ("Bx=32,By=4,Bz=4",),
}


def configurations() -> list[tuple[str, Path, str, tuple, tuple]]:
    """(label, sample, cache clause to add or '', fix points, extra emit flags)."""
    out = []
    for sample in sorted([*ROOT.glob("samples/*.c"), *ROOT.glob("samples/polybench/*.c")]):
        if "cache(" in sample.read_text():
            out.append((sample.stem, sample, "", FIXES.get(sample.name, ()), ()))
    matmul = ROOT / "samples/matmul.c"
    out.append(("matmul+cache(a,b)", matmul, "a, b", MATMUL_POINTS, ()))
    out.append(("matmul+cache(a,b)+tiles", matmul, "a, b", MATMUL_POINTS, ("--register-tiles",)))
    return out


def figures(tree: Path, label: str, sample: Path, cache: str, fixes, flags, arch: str, nvcc: str) -> dict:
    """{kernel: (registers, spill store bytes, spill load bytes)} of the file `tree` emits."""
    with tempfile.TemporaryDirectory() as tmp:
        text = sample.read_text()
        if cache:
            text = text.replace("meta_schedule {", f"meta_schedule cache({cache}) {{")
        source = Path(tmp) / sample.name
        source.write_text(text)
        for header in sample.parent.glob("*.h"):
            shutil.copy(header, tmp)
        shutil.copy(ROOT / "samples/metafork.h", tmp)
        cu, cubin = Path(tmp) / "k.cu", Path(tmp) / "k.cubin"
        env = dict(os.environ, PYTHONPATH=str(tree / "server"), PYTHONHASHSEED="0")
        fix_args = [a for f in fixes for a in ("--fix", f)]
        emitted = subprocess.run([sys.executable, "-m", "parakern", "emit", str(source), "--target", arch,
                                  *fix_args, *flags, "-o", str(cu)], env=env, capture_output=True, text=True)
        if emitted.returncode != 0:
            raise SystemExit(f"{label}: emit failed in {tree}:\n{emitted.stderr[-2000:]}")
        log = subprocess.run([nvcc, "-cubin", f"-arch={arch}", "-O3", "-Xptxas", "-v", "-o", str(cubin), str(cu)],
                             capture_output=True, text=True)
        if log.returncode != 0:
            raise SystemExit(f"{label}: nvcc failed on {tree}'s file:\n{log.stderr[-2000:]}")
        return {_plain(k): v for k, v in ptxas_figures(log.stderr).items()}


def _plain(name: str) -> str:
    """A mangled kernel name (`_Z31matmul_0_case2_B0_32_ub1_32_s_4PfPKfS1_i`) without its mangling."""
    m = re.match(r"_Z(\d+)", name)
    return name[m.end():m.end() + int(m.group(1))] if m else name


def allocated(registers: int) -> int:
    """Registers per thread as the SM allocates them (per warp, in units of ALLOCATION_UNIT)."""
    per_warp = -(-registers * WARP_SIZE // ALLOCATION_UNIT) * ALLOCATION_UNIT
    return per_warp // WARP_SIZE


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True, help="a checkout of the other tree (its server/ is used)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--only", default="", help="configurations whose label contains this")
    args = ap.parse_args(argv)
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        print("copy_registers: needs nvcc", file=sys.stderr)
        return 2
    worse = better = same = rounded = 0
    print(f"{'configuration':<26} {'kernel':<44} {'regs base':>9} {'regs now':>8} {'spill base':>10} "
          f"{'spill now':>9}")
    for label, sample, cache, fixes, flags in configurations():
        if args.only not in label:
            continue
        base = figures(Path(args.baseline), label, sample, cache, fixes, flags, args.arch, nvcc)
        now = figures(ROOT, label, sample, cache, fixes, flags, args.arch, nvcc)
        for kernel in sorted(set(base) | set(now)):
            b, n = base.get(kernel), now.get(kernel)
            if b is None or n is None:
                mark = "only in base" if n is None else "only now"
            elif n == b:
                mark, same = "", same + 1
            elif allocated(n[0]) > allocated(b[0]) or n[1] > b[1]:
                mark, worse = "WORSE", worse + 1
            elif n[0] > b[0]:
                mark, rounded = "more, same allocation", rounded + 1
            else:
                mark, better = "better", better + 1
            regs = lambda f: "-" if f is None else str(f[0])   # noqa: E731
            spill = lambda f: "-" if f is None else f"{f[1]}/{f[2]}"   # noqa: E731
            print(f"{label:<26} {kernel:<44} {regs(b):>9} {regs(n):>8} {spill(b):>10} {spill(n):>9}  {mark}")
    print(f"{worse} kernels worse, {rounded} more registers in the same allocation, {better} better, "
          f"{same} the same")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
