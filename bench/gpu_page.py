"""The page of one GPU's figures, from what bench/gpu_all.sh wrote: targets, references,
every sample's cases and dispatcher, compute-sanitizer, the paper's figures beside ours.

    python bench/gpu_page.py docs/bench/h100 --out docs/bench/H100.md [--before DIR --change TEXT]

Every number on the page is read from the JSON, CSV and logs in the folder (or computed from
them: ratios, minima); nothing is typed in but the paper's own figures (PAPER) and the
targets (TARGETS). --before names the folder of an earlier run: samples present in both get
a before/after table (what --change says was changed in between).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
from pathlib import Path

# target thresholds of issues 12 and 33
COPY_TARGET = 0.70          # memory-bound leaves: best point >= 70 % of a device copy
COPY_TARGETS = {"transpose": 0.80}   # issue 33: transpose >= 80 % of a copy
DISPATCH_TARGET = 0.90      # the dispatcher's pick >= 90 % of the best case's speed, every point
CUBLAS_TARGET = 1.5         # issue 33: best matmul case within 1.5x of cuBLAS SGEMM, at every n both ran
PPCG_TARGET = 1.0           # issue 33: our best case at least as fast as PPCG's best variant, every kernel
MEMORY_BOUND = ("matadd", "transpose", "jacobi1d")
# targets of issue 17 (the time model, bench/gpu_tune.py)
PICK_TARGET = 0.80          # the model's pick >= 80 % of the best measured configuration's speed
SPEARMAN_TARGET = 0.70      # rank correlation of predicted and measured times

# The paper's best speedups over serial C on a Tesla M2050 (its Tables 1 to 4), by our run name
PAPER = {
    "matmul_n1024": ("194 at (ub1, B0) = (16, 8), s = 4", 194),
    "matmul_n2048": ("202 at (ub1, B0) = (32, 8), s = 4", 202),
    "jacobi1d_N32770_T4": ("10.4 at B = 128, s = 2", 10.4),
    "transpose_N8192": ("112 at (B0, B1) = (8, 32), s = 2, for N = 2^14", 111.971),
    "polydiv_M32768": ("23.9 at B = 128 (without granularity)", 23.881),
}

FLOPS = {"matmul": lambda v: 2 * v["n"] ** 3}   # arithmetic of a sample, for GFLOP/s


def read_json(path: Path, unreadable: "list | None" = None):
    """The JSON of path, or None (its name then added to unreadable) where it is cut short or
    not JSON: a run stopped while writing it."""
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        if unreadable is not None:
            unreadable.append(path.name)
        return None


def load(folder: Path, unreadable: "list | None" = None) -> dict:
    runs = {}
    for path in sorted(folder.glob("*.json")):
        if path.name in ("RESULTS.json", "references.json", "sanitizer.json"):
            continue
        doc = read_json(path, unreadable)
        if isinstance(doc, dict) and "results" in doc:
            runs[path.stem] = doc
    return runs


def unfinished(folder: Path, runs: dict) -> list:
    """(run, why) of each run that gpu_all.sh started (RESULTS.json) and that has no figures on
    the page: stopped at the deadline (exit 124), failed, or without its JSON."""
    index = read_json(folder / "RESULTS.json") or {}
    out = []
    for name, r in (index.items() if isinstance(index, dict) else ()):
        stem = name.replace("+", "_")
        if stem in runs and r.get("exit") == 0:
            continue
        code = r.get("exit")
        why = ("not started: the deadline was reached" if code is None else
               f"stopped at the deadline after {r.get('seconds', 0):.0f} s" if code == 124 else
               f"exit {code}" + ("" if stem in runs else ", no results"))
        out.append((name, why))
    return out


def median(values) -> float:
    """The median of the numbers that are not NaN (NaN where none is)."""
    kept = [v for v in values if not math.isnan(v)]
    return statistics.median(kept) if kept else math.nan


def sample_of(run: str) -> str:
    """matmul_cache_n2048 -> matmul+cache; matmul_tiles_n2048 -> matmul+tiles; jacobi1d_N32770_T4
    -> jacobi1d (paper_gpu's SUITE names: a variant of a sample after its '+')."""
    stem = re.sub(r"_(n|N|M|m)\d+.*$", "", run)
    return re.sub(r"_(cache|tiles)\b", r"+\1", stem)


def base_sample(run: str) -> str:
    return sample_of(run).split("+")[0]


def kernel_of(r: dict) -> tuple:
    """(case, compile_time): a case's parametric kernel, or its compile-time instances (bench
    --instances), which are told apart everywhere on the page."""
    return r["case"], bool(r.get("compile_time"))


def kernel_label(key: tuple) -> str:
    """`case 2`, `case 2 at compile time`."""
    return f"case {key[0]}" + (" at compile time" if key[1] else "")


def cases_best(doc: dict, flagged: bool = False) -> dict:
    """{(case, compile_time): the correct result with the least time} (flagged: those that differ too)."""
    best = {}
    for r in doc["results"]:
        if r["case"] is None or r.get("gpu_s") is None or (r.get("correct") is False and not flagged):
            continue
        key = kernel_of(r)
        if key not in best or r["gpu_s"] < best[key]["gpu_s"]:
            best[key] = r
    return best


# The dispatchers a run timed, by their key in its JSON, as the page names them: the default one
# (the time model's fastest case that fits, runs since it exists), the tree's (the paper's rule:
# every run's "dispatcher"), dispatch_tuned (runs since it exists).
DISPATCHER_ROWS = (("dispatcher_default", "default dispatcher"), ("dispatcher", "tree dispatcher"),
                   ("dispatcher_tuned", "dispatch_tuned"))


def dispatcher_ratios(doc: dict, key: str = "dispatcher") -> list:
    """Per point: (values, case launched, fastest case there, best case time / dispatcher time);
    key "dispatcher_default", "dispatcher_tuned": the default dispatcher's, dispatch_tuned's (runs
    since they exist); "dispatcher": the tree's."""
    out = []
    for d in doc.get(key, ()):
        here = [r for r in doc["results"] if r["values"] == d["values"] and r.get("gpu_s") and r.get("correct")]
        if not here or not d.get("dispatch_s"):
            continue
        fastest = min(here, key=lambda r: r["gpu_s"])
        out.append((d["values"], d["case"], fastest["case"], fastest["gpu_s"] / d["dispatch_s"]))
    return out


def fastest_label(doc: dict, values: dict) -> str:
    """`case 2` or `case 2 at compile time`: the fastest correct kernel measured at values."""
    here = [r for r in doc["results"] if r["values"] == values and r.get("gpu_s") and r.get("correct")]
    return kernel_label(kernel_of(min(here, key=lambda r: r["gpu_s"])))


def fmt_point(values: dict, skip=()) -> str:
    return " ".join(f"{k}={v}" for k, v in values.items() if k not in skip)


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.4g} ms"


def pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def data_names(doc: dict, run: str) -> set:
    """Parameters fixed in a run (its data), not swept: from the run's name."""
    first = doc["results"][0]["values"]
    fixed = set()
    for name, value in first.items():
        if all(r["values"].get(name) == value for r in doc["results"]):
            fixed.add(name)
    return fixed


def references(folder: Path) -> dict:
    doc = read_json(folder / "references.json") if (folder / "references.json").exists() else {}
    return doc if isinstance(doc, dict) else {}


def sanitizer(folder: Path) -> list:
    """(sample, tool, errors, cases launched) from the sanitizer's own logs."""
    rows = []
    for log in sorted(folder.glob("sanitize_*_*.log")):
        m = re.match(r"sanitize_(.+)_(memcheck|racecheck)\.log$", log.name)
        if m is None:   # not a log gpu_sanitize.py writes
            continue
        text = log.read_text(errors="replace")
        found = re.findall(r"(?:ERROR SUMMARY: |SUMMARY: \d+ hazards? displayed \()(\d+) error", text)
        launched = sorted({int(k) for k in re.findall(r"case (\d+)\n", text + "\n")})
        failed = "parakern bench:" in text and "differ" in text
        rows.append((re.sub(r"_(cache|tiles)\b", r"+\1", m.group(1)), m.group(2), int(found[-1]) if found else None,
                     launched, failed))
    return rows


