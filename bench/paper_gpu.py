"""The GPU bench of every sample (the paper's section 6 and ours): one `parakern bench
--every-case` run per sample, variant and data size, with the paper's sweeps, written to a
folder (markdown tables, JSON, CSV, heat maps) with an index RESULTS.json.

    python bench/paper_gpu.py [SAMPLE ...] [--out DIR] [--repeat 20] [--quick] [--deadline S]

Samples are named as in SUITE: `matmul` and `matmul+cache` (the same file with
`cache(a, b)` on its meta_schedule), `jacobi1d`, ... Needs pycuda, nvcc and an NVIDIA GPU
(bench/gpu_all.sh runs this, the references and the sanitizer in one go; see
docs/bench/README.md). --quick uses tiny sizes: a check of the whole path (e.g. on the
emulated GPU of tests/fakes), not figures. --deadline stops starting new runs after S
seconds, so that a run with a time limit still returns what it measured.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Entry:
    sample: str                      # samples/<sample>.c
    sizes: tuple                     # ((tag, ["N=4096", ...]), ...)
    sweep: tuple                     # ("B0=4,8", ...)
    serial_repeat: int = 3
    cache: str = ""                  # a cache(...) clause put on the meta_schedule (a variant)
    small: tuple = field(default=())  # one small point for the sanitizer: (data..., sweep...)
    serial_jobs: int = 1             # serial C runs at a time (only where they do not share memory bandwidth)
    instances: bool = False          # also time each case's compile-time instance (bench --instances)
    named: tuple = field(default=())  # ((tag, data, sweep), ...): sizes run only where named (SAMPLE@TAG)
    options: tuple = field(default=())  # more options of `parakern bench` (e.g. --register-tiles)
    folder: str = "samples"          # where <sample>.c is (bench/programs: programs that are no sample)

    def all_sizes(self) -> tuple:
        """(tag, data, sweep) of every size, the named ones after the others."""
        return tuple((tag, data, self.sweep) for tag, data in self.sizes) + tuple(self.named)


PAIRS_MM = ["ub1=8,16,32,64", "B0=4,8", "s=2,4"]   # (ub1, B0) of the paper's Table 1, plus (8, 4)
# matmul at n = 4096 (issue 33): the serial C of one point takes about 8 times n = 2048's (80 s
# and more), so every variant runs the same two points (the paper's (ub1, B0) = (32, 8) and the
# larger tile of the best case so far), whose serial results the serial cache shares
MM_4096 = ("n4096", ("n=4096",), ("ub1=32", "B0=8,32", "s=4"))

# Sizes: the paper's where it gives them, and where its kernels would run for less than
# 100 microseconds on a current GPU, larger ones (each kernel >= 100 us on an H100).
SUITE = {
    "matmul": Entry("matmul", (("n1024", ("n=1024",)), ("n2048", ("n=2048",))), tuple(PAIRS_MM), 1,
                    small=("n=128", "ub1=16", "B0=8", "s=2"), serial_jobs=8, instances=True, named=(MM_4096,)),
    "matmul+cache": Entry("matmul", (("n1024", ("n=1024",)), ("n2048", ("n=2048",))), tuple(PAIRS_MM), 1,
                          cache="cache(a, b)", small=("n=128", "ub1=16", "B0=8", "s=2"), serial_jobs=8, instances=True,
                          named=(MM_4096,)),
    # the larger tiles that thread coarsening (decision 6) and register tiles (8) make fit, where
    # `tune` ranks its best matmul configurations: the cuBLAS target is taken over these points too
    # (the H200's run of 2026-11-26 on 6 points: ub1 = 32 fastest at each B0, B0 = 128 not launched)
    "matmul+tiles": Entry("matmul", (("n2048", ("n=2048",)),), ("B0=32,64", "ub1=32", "s=4"), 1,
                                cache="cache(a, b)", small=("n=256", "ub1=16", "B0=32", "s=4"), serial_jobs=8,
                                instances=True, options=("--register-tiles",),
                                named=(("n4096", ("n=4096",), ("ub1=32", "B0=32", "s=4")),)),   # MM_4096's tile
    "jacobi1d": Entry("jacobi1d", (("N32770_T4", ("N=32770", "T=4")),), ("B=16,32,64,128,256", "s=2,4,8"), 3,
                      small=("N=4098", "T=2", "B=64", "s=2"),
                      named=(("N1048578_T4", ("N=1048578", "T=4"), ("B=32,64,128,256,512", "s=2,4,8")),)),
    # transpose's runs cost about 15 s a point whatever N (docs/bench/h100, h200): 4 points at 4096
    "transpose": Entry("transpose", (("N8192", ("N=8192",)),), ("B0=4,8,16,32", "B1=32", "s=2,4,8,16"), 1,
                       small=("N=512", "B0=8", "B1=32", "s=2"),
                       named=(("N4096", ("N=4096",), ("B0=8,16", "B1=32", "s=8,16")),)),
    "matadd": Entry("matadd", (("N8192", ("N=8192",)),), ("B0=4,8,16,32", "B1=8,16,32,64"), 1,
                    small=("N=512", "B0=8", "B1=32")),
    "polydiv": Entry("polydiv", (("M32768", ("M=32768", "N=32868", "P=65521")),
                                 ("M33554432", ("M=33554432", "N=33554442", "P=65521"))),
                     ("B=16,32,64,128,256,512", "s=1"), 1, small=("M=2048", "N=2060", "P=65521", "B=128", "s=2"),
                     named=(("M1048576", ("M=1048576", "N=1048676", "P=65521"), ("B=32,64,128,256,512", "s=1")),)),
    "saxpy": Entry("saxpy", (("n67108864", ("n=67108864",)),), ("B=64,128,256,512,1024",), 3,
                   small=("n=100000", "B=256")),
    "stencil2d": Entry("stencil2d", (("N8192", ("N=8192",)),), ("Bx=32,64", "By=4,8,16"), 3,
                       small=("N=300", "Bx=32", "By=8")),
    "matvec": Entry("matvec", (("m8192", ("m=8192", "n=8192")),), ("B=64,128,256",), 3,
                    small=("m=1000", "n=700", "B=128")),
    # updates made with CUDA's atomics (decision (7)): a kernel kind of its own for the sanitizer
    "histogram": Entry("histogram", (), ("B=128,256,512",), 3, small=("n=100000", "B=256"), folder="bench/programs",
                       named=(("n16777216", ("n=16777216",), ("B=128,256,512",)),)),
}
# The same parts at tiny sizes (a check of the path on the emulated GPU): the named sizes keep
# their tags so that a command rehearsed with QUICK=1 names the parts of the real run.
QUICK = {
    "matmul": Entry("matmul", (("n16", ("n=16",)),), ("ub1=4,8", "B0=4", "s=2"), 1, instances=True,
                    named=(("n4096", ("n=32",), ("ub1=4", "B0=4,8", "s=2")),)),
    "matmul+cache": Entry("matmul", (("n16", ("n=16",)),), ("ub1=4,8", "B0=4", "s=2"), 1, cache="cache(a, b)",
                          instances=True, named=(("n4096", ("n=32",), ("ub1=4", "B0=4,8", "s=2")),)),
    "matmul+tiles": Entry("matmul", (("n64", ("n=64",)),), ("B0=16,32", "ub1=8", "s=4"), 1,
                                cache="cache(a, b)", instances=True, options=("--register-tiles",),
                                named=(("n2048", ("n=64",), ("B0=16", "ub1=8", "s=4")),
                                       ("n4096", ("n=64",), ("B0=32", "ub1=8", "s=4")))),
    "jacobi1d": Entry("jacobi1d", (("N130_T2", ("N=130", "T=2")),), ("B=16,32", "s=2"), 1,
                      named=(("N1048578_T4", ("N=258", "T=2"), ("B=32", "s=2,4")),)),
    "transpose": Entry("transpose", (("N32", ("N=32",)),), ("B0=4", "B1=8", "s=2"), 1,
                       named=(("N4096", ("N=64",), ("B0=8", "B1=8", "s=2")),)),
    "matadd": Entry("matadd", (("N32", ("N=32",)),), ("B0=4,8", "B1=8"), 1),
    "histogram": Entry("histogram", (), ("B=32",), 1, folder="bench/programs",
                       named=(("n16777216", ("n=1000",), ("B=32,64",)),)),
    "polydiv": Entry("polydiv", (("M16", ("M=16", "N=20", "P=97")),), ("B=8", "s=1"), 1,
                     named=(("M1048576", ("M=24", "N=30", "P=97"), ("B=8", "s=1,2")),)),
}


def variant_file(entry: Entry, folder: Path) -> Path:
    """The sample as it is benched: a copy under folder/<variant>/ with the cache clause put on
    its meta_schedule. Every bench runs in the folder of its file and names it by its base
    name, so that the serial programs of two variants are the same (Baseline.run's cache)."""
    source = ROOT / entry.folder / f"{entry.sample}.c"
    if not entry.cache:
        return source
    text = source.read_text()
    changed, count = re.subn(r"meta_schedule\s*(cache\([^)]*\))?\s*\{", f"meta_schedule {entry.cache} {{", text)
    if count != 1:
        raise SystemExit(f"{source}: expected one meta_schedule to put {entry.cache} on, found {count}")
    target = folder / "variants" / re.sub(r"\W+", "_", entry.cache).strip("_") / source.name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(changed)
    return target


def bench_command(file: Path, data, sweep, repeat: int, serial_repeat: int, stem: "Path | None",
                  serial_cache: "Path | None", serial_jobs: int = 1, instances: bool = False) -> list:
    command = [sys.executable, "-m", "parakern", "bench", file.name, "--every-case",
               *[a for d in data for a in ("--data", d)], *[a for s in sweep for a in ("--sweep", s)],
               "--repeat", str(repeat), "--serial-repeat", str(serial_repeat), "--markdown"]
    if serial_jobs > 1:
        command += ["--serial-jobs", str(serial_jobs)]
    if instances:
        command.append("--instances")
    if serial_cache is not None:
        command += ["--serial-cache", str(serial_cache)]
    if stem is not None:
        command += ["--json", f"{stem}.json", "--csv", f"{stem}.csv", "--plot", f"{stem}.png"]
    return command


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "server"), env.get("PYTHONPATH", "")) if p)
    return env


