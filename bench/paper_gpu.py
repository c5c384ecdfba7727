"""The bench of the paper's examples (section 6) on a GPU: one `parakern bench` run per
sample and data size, with the paper's sweeps, written to docs/bench/ (markdown tables,
JSON, CSV, heat maps) with an index RESULTS.md.

    python bench/paper_gpu.py [SAMPLE ...] [--out docs/bench] [--repeat 20] [--quick]

Needs pycuda, nvcc and an NVIDIA GPU (see docs/bench/README.md for a machine without
network). --quick uses tiny sizes: a check of the whole path (e.g. on the emulated GPU of
tests/fakes), not figures.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# sample -> [(tag, data arguments)], sweep arguments, serial repeats (the serial C of a big
# matmul takes seconds: once is enough)
SUITE = {
    "matadd": ([("N4096", ["N=4096"])], ["B0=4,8,16,32", "B1=8,16,32,64"], 3),
    "matmul": ([("n1024", ["n=1024"]), ("n2048", ["n=2048"])], ["ub1=8,16,32,64", "B0=4,8", "s=2,4"], 1),
    "jacobi1d": ([("N32770_T4", ["N=32770", "T=4"])], ["B=16,32,64,128,256", "s=2,4,8"], 3),
    "transpose": ([("N16384", ["N=16384"])], ["B0=4,8,16,32", "B1=32", "s=2,4,8"], 1),
    "polydiv": ([(f"M{m}", [f"M={m}", f"N={m + 100}", "P=65521"]) for m in (8192, 16384, 32768)],
                ["B=16,32,64,128,256,512", "s=1"], 1),
}
QUICK = {
    "matadd": ([("N32", ["N=32"])], ["B0=4,8", "B1=8"], 1),
    "matmul": ([("n16", ["n=16"])], ["ub1=4,8", "B0=4", "s=2"], 1),
    "jacobi1d": ([("N130_T2", ["N=130", "T=2"])], ["B=16,32", "s=2"], 1),
    "transpose": ([("N32", ["N=32"])], ["B0=4", "B1=8", "s=2"], 1),
    "polydiv": ([("M16", ["M=16", "N=20", "P=97"])], ["B=8", "s=1"], 1),
}


def run(sample: str, tag: str, data: list, sweep: list, serial_repeat: int, out: Path, repeat: int) -> dict:
    stem = out / f"{sample}_{tag}"
    command = [sys.executable, "-m", "parakern", "bench", str(ROOT / "samples" / f"{sample}.c"),
               *[a for d in data for a in ("--data", d)], *[a for s in sweep for a in ("--sweep", s)],
               "--repeat", str(repeat), "--serial-repeat", str(serial_repeat), "--markdown",
               "--json", f"{stem}.json", "--csv", f"{stem}.csv", "--plot", f"{stem}.png"]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    plan = "\n".join(line for line in done.stderr.splitlines() if not line.startswith("["))
    (Path(f"{stem}.md")).write_text(f"# {sample} ({' '.join(data)})\n\n`{' '.join(command[2:])}`\n\n"
                                    f"{done.stdout}\n\n## Plan and messages\n\n```\n{plan}\n```\n")
    print(f"{sample} {tag}: exit {done.returncode} in {seconds:.1f} s -> {stem}.md", file=sys.stderr)
    return {"sample": sample, "tag": tag, "exit": done.returncode, "seconds": round(seconds, 1),
            "report": f"{stem.name}.md"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("samples", nargs="*", default=[], help=f"some of {', '.join(SUITE)} (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "bench")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks the path, gives no figures")
    args = parser.parse_args(argv)
    suite = QUICK if args.quick else SUITE
    unknown = [s for s in args.samples if s not in suite]
    if unknown:
        parser.error(f"unknown sample {unknown[0]!r}: choose from {', '.join(suite)}")
    args.out.mkdir(parents=True, exist_ok=True)
    runs = []
    for sample in args.samples or list(suite):
        cases, sweep, serial_repeat = suite[sample]
        for tag, data in cases:
            runs.append(run(sample, tag, data, sweep, serial_repeat, args.out, args.repeat))
    index = args.out / "RESULTS.json"
    previous = json.loads(index.read_text()) if index.exists() else {}
    previous.update({f"{r['sample']}_{r['tag']}": r for r in runs})
    index.write_text(json.dumps(previous, indent=2) + "\n")
    return 0 if all(r["exit"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
