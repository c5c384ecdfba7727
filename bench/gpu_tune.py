"""The time model against a GPU: `parakern tune --measure` on the samples of bench/paper_gpu.py.

    python bench/gpu_tune.py [SAMPLE ...] --out DIR [--profile h100] [--top 5] [--quick] [--deadline S]

For each sample and size of paper_gpu's SUITE (the same files, `cache(...)` variants
included), tune ranks every feasible configuration by the model, then runs the top ones and
a sample of the rest through the bench: the JSON it prints goes to DIR/tune_<run>.json, with
Spearman's rank correlation of predicted and measured times and the fraction of the best
measured speed that the model's pick reaches (issue 17's targets: >= 0.7 and >= 80 %;
bench/gpu_page.py puts them on the GPU's page). --profile defaults to the profile named after
the GPU that nvidia-smi reports (h100, h200, a100, ...). --quick: tiny sizes (a check of the
path, e.g. on the emulated GPU of tests/fakes), no figures.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from paper_gpu import QUICK, SUITE, messages, run_command, sizes_in_time, unknown_name, variant_file  # noqa: E402

from parakern.machine.devices import profile_key  # noqa: E402


def detected_profile() -> "str | None":
    """The machine/devices.py profile of the GPU that nvidia-smi reports, if any."""
    try:
        name = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=30).stdout.splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return None
    return profile_key(name)


def tune_command(file: Path, data, profile: str, top: int, repeat: int) -> list:
    return [sys.executable, "-m", "parakern", "tune", file.name, "--profile", profile,
            *[a for d in data for a in ("--data", d)], "--top", str(top), "--repeat", str(repeat),
            "--measure", "--json"]


def run(name: str, entry, tag: str, data, out: Path, profile: str, top: int, repeat: int, timeout: float) -> dict:
    file = variant_file(entry, out)
    path = out / f"tune_{name.replace('+', '_')}_{tag}.json"
    code, stdout, stderr, seconds = run_command(tune_command(file, data, profile, top, repeat), file.parent, timeout)
    try:
        doc = json.loads(stdout)
    except json.JSONDecodeError:
        doc = {"schedules": []}
    doc.update({"run": f"{name}_{tag}", "data": list(data), "profile": profile, "exit": code,
                "messages": messages(stderr)})
    path.write_text(json.dumps(doc, indent=1) + "\n")
    figures = [(s.get("schedule"), s["measure"]["spearman"], s["measure"]["pick_fraction_of_best"])
               for s in doc["schedules"] if s.get("measure")]
    shown = "; ".join(f"{s}: Spearman {r:.2f}, pick {p:.0%} of the best" for s, r, p in figures) or "nothing measured"
    print(f"tune {name} {tag}: exit {code} in {seconds:.1f} s: {shown} -> {path.name}", file=sys.stderr, flush=True)
    return {"run": f"{name}_{tag}", "exit": code}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("samples", nargs="*", default=[])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--profile", help="machine/devices.py profile for the model (default: the GPU's own)")
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--deadline", type=float, default=0, help="seconds after which no new run starts (0: none)")
    args = parser.parse_args(argv)
    suite = QUICK if args.quick else SUITE
    unknown = unknown_name(suite, args.samples)
    if unknown:
        parser.error(unknown)
    profile = args.profile or detected_profile()
    if profile is None:
        print("gpu_tune: no GPU profile matches this GPU's name; give one with --profile", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    runs = []
    for name, entry, tag, data, _sweep, left in sizes_in_time(suite, args.samples or list(suite), args.deadline):
        runs.append({"run": f"{name}_{tag}", "exit": None} if left is None
                    else run(name, entry, tag, data, args.out, profile, args.top, args.repeat, left))
    return 0 if all(r["exit"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