NCU_METRICS = ("Duration", "Compute (SM) Throughput", "Memory Throughput", "DRAM Throughput",
               "L1/TEX Cache Throughput", "Executed Ipc Active", "Registers Per Thread", "Achieved Occupancy")


def ncu_reports(folder: Path) -> list:
    """(report file, kernel, {metric: "value unit"}, busiest pipeline) from ncu's text output."""
    rows = []
    for report in sorted(folder.glob("ncu_*.txt")):
        text = report.read_text(errors="replace")
        for block in re.split(r"\n(?=  \w+_case\d+ \()", text)[1:]:
            kernel = block.split()[0]
            metrics = {}
            for name in NCU_METRICS:
                m = re.search(rf"^\s+{re.escape(name)}\s+(\S+)?\s+([\d.,]+)\s*$", block, re.M)
                if m and name not in metrics:
                    metrics[name] = f"{m.group(2)} {m.group(1) or ''}".strip()
            pipe = re.search(r"(\w+) is the highest-utilized pipeline \(([\d.]+)%\)", block)
            rows.append((report.name, kernel, metrics, f"{pipe.group(1)} {pipe.group(2)} %" if pipe else ""))
    return rows


def tunings(folder: Path) -> list:
    """(run, schedule, profile, Spearman, pick fraction, configurations measured) of gpu_tune's files."""
    rows = []
    for path in sorted(folder.glob("tune_*.json")):
        doc = read_json(path)
        if not isinstance(doc, dict):
            continue
        for entry in doc.get("schedules", []):
            m = entry.get("measure")
            if m:
                measured = sum(1 for c in m["measured"] if c["measured_s"] == c["measured_s"])   # not nan
                rows.append((doc["run"], entry.get("schedule", "?"), doc.get("profile", "?"), m["spearman"],
                             m["pick_fraction_of_best"], measured))
    return rows


def tune_targets(folder: Path) -> list:
    rows = []
    for path in sorted(folder.glob("tune_*.json")):   # a tune that measured nothing still says why
        doc = read_json(path)
        if isinstance(doc, dict) and doc.get("exit") not in (0, None) and not any(
                e.get("measure") for e in doc.get("schedules", [])):
            why = "stopped at the deadline" if doc["exit"] == 124 else f"exit {doc['exit']}"
            rows.append((f"{doc.get('run', path.stem)}: the model against measured times", f"not measured ({why})",
                         False))
    for run, _schedule, profile, rho, pick, measured in tunings(folder):
        rows.append((f"{run}: the model's pick >= {pct(PICK_TARGET)} of the best measured ({profile} model)",
                     f"{pct(pick)} over {measured} configurations", pick >= PICK_TARGET))
        rows.append((f"{run}: Spearman of predicted and measured times >= {SPEARMAN_TARGET:g}",
                     f"{rho:.2f}", rho >= SPEARMAN_TARGET))
    return rows


