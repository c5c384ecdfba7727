"""compute-sanitizer (memcheck, racecheck) on every case's kernel of every sample, at one small
point per sample: `parakern bench --every-case` at that point under the sanitizer launches
each case that fits the device, and the generated dispatcher. Writes one log per sample and
tool, and a JSON summary (errors counted from the sanitizer's ERROR SUMMARY line).

    python bench/gpu_sanitize.py --out DIR [SAMPLE ...] [--tools memcheck,racecheck]
"""
from __future__ import annotations

import argparse
import json
from concurrent.futures import ThreadPoolExecutor
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paper_gpu import SUITE, _env, bench_command, variant_file  # noqa: E402


def sanitize(name: str, tool: str, out: Path, timeout: float) -> dict:
    entry = SUITE[name]
    file = variant_file(entry, out)
    command = ["compute-sanitizer", "--tool", tool, "--print-limit", "20",
               *bench_command(file, entry.small, (), 1, 1, None, None, instances=entry.instances), *entry.options]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=file.parent, env=_env(), timeout=timeout)
        code, text = done.returncode, done.stdout + "\n" + done.stderr
    except subprocess.TimeoutExpired:
        code, text = 124, f"stopped after {timeout:.0f} s"
    log = out / f"sanitize_{name.replace('+', '_')}_{tool}.log"
    log.write_text(text)
    # memcheck: "ERROR SUMMARY: 0 errors"; racecheck: "RACECHECK SUMMARY: 0 hazards displayed (0 errors, ...)"
    found = re.findall(r"(?:ERROR SUMMARY: |SUMMARY: \d+ hazards? displayed \()(\d+) error", text)
    launched = sorted(set(re.findall(r"case (\d+)\n", text + "\n")))
    result = {"sample": name, "tool": tool, "point": list(entry.small), "exit": code,
              "errors": int(found[-1]) if found else None, "seconds": round(time.perf_counter() - start, 1),
              "log": log.name, "cases_launched": [int(k) for k in launched]}
    print(f"{tool} {name}: {result['errors']} errors, exit {code}, {result['seconds']} s", file=sys.stderr, flush=True)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("samples", nargs="*", default=[])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tools", default="memcheck,racecheck")
    parser.add_argument("--timeout", type=float, default=240)
    parser.add_argument("--jobs", type=int, default=6, help="sanitizer runs at a time (default 6)")
    args = parser.parse_args(argv)
    if shutil.which("compute-sanitizer") is None:
        print("gpu_sanitize: compute-sanitizer is not on PATH (it comes with the CUDA toolkit)", file=sys.stderr)
        return 3
    args.out.mkdir(parents=True, exist_ok=True)
    names = args.samples or [n for n, e in SUITE.items() if e.small]
    for name in names:   # the variants' files, written once before the runs share them
        variant_file(SUITE[name], args.out)
    runs = [(name, tool) for name in names for tool in args.tools.split(",")]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:   # the checks, not timings: they may share the GPU
        results = list(pool.map(lambda run: sanitize(*run, args.out, args.timeout), runs))
    (args.out / "sanitizer.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0 if all(r["errors"] == 0 and r["exit"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
