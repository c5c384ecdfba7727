"""Static SASS instruction counts of a file's kernels, without a GPU.

    python bench/sass_counts.py samples/matmul.c --cache a,b --fix B0=16,ub1=16,s=4 [--arch sm_90]
    python bench/sass_counts.py emitted.cu          # a file `parakern emit` wrote

Emits the file (`parakern emit`, with `--fix` instances), compiles it with nvcc to a cubin
and disassembles it with cuobjdump (on PATH, or PARAKERN_CUOBJDUMP; the PyPI wheel
`nvidia-cuda-cuobjdump` has one), then prints per kernel: instructions, FFMA/DFMA (one
multiply-add each), shared loads (LDS), global loads and stores (LDG, STG). The counts are
of the whole kernel (a loop body counts once), which is what tells how many loads feed the
multiply-adds of one unrolled iteration, and FFMA/LDS, the multiply-adds per shared-memory
load instruction (a register tile's figure of merit), beside ptxas's registers and spilled
bytes (stores/loads) per kernel. `--cache a,b` adds `cache(a, b)` to every meta_schedule that
has no cache clause. Needs nvcc; says so and exits 2 where a tool is missing.
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

OPS = ("FFMA", "DFMA", "LDS", "LDG", "STG")


def counts(sass: str) -> list[tuple[str, int, dict]]:
    """(kernel, instructions, {op: count}) for each function of cuobjdump's output."""
    out = []
    for part in re.split(r"\n\s*Function : ", sass)[1:]:
        name = part.split("\n", 1)[0].strip()
        ops = re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", part)
        out.append((name, len(ops), {op: sum(1 for o in ops if o.split(".")[0] == op) for op in OPS}))
    return out


def ptxas_figures(log: str) -> dict:
    """{kernel: (registers, spill store bytes, spill load bytes)} from nvcc -Xptxas -v's log."""
    out = {}
    for part in re.split(r"ptxas info\s*: Compiling entry function ", log)[1:]:
        name = part.split("'")[1]
        regs = re.search(r"Used (\d+) registers", part)
        spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", part)
        spilled = tuple(int(x) for x in spill.groups()) if spill else (0, 0)
        out[name] = (int(regs.group(1)) if regs else 0, *spilled)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--fix", action="append", default=[], help="compile-time values, as for `parakern emit`")
    ap.add_argument("--cache", default="", help="arrays to add as cache(...) where a schedule has none")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--only", default="", help="print only kernels whose name contains this")
    args = ap.parse_args(argv)
    nvcc = shutil.which("nvcc")
    cuobjdump = os.environ.get("PARAKERN_CUOBJDUMP") or shutil.which("cuobjdump")
    if nvcc is None or cuobjdump is None:
        print("sass_counts: needs nvcc and cuobjdump (pip install nvidia-cuda-cuobjdump, then "
              "PARAKERN_CUOBJDUMP=<its bin/cuobjdump>)", file=sys.stderr)
        return 2
    text = Path(args.file).read_text()
    if args.cache:
        text = text.replace("meta_schedule {", f"meta_schedule cache({', '.join(args.cache.split(','))}) {{")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / Path(args.file).name
        source.write_text(text)
        for header in Path(args.file).parent.glob("*.h"):
            shutil.copy(header, tmp)
        cu, cubin = Path(tmp) / "k.cu", Path(tmp) / "k.cubin"
        fixes = [a for f in args.fix for a in ("--fix", f)]
        if args.file.endswith(".cu"):   # emitted already (parakern emit -o): counted as it is
            shutil.copy(args.file, cu)
        else:
            subprocess.run([sys.executable, "-m", "parakern", "emit", str(source), "-o", str(cu), *fixes], check=True)
        log = subprocess.run([nvcc, "-cubin", f"-arch={args.arch}", "-O3", "-Xptxas", "-v", "-o", str(cubin),
                              str(cu)], check=True, capture_output=True, text=True).stderr
        sass = subprocess.run([cuobjdump, "-sass", str(cubin)], check=True, capture_output=True, text=True).stdout
    figures = ptxas_figures(log)
    print(f"{'kernel':<48} {'instr':>6} " + " ".join(f"{op:>5}" for op in OPS) + "  FFMA/LDS  regs  spill st/ld B")
    for name, total, ops in sorted(counts(sass), key=lambda x: x[0]):
        if args.only in name:
            ratio = f"{ops['FFMA'] / ops['LDS']:.2f}" if ops["LDS"] else "-"
            regs, stores, loads = figures.get(name, (0, 0, 0))
            print(f"{name[:48]:<48} {total:>6} " + " ".join(f"{ops[op]:>5}" for op in OPS) +
                  f"  {ratio:>8}  {regs:>4}  {stores}/{loads}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