def targets(runs: dict, refs: dict, ppcg: "list | None" = None) -> list:
    rows = []
    for sample in MEMORY_BOUND:
        docs = {k: d for k, d in runs.items() if sample_of(k) == sample}
        best = None
        for run, doc in docs.items():
            for k, r in cases_best(doc).items():
                if r.get("copy_fraction") and (best is None or r["copy_fraction"] > best[2]["copy_fraction"]):
                    best = (run, k, r)
        if best:
            run, k, r = best
            goal = COPY_TARGETS.get(sample, COPY_TARGET)
            rows.append((f"{sample}: best point >= {pct(goal)} of a device copy",
                         f"{pct(r['copy_fraction'])} ({kernel_label(k)}, {fmt_point(r['values'])}: "
                         f"{r['bandwidth_gbs']:.0f} of {r['copy_gbs']:.0f} GB/s)", r["copy_fraction"] >= goal))
    rows += default_dispatcher_targets(runs)
    for run, doc in runs.items():
        for key, what in DISPATCHER_ROWS[1:]:   # the default dispatcher's: a row per sample, above
            ratios = dispatcher_ratios(doc, key)
            if not ratios:
                continue
            worst = min(ratios, key=lambda x: x[3])
            below = sum(1 for x in ratios if x[3] < DISPATCH_TARGET)
            rows.append((f"{run}: {what} >= {pct(DISPATCH_TARGET)} of the best case, every point",
                         f"lowest {pct(worst[3])} at {fmt_point(worst[0], data_names(doc, run)) or 'its point'} "
                         f"(launched case "
                         f"{worst[1]}, {fastest_label(doc, worst[0])} fastest); {below} of {len(ratios)} points below",
                         below == 0))
    for size, sgemm in sorted(refs.get("sgemm", {}).items(), key=lambda kv: int(kv[0].lstrip("n"))):
        mm = [(run, k, r) for run, doc in runs.items() if base_sample(run) == "matmul" and run.endswith(f"_{size}")
              for k, r in cases_best(doc).items()]
        if not mm:   # cuBLAS at a size no matmul run took: nothing to compare
            continue
        run, k, r = min(mm, key=lambda x: x[2]["gpu_s"])
        ratio = r["gpu_s"] / sgemm["median_s"]
        rows.append((f"best matmul case within {CUBLAS_TARGET:g}x of cuBLAS SGEMM at n = {size.lstrip('n')}",
                     f"{ratio:.1f}x: {ms(r['gpu_s'])} ({sample_of(run)} {kernel_label(k)}, "
                     f"{fmt_point(r['values'], {'n'})}) "
                     f"vs {ms(sgemm['median_s'])}", ratio <= CUBLAS_TARGET))
    if ppcg:
        compared = ppcg_comparison(ppcg)
        slower = [(kernel, ratio) for kernel, _, _, ratio in compared if ratio < PPCG_TARGET]
        worst = min(compared, key=lambda c: c[3]) if compared else None
        if worst:
            rows.append(("our best case at least as fast as PPCG's best variant, every kernel",
                         f"{len(compared) - len(slower)} of {len(compared)} kernels; lowest: {worst[0]}, PPCG's time "
                         f"{worst[3]:.2f}x ours", not slower))
    return rows


def default_dispatcher_targets(runs: dict) -> list:
    """A row per sample: the default dispatcher against the fastest case at every point of
    every run of the sample (its sizes together), the lowest named with its run."""
    by_sample = {}
    for run, doc in runs.items():
        for ratio in dispatcher_ratios(doc, "dispatcher_default"):
            by_sample.setdefault(sample_of(run), []).append((run, doc, ratio))
    rows = []
    for sample, found in by_sample.items():
        run, doc, worst = min(found, key=lambda x: x[2][3])
        below = sum(1 for _, _, x in found if x[3] < DISPATCH_TARGET)
        sizes = len({r for r, _, _ in found})
        where = " ".join(x for x in (run, fmt_point(worst[0], data_names(doc, run))) if x)
        rows.append((f"{sample}: default dispatcher >= {pct(DISPATCH_TARGET)} of the best case, every point",
                     f"lowest {pct(worst[3])} at {where} (launched case "
                     f"{worst[1]}, {fastest_label(doc, worst[0])} fastest); {below} of {len(found)} points below"
                     + (f" ({sizes} sizes)" if sizes > 1 else ""), below == 0))
    return rows


