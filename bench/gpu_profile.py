"""Nsight Compute (ncu) on every case's kernel of a sample at one point: `parakern bench
--every-case --repeat 1` at that point under ncu, limited to the case kernels, with the
sections that tell a memory-bound kernel from a compute-bound one (speed of light, memory
workload, occupancy, launch statistics). Writes the report as text.

    python bench/gpu_profile.py SAMPLE --point n=2048,ub1=32,B0=8,s=4 --out DIR
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paper_gpu import SUITE, _env, bench_command, variant_file  # noqa: E402

SECTIONS = ("SpeedOfLight", "MemoryWorkloadAnalysis", "Occupancy", "LaunchStats", "ComputeWorkloadAnalysis")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sample", choices=sorted(SUITE))
    parser.add_argument("--point", required=True, help="NAME=V,NAME=V,...: every parameter of the point")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args(argv)
    if shutil.which("ncu") is None:
        print("gpu_profile: ncu (Nsight Compute) is not on PATH", file=sys.stderr)
        return 3
    args.out.mkdir(parents=True, exist_ok=True)
    entry = SUITE[args.sample]
    file = variant_file(entry, args.out)
    point = [p for p in args.point.split(",") if p]
    # each case is launched 3 (warm-up) + 1 (timed) + 1 (checked) times per execution of the
    # schedule: the second launch of each case kernel is profiled (warm caches, one per case)
    command = ["ncu", "--target-processes", "all", "--kernel-id", r"::regex:_case[0-9]+$:2",
               *[a for s in SECTIONS for a in ("--section", s)],
               *bench_command(file, point, (), 1, 1, None, None)]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=file.parent, env=_env(),
                              timeout=args.timeout)
        code, text = done.returncode, done.stdout + "\n" + done.stderr
    except subprocess.TimeoutExpired:
        code, text = 124, f"stopped after {args.timeout:.0f} s"
    name = f"ncu_{args.sample.replace('+', '_')}_{'_'.join(p.replace('=', '') for p in point)}.txt"
    (args.out / name).write_text(f"$ {' '.join(command)}\n\n{text}")
    print(f"ncu {args.sample} {args.point}: exit {code} in {time.perf_counter() - start:.1f} s -> {name}",
          file=sys.stderr)
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
