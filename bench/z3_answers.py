"""What `parakern optimize` asks z3, per sample: how many checks end sat, unsat and unknown,
the work (z3's resource units, `rlimit count`) and wall time they take, per place that asks.

    .venv/bin/python bench/z3_answers.py [--samples matmul ...] [--checks] [--save F.json] [--compare F.json]

Each sample runs `optimize` in a fresh process (the CLI's main, text to /dev/null) with
`z3.Solver.check` wrapped: every check of the run is counted, those of the dependence tests,
the footprint prover and the witnesses' own context included. The work of a check is read
from z3's statistics (the context's count after the check less its count after the one
before). Per place (the constraints function asked, and who asked it): sat / unsat / unknown,
the most work a decided check took, the work and seconds the unknown ones took. This is how
the resource limits of `symbolic/constraints.py` are calibrated: a limit above every decided
check's work decides what was decided before, and ends the unknown ones at that work.
Per question (constraints' _solve_cached, the final answer after its stages): the same
counts, and the questions that took more than one check. --checks prints every check
(answer, work, milliseconds, place) instead of the summary; --save writes the run to a file,
and --compare prints the questions a saved run answered otherwise (a change of the limits
must answer every question the former limits decided).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = tuple(sorted(p.stem for p in (ROOT / "samples").glob("*.c")))

_CHILD = r"""
import contextlib, json, os, sys, time, traceback
import z3
from parakern.commands import cli

checks, counts = [], {}
_check = z3.Solver.check
_ASKERS = ("constraints.py", "prover.py", "dependence.py")   # the modules that ask z3

def place():   # the outermost function of the modules that ask z3, and the parakern one calling it
    names = [(f.name, f.filename) for f in traceback.extract_stack()[:-2]]
    inner = [n for n, path in names if "parakern" in path]
    asking = [i for i, (n, path) in enumerate(names) if "parakern" in path and path.endswith(_ASKERS)]
    if not asking:
        return "/".join(inner[-2:])
    first = asking[0]
    caller = next((n for n, path in reversed(names[:first]) if "parakern" in path), "?")
    return f"{names[first][0]} <- {caller}"

def check(self, *args):
    start = time.perf_counter()
    answer = _check(self, *args)
    ms = 1000 * (time.perf_counter() - start)
    stats = self.statistics()
    total = stats.get_key_value("rlimit count") if "rlimit count" in stats.keys() else 0
    key = id(self.ctx)
    work = total - counts.get(key, 0)
    counts[key] = total
    reason = self.reason_unknown() if answer == z3.unknown else ""
    checks.append((str(answer), work, round(ms, 2), place(), reason))
    return answer

z3.Solver.check = check

# questions: each distinct question of the constraint systems (_solve_cached), its final answer
from parakern.symbolic import constraints as cs
questions, seen = [], set()
_solve_cached = cs._solve_cached

def solve_cached(premises, goals, limit, names):
    key = (premises, goals, limit, names)
    if key in seen:
        return _solve_cached(premises, goals, limit, names)
    seen.add(key)
    where, first = place(), len(checks)
    start = time.perf_counter()
    outcome = _solve_cached(premises, goals, limit, names)
    ms = 1000 * (time.perf_counter() - start)
    work = sum(c[1] for c in checks[first:])
    questions.append((outcome.status, work, round(ms, 2), where,
                      " & ".join(map(str, premises + goals))[:2000], len(checks) - first))
    return outcome

cs._solve_cached = solve_cached
with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
    status = cli.main(["optimize", "--target", sys.argv[2], sys.argv[1]])
print(json.dumps({"status": status, "checks": checks, "questions": questions}))
"""


def run(sample: str, target: str) -> dict:
    path = str(ROOT / "samples" / f"{sample}.c")
    out = subprocess.run([sys.executable, "-c", _CHILD, path, target], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    return json.loads(out.strip().splitlines()[-1])


def _counts(items) -> str:
    return ", ".join(f"{a} {sum(1 for i in items if i[0] == a)}" for a in ("sat", "unsat", "unknown"))


def summary(sample: str, run: dict) -> None:
    checks, questions = run["checks"], run["questions"]
    lost = sum(c[2] for c in checks if c[0] == "unknown") / 1000
    print(f"{sample}: {len(questions)} questions ({_counts(questions)}); {len(checks)} checks "
          f"({_counts(checks)}); z3 {sum(c[2] for c in checks) / 1000:.2f} s, "
          f"{lost:.2f} s of it in unknown checks")
    by_place: dict = {}
    for answer, work, ms, where, _ in checks:
        by_place.setdefault(where, []).append((answer, work, ms))
    print(f"  {'checks by place':<52} {'sat':>5} {'unsat':>5} {'unk':>4} {'max decided work':>16} "
          f"{'unknown work (max)':>18} {'unknown s':>9}")
    for where, items in sorted(by_place.items(), key=lambda kv: -len(kv[1])):
        decided = [w for a, w, _ in items if a != "unknown"]
        unknown = [(w, ms) for a, w, ms in items if a == "unknown"]
        print(f"  {where[:52]:<52} {sum(a == 'sat' for a, _, _ in items):5d} "
              f"{sum(a == 'unsat' for a, _, _ in items):5d} {len(unknown):4d} {max(decided, default=0):16d} "
              f"{max((w for w, _ in unknown), default=0):18d} {sum(ms for _, ms in unknown) / 1000:9.2f}")
    slow = sorted((q for q in questions if q[0] == "unknown" or q[5] > 1), key=lambda q: -q[1])
    for answer, work, ms, where, text, n in slow[:12]:
        print(f"  question {answer:<7} {n:3d} checks {work:9d} work {ms:8.1f} ms  {where}: {text[:80]}")


def compare(sample: str, before: dict, after: dict) -> int:
    """Questions asked in both runs whose final answers differ; questions asked in one only."""
    old = {(q[3], q[4]): q[0] for q in before["questions"]}
    new = {(q[3], q[4]): q[0] for q in after["questions"]}
    changed = [(k, old[k], new[k]) for k in old.keys() & new.keys() if old[k] != new[k]]
    for (where, text), a, b in sorted(changed):
        print(f"  {sample}: {a} -> {b}  {where}: {text[:160]}")
    print(f"{sample}: {len(old.keys() & new.keys())} questions in both runs, {len(changed)} answered "
          f"differently; {len(old.keys() - new.keys())} only before, {len(new.keys() - old.keys())} only now")
    return len(changed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", nargs="+", default=list(SAMPLES), choices=SAMPLES)
    parser.add_argument("--target", default="sm_80")
    parser.add_argument("--checks", action="store_true", help="every check instead of the summary")
    parser.add_argument("--save", help="write every check and question of the run to this JSON file")
    parser.add_argument("--compare", help="a file written by --save: print the questions answered otherwise")
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    runs, changed = {}, 0
    before = json.loads(Path(args.compare).read_text()) if args.compare else {}
    for sample in args.samples:
        runs[sample] = run(sample, args.target)
        if args.checks:
            for answer, work, ms, where, reason in runs[sample]["checks"]:
                print(f"{sample} {answer:<7} {work:>10d} {ms:9.2f} ms  {where}  {reason}")
        else:
            summary(sample, runs[sample])
        if sample in before:
            changed += compare(sample, before[sample], runs[sample])
    if args.save:
        Path(args.save).write_text(json.dumps(runs))
    if args.compare:
        print(f"{changed} questions answered differently from {args.compare}")


if __name__ == "__main__":
    main()