# One line of bench/ppcg/run_gpu.sh's: who, kernel/variant, median ms, rate and unit, correct
PPCG_LINE = re.compile(r"^(ppcg|parakern) (\w+)/(\S+)\s+median\s+([\d.]+) ms\s+([\d.]+) (\S+)\s+correct (yes|NO)")


def ppcg_lines(folder: Path) -> list:
    """(who, kernel, variant, ms, rate, unit, correct) of every program run_gpu.sh ran (ppcg.txt)."""
    path = folder / "ppcg.txt"
    if not path.exists():
        return []
    out = []
    for line in path.read_text(errors="replace").splitlines():
        m = PPCG_LINE.match(line.strip())
        if m:
            out.append((m.group(1), m.group(2), m.group(3), float(m.group(4)), float(m.group(5)), m.group(6),
                        m.group(7) == "yes"))
    return out


def ppcg_comparison(lines: list) -> list:
    """Per kernel with a correct line on both sides: (kernel, our fastest line, PPCG's fastest
    line, PPCG's time / ours): above 1, ours is faster."""
    out = []
    for kernel in dict.fromkeys(k for _, k, *_ in lines):
        ours = [x for x in lines if x[0] == "parakern" and x[1] == kernel and x[6]]
        theirs = [x for x in lines if x[0] == "ppcg" and x[1] == kernel and x[6]]
        if ours and theirs:
            best, rival = min(ours, key=lambda x: x[3]), min(theirs, key=lambda x: x[3])
            out.append((kernel, best, rival, rival[3] / best[3]))
    return out


def ppcg_section(folder: Path, lines: list) -> list:
    """The PPCG table: every program of run_gpu.sh, each PPCG variant beside our best case of
    the same kernel at the same size (PPCG's fixed size), as a ratio."""
    points = {}
    path = folder / "ppcg_points.txt"
    for line in (path.read_text().splitlines() if path.exists() else ()):
        kernel, _, why = line.partition("#")
        if kernel.split():
            points[kernel.split()[0]] = why.strip()
    out = ["## PPCG", "",
           "PPCG 0.09's CUDA for the same computations at fixed sizes (`bench/ppcg/`, its README), built and run by "
           "`bench/ppcg/run_gpu.sh` in the same harness as our best case of each kernel (the case today's default "
           "dispatcher launches at our best point of the last run: `bench/ppcg_points.py`), as the parametric "
           "kernel and as its compile-time instance (`-fix`). Inputs are small integers, so each result is "
           "checked exactly against the C on the CPU. Ratio: PPCG's time / our best's (above 1: ours is faster).",
           "", "| kernel | program | median | rate | correct | our best | PPCG / ours |", "|---|" * 7]
    for kernel in dict.fromkeys(k for _, k, *_ in lines):
        ours = [x for x in lines if x[0] == "parakern" and x[1] == kernel and x[6]]
        best = min(ours, key=lambda x: x[3]) if ours else None
        for who, _, variant, time_ms, rate, unit, ok in [x for x in lines if x[1] == kernel]:
            mine = who == "parakern"
            ratio = "" if mine or best is None or not ok else f"{time_ms / best[3]:.2f}"
            ref = "" if mine or best is None else f"{best[2]}: {best[3]:.4g} ms"
            out.append(f"| {kernel} | {who} {variant} | {time_ms:.4g} ms | {rate:g} {unit} | "
                       f"{'yes' if ok else '**NO**'} | {ref} | {ratio} |")
    if points:
        out += ["", "Our side: " + "; ".join(f"{k}: {why}" for k, why in points.items()) + "."]
    return out + [""]


def _heat_maps(folder: Path, run: str) -> list:
    """The run's heat maps: one per case (`<run>_case2.png`), or `<run>.png` where a sample has
    one case."""
    maps = sorted(folder.glob(f"{run}_case*.png"))
    return maps or sorted(folder.glob(f"{run}.png"))