def run_command(command: list, cwd: Path, timeout: float) -> tuple:
    """(exit code, stdout, stderr, seconds) of a parakern command run under `timeout` seconds
    (the run's deadline): past it, exit 124 with what it had printed."""
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=_env(),
                              timeout=max(1.0, timeout))
        code, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        partial = exc.stdout or ""
        code, stdout = 124, partial.decode(errors="replace") if isinstance(partial, bytes) else partial
        stderr = f"stopped after {timeout:.0f} s (the run's deadline)"
    return code, stdout, stderr, time.perf_counter() - start


def messages(stderr: str) -> str:
    """A command's standard error without its progress lines (`[3/40] ...`)."""
    return "\n".join(line for line in stderr.splitlines() if not line.startswith("["))


def unknown_name(suite: dict, names: list) -> str:
    """The first of names that is neither a sample of suite nor SAMPLE@SIZE with one of its
    sizes' tags ('' if none): the message a parser error gives."""
    for name in names:
        sample, _, tag = name.partition("@")
        if sample not in suite:
            return f"unknown sample {sample!r}: choose from {', '.join(suite)}"
        tags = [size[0] for size in suite[sample].all_sizes()]
        if tag and tag not in tags:
            return f"{sample} has no size {tag!r}: choose from {', '.join(tags)}"
    return ""


