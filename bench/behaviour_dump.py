"""Everything parakern prints for the samples, in one folder: a refactoring that changes no
behaviour leaves it identical (`diff -r before/ after/`).

    python bench/behaviour_dump.py OUT_DIR [--jobs 2] [--only NAME ...]

Per program of samples/, samples/polybench/ and samples/wrong/: the case trees
(`optimize`, text and JSON), the emitted CUDA (`emit`), the memory traffic (`profile`) and
the tune tables on two GPU profiles (`tune --profile h100|t4`, text and JSON, every data
parameter 1024). Each command
runs as the CLI a user starts (`python -m parakern`, from the repository root), so the dump
holds what the user sees, exit status included. Blanked: the timings (the tree's seconds) and
z3's witnesses (a model z3 finds for a consistent case; two runs of the same code on the same
machine may print different ones): neither is behaviour.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "optimize.txt": ["optimize"],
    "optimize.json": ["optimize", "--json"],
    "emit.cu": ["emit"],
    "profile.txt": ["profile"],
    "tune-h100.txt": ["tune", "--profile", "h100"],
    "tune-t4.json": ["tune", "--profile", "t4", "--json"],
}
DATA_SIZE = 1024    # tune's size of every data parameter
# "tree height 7 (bound 35), 8 inconsistent branches pruned, 0.50 s" and the JSON's seconds
_SECONDS_TEXT = re.compile(r"(pruned, )\d+(\.\d+)? s\b")
_WITNESS_TEXT = re.compile(r"^(\s*witness: ).*$", re.M)


def programs() -> list[Path]:
    found = sorted((ROOT / "samples").glob("*.c")) + sorted((ROOT / "samples" / "polybench").glob("*.c"))
    return found + sorted((ROOT / "samples" / "wrong").glob("*.c"))


def blank_times(name: str, text: str) -> str:
    if name.endswith(".json"):
        try:
            document = json.loads(text)
        except ValueError:
            return text
        _blank_seconds(document)
        return json.dumps(document, indent=1, sort_keys=True) + "\n"
    return _WITNESS_TEXT.sub(r"\1<z3 model>", _SECONDS_TEXT.sub(r"\1<t> s", text))


def _blank_seconds(value) -> None:
    if isinstance(value, dict):
        for key in value:
            if key == "seconds":
                value[key] = "<t>"
            elif key == "witness":
                value[key] = "<z3 model>"
            else:
                _blank_seconds(value[key])
    elif isinstance(value, list):
        for item in value:
            _blank_seconds(item)


def data_values(optimize_json: str) -> list[str]:
    """--data N=1024 for every data parameter of the file's schedules (tune needs their sizes)."""
    try:
        schedules = json.loads(optimize_json).get("schedules", [])
    except ValueError:
        return []
    names = sorted({n for s in schedules for n in s.get("parameters", {}).get("data", [])})
    return [item for n in names for item in ("--data", f"{n}={DATA_SIZE}")]


def dump_one(python: str, program: Path, out: Path) -> str:
    label = str(program.relative_to(ROOT / "samples")).replace("/", "__")[:-2]
    data: list[str] = []
    for name, command in COMMANDS.items():
        extra = data if command[0] == "tune" else []
        run = subprocess.run([python, "-m", "parakern", *command, *extra, str(program.relative_to(ROOT))],
                             cwd=ROOT, capture_output=True, text=True, timeout=900)
        if name == "optimize.json":
            data = data_values(run.stdout)
        body = blank_times(name, run.stdout)
        (out / f"{label}.{name}").write_text(f"exit {run.returncode}\n{body}\n--- stderr\n"
                                             f"{blank_times(name, run.stderr)}")
    return label


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--only", nargs="*", default=None, help="program names (without .c)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    chosen = [p for p in programs() if args.only is None or p.stem in args.only]
    with ThreadPoolExecutor(args.jobs) as pool:
        for label in pool.map(lambda p: dump_one(args.python, p, args.out), chosen):
            print(label, flush=True)
    print(f"{len(chosen)} programs x {len(COMMANDS)} commands in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