def sample_section(run: str, doc: dict, folder: Path, link: str) -> list:
    fixed = data_names(doc, run)
    first = {k: v for k, v in doc["results"][0]["values"].items() if k in fixed}
    lines = [f"### {sample_of(run)} ({fmt_point(first)})",
             "", f"Tables of every point: [{run}.md]({link}/{run}.md); heat maps: "
             + ", ".join(f"[case {p.stem.rsplit('_case', 1)[-1] if '_case' in p.stem else 1}]({link}/{p.name})"
                         for p in _heat_maps(folder, run)) + ".", ""]
    flops = FLOPS.get(base_sample(run))
    head = "| case | constraints | registers | best point | time | speedup | " + \
           ("GFLOP/s |" if flops else "GB/s | of a copy |")
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    wrong = {}
    for r in doc["results"]:
        if r.get("correct") is False:
            wrong[kernel_of(r)] = wrong.get(kernel_of(r), 0) + 1
    best = cases_best(doc)
    instances = any(r.get("compile_time") for r in doc["results"])
    for k, constraint in enumerate(doc["cases"], 1):
        for key in ((k, False), (k, True)) if instances else ((k, False),):
            name = f"{k}" + (" at compile time" if key[1] else "")
            r = best.get(key)
            if r is None:
                why = f"{wrong[key]} results differ from the serial C" if key in wrong else "never ran"
                lines.append(f"| {name} | `{constraint}` | | {why} | | | |")
                continue
            rate = f"{flops(r['values']) / r['gpu_s'] / 1e9:.0f} |" if flops else \
                f"{r['bandwidth_gbs']:.0f} | {pct(r['copy_fraction'])} |"
            lines.append(f"| {name} | `{constraint}` | {r['registers']} | {fmt_point(r['values'], fixed)} | "
                         f"{ms(r['gpu_s'])} | {r['speedup']:.1f}x | {rate}")
    if instances:
        lines += ["", "A case \"at compile time\" is its instance with the point's program parameters as "
                      "constants (`bench --instances`, what `parakern emit --fix` writes)."]
    if wrong:
        lines += ["", "Results that differ from the serial C: " +
                  ", ".join(f"{kernel_label(k)}: {n}" for k, n in sorted(wrong.items())) + "."]
    default = dispatcher_ratios(doc, "dispatcher_default")
    if default:
        fastest = sum(1 for _, c, f, _ in default if c == f)
        lines += ["", f"Default dispatcher (the time model's fastest case that fits): the fastest case at {fastest} "
                      f"of {len(default)} points; {pct(min(x[3] for x in default))} to "
                      f"{pct(max(x[3] for x in default))} of its speed (median {pct(median(x[3] for x in default))})."]
    ratios = dispatcher_ratios(doc)
    if ratios:
        fastest = sum(1 for _, c, f, _ in ratios if c == f)
        lines += ["", f"Tree dispatcher (the paper's rule): launched the fastest case at {fastest} of {len(ratios)} "
                      "points; its speed "
                      f"against the fastest case's: {pct(min(x[3] for x in ratios))} to "
                      f"{pct(max(x[3] for x in ratios))} "
                      f"(median {pct(median(x[3] for x in ratios))})."]
        launched = sorted({c for _, c, _, _ in ratios if c is not None})
        winners = sorted({f for _, _, f, _ in ratios})
        lines.append(f"It launched case {', '.join(map(str, launched))}; the fastest were case "
                     f"{', '.join(map(str, winners))}.")
    tuned = dispatcher_ratios(doc, "dispatcher_tuned")
    if tuned:
        fastest = sum(1 for _, c, f, _ in tuned if c == f)
        lines += ["", f"dispatch_tuned (the case measured fastest at its first call): the fastest case at {fastest} "
                      f"of {len(tuned)} points; {pct(min(x[3] for x in tuned))} to {pct(max(x[3] for x in tuned))} "
                      "of its speed."]
    paper = PAPER.get(run)
    if paper:
        ours = max((r["speedup"] for r in best.values() if r.get("speedup")), default=math.nan)
        gpu = doc.get("device", "this GPU")
        lines += ["", f"Paper (Tesla M2050, its serial C): best speedup {paper[0]}. Here ({gpu} "
                      f"against gcc -O2 on this machine's CPU): best {ours:.1f}x."]
    return lines + [""]