def sizes_of(suite: dict, names: list):
    """(name, entry, tag, data, sweep) for every size of the named samples, in order (SAMPLE@TAG:
    that size alone, a named size of the entry too)."""
    for named in names:
        name, _, only = named.partition("@")
        entry = suite[name]
        for tag, data, sweep in entry.all_sizes() if only else ((t, d, entry.sweep) for t, d in entry.sizes):
            if not only or tag == only:
                yield name, entry, tag, data, sweep


def sizes_in_time(suite: dict, names: list, deadline: float):
    """(name, entry, tag, data, sweep, seconds left) for every size of the named samples, in
    order (sizes_of); seconds left is None once fewer than 10 remain before `deadline` (0: none):
    not started."""
    start = time.monotonic()
    for name, entry, tag, data, sweep in sizes_of(suite, names):
        left = deadline - (time.monotonic() - start) if deadline else 24 * 3600
        if left < 10:
            print(f"{name} {tag}: not started, the deadline is reached", file=sys.stderr)
        yield name, entry, tag, data, sweep, (left if left >= 10 else None)


def run(name: str, entry: Entry, tag: str, data, sweep, out: Path, repeat: int, timeout: float) -> dict:
    file = variant_file(entry, out)
    stem = (out / f"{name.replace('+', '_')}_{tag}").resolve()
    command = bench_command(file, data, sweep, repeat, entry.serial_repeat, stem, out.resolve() / "serial-cache",
                            entry.serial_jobs, entry.instances) + list(entry.options)
    code, stdout, stderr, seconds = run_command(command, file.parent, timeout)
    plan = messages(stderr)
    source = f"{entry.folder}/{entry.sample}.c"
    source = f"<{source} with {entry.cache}>" if entry.cache else source
    shown = " ".join(["parakern", *command[3:4], source, *command[5:]]).replace(str(out.resolve()), "OUT")
    Path(f"{stem}.md").write_text(f"# {name} ({' '.join(data)})\n\n`{shown}`\n\n"
                                  f"{stdout}\n\n## Plan and messages\n\n```\n{plan}\n```\n")
    print(f"{name} {tag}: exit {code} in {seconds:.1f} s -> {stem.name}.md", file=sys.stderr, flush=True)
    return {"sample": name, "tag": tag, "exit": code, "seconds": round(seconds, 1), "report": f"{stem.name}.md"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("samples", nargs="*", default=[],
                        help=f"some of {', '.join(SUITE)}; SAMPLE@SIZE for one size, e.g. matmul@n2048 (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "bench" / "raw")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks the path, gives no figures")
    parser.add_argument("--deadline", type=float, default=0, help="seconds after which no new run starts (0: none)")
    args = parser.parse_args(argv)
    suite = QUICK if args.quick else SUITE
    unknown = unknown_name(suite, args.samples)
    if unknown:
        parser.error(unknown)
    args.out.mkdir(parents=True, exist_ok=True)
    runs = []
    for name, entry, tag, data, sweep, left in sizes_in_time(suite, args.samples or list(suite), args.deadline):
        runs.append({"sample": name, "tag": tag, "exit": None, "seconds": 0, "report": None} if left is None
                    else run(name, entry, tag, data, sweep, args.out, args.repeat, left))
    index = args.out / "RESULTS.json"
    try:
        previous = json.loads(index.read_text()) if index.exists() else {}
    except (OSError, json.JSONDecodeError):   # cut short by a stopped run: this run's entries start it again
        print(f"{index}: not JSON (cut short?); written again with this run's entries", file=sys.stderr)
        previous = {}
    previous.update({f"{r['sample']}_{r['tag']}": r for r in runs})
    index.write_text(json.dumps(previous, indent=2) + "\n")
    return 0 if all(r["exit"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