def before_after(before: dict, after: dict) -> list:
    """Per run in both: the fastest case before and after (case numbers differ between two
    trees), and what the dispatcher launched at that run's fastest point."""
    lines = ["| run | before: fastest case | after: fastest case | after / before | dispatcher before -> after |",
             "|---|---|---|---|---|"]
    flagged = False

    def fastest(doc):
        best = cases_best(doc, flagged=True)
        return min(best.items(), key=lambda kv: kv[1]["gpu_s"]) if best else (None, None)

    def dispatch_best(doc):
        times = [d["dispatch_s"] for d in doc["dispatcher"] if d.get("dispatch_s")]
        return min(times) if times else None

    for run in sorted(set(before) & set(after)):
        (kb, rb), (ka, ra) = fastest(before[run]), fastest(after[run])
        if rb is None or ra is None:
            continue
        fixed = data_names(after[run], run)
        flagged |= rb.get("correct") is False or ra.get("correct") is False
        mark = lambda r: " †" if r.get("correct") is False else ""  # noqa: E731
        db, da = dispatch_best(before[run]), dispatch_best(after[run])
        dispatch = f"{ms(db)} -> {ms(da)}" if db and da else "-"
        lines.append(f"| {run} | {kernel_label(kb)}: {ms(rb['gpu_s'])} ({fmt_point(rb['values'], fixed)}){mark(rb)} | "
                     f"{kernel_label(ka)}: {ms(ra['gpu_s'])} ({fmt_point(ra['values'], fixed)}){mark(ra)} | "
                     f"{ra['gpu_s'] / rb['gpu_s']:.2f} | {dispatch} |")
    if flagged:
        lines += ["", "† that run flagged the result as different from the serial C (see its tables)."]
    return lines


def page(folder: Path, out: Path, before: "Path | None", change: str) -> str:
    unreadable = []
    runs, refs = load(folder, unreadable), references(folder)
    env = (folder / "environment.txt").read_text() if (folder / "environment.txt").exists() else ""
    device = next(iter(runs.values()))["device"] if runs else "?"
    link = os.path.relpath(folder.resolve(), out.parent.resolve())
    lines = [f"# parakern on an {device}", "",
             f"Figures taken with `bash bench/gpu_all.sh` (see [README.md](README.md)); raw tables, JSON, CSV and "
             f"heat maps in [{link}]({link}). This page is written by `python bench/gpu_page.py {folder} "
             f"--out {out}` from those files.", "", "```", env.strip(), "```", "", "## Targets", "",
             "| target | measured | met |", "|---|---|---|"]
    ppcg = ppcg_lines(folder)
    lines += [f"| {t} | {m} | {'yes' if ok else '**no**'} |"
              for t, m, ok in targets(runs, refs, ppcg) + tune_targets(folder)]
    missing = unfinished(folder, runs)
    if missing or unreadable:
        lines += ["", "Runs without figures here: " + "; ".join(
            [f"{name} ({why})" for name, why in missing] + [f"{name} (cut short or not JSON)" for name in unreadable])
            + "."]
    if refs:
        lines += ["", "## References", "", "CuPy on the same kind of machine, in the run of the matmul figures "
                  "(`bench/gpu_references.py`); each sample's own JSON also holds a device-to-device copy of its "
                  "bytes measured in its run, which its \"of a copy\" fractions use.", "",
                  "| what | median time | rate |", "|---|---|---|"]
        for size, c in refs.get("copy", {}).items():
            lines.append(f"| device-to-device copy of {size} | {ms(c['median_s'])} | "
                         f"{c['gbs']:.0f} GB/s (read + written) |")
        for n, s in refs.get("sgemm", {}).items():
            lines.append(f"| cuBLAS SGEMM (cupy.matmul, FP32), {n} | {ms(s['median_s'])} | {s['tflops']:.1f} TFLOP/s |")
        for n, s in refs.get("add_int32", {}).items():
            lines.append(f"| CuPy add of two int32 matrices, {n} | {ms(s['median_s'])} | {s['gbs']:.0f} GB/s = "
                         f"{pct(s['copy_fraction'])} of a copy |")
        for n, s in refs.get("transpose_float32", {}).items():
            lines.append(f"| CuPy transposing copy, float32, {n} | {ms(s['median_s'])} | {s['gbs']:.0f} GB/s = "
                         f"{pct(s['copy_fraction'])} of a copy |")
    if before is not None:
        lines += ["", "## Before and after", "", change, ""] + before_after(load(before), runs)
    lines += ["", "## Samples", "",
              "Every case that fits the device is timed at every point (`--every-case`: a case's constraints "
              "on R, Z, T say when the tree prefers it, not whether it can run), kernel time by CUDA events "
              "with the GPU kept busy while the launch is enqueued, median of 20; speedup over the serial C "
              "(gcc -O2) on this machine's CPU; GB/s counts each array read once and written once; "
              "\"of a copy\" divides by a device-to-device copy of the same bytes in the same run.", ""]
    for run, doc in runs.items():
        lines += sample_section(run, doc, folder, str(link))
    if ppcg:
        lines += ppcg_section(folder, ppcg)
    profiled = ncu_reports(folder)
    if profiled:
        lines += ["## Nsight Compute", "",
                  "`ncu` on the second launch of every case kernel at one point (`bench/gpu_profile.py`); "
                  "the whole reports are beside the tables.", "",
                  "| report | kernel | " + " | ".join(NCU_METRICS) + " | busiest pipeline |",
                  "|" + "---|" * (len(NCU_METRICS) + 3)]
        for report, kernel, metrics, pipe in profiled:
            lines.append(f"| [{report}]({link}/{report}) | {kernel} | "
                         + " | ".join(metrics.get(n, "") for n in NCU_METRICS) + f" | {pipe} |")
        lines.append("")
    rows = sanitizer(folder)
    if rows:
        lines += ["## compute-sanitizer", "",
                  "`parakern bench --every-case` at one small point per sample under `compute-sanitizer` "
                  "(`bench/gpu_sanitize.py`): every case that fits is launched, then the dispatcher.", "",
                  "| sample | tool | errors | cases launched | results vs serial C |", "|---|---|---|---|---|"]
        for sample, tool, errors, launched, failed in rows:
            lines.append(f"| {sample} | {tool} | {errors if errors is not None else '?'} | "
                         f"{', '.join(map(str, launched))} | {'differ' if failed else 'match'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--change", default="")
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        print(f"gpu_page: {args.folder} is not a folder", file=sys.stderr)
        return 2
    if args.before is not None and not args.before.is_dir():
        print(f"gpu_page: --before {args.before} is not a folder", file=sys.stderr)
        return 2
    if not args.out.parent.is_dir():
        print(f"gpu_page: --out {args.out}: its folder {args.out.parent} does not exist", file=sys.stderr)
        return 2
    text = page(args.folder, args.out, args.before, args.change)
    written = ("*.json", "*.log", "ncu_*.txt", "environment.txt", "ppcg.txt")
    if not any(next(args.folder.glob(pattern), None) for pattern in written):
        print(f"gpu_page: {args.folder} holds nothing bench/gpu_all.sh writes (JSON, logs, environment.txt)",
              file=sys.stderr)
        return 2
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
