"""The time model against times already measured on a GPU, without a GPU.

    .venv/bin/python bench/model_vs_measured.py docs/bench/h100 [LATER ...] [--profile h100] [--markdown]
    .venv/bin/python bench/model_vs_measured.py docs/bench/h100 docs/bench/h100-stepped-copies docs/bench/h200 --fit

Reads the bench JSON of GPU runs (bench/gpu_all.sh: every case timed at every point; where
several folders are given, a run of a later folder replaces the run of the same name and GPU of
an earlier one, e.g. a sample measured again after a change of its kernels; runs of several GPUs
are reported GPU by GPU, each on its own profile) and, for each measured kernel, predicts its
time with tuning/time_model.py on the device profile: the sample is analysed again, the
measured kernel is matched to the case of today's tree whose launch (grid, block, dynamic
shared memory) at that point is the same, and the model is fed the registers that nvcc gave the
measured kernel. Per run it prints:

  Spearman   rank correlation of predicted and measured times over every matched kernel
  pick       the measured speed of the configuration the model ranks first, as a fraction
             of the fastest measured configuration (issue 17: >= 80 %, Spearman >= 0.7)
  per point  the model used as a dispatcher: at each point, the case it predicts fastest
             among those measured there, against the fastest measured (lowest fraction,
             points below 90 %), beside the generated dispatcher's figure of the same run

The last line sums up every run and the runs of the paper's samples (PAPER_SAMPLES: the
targets of issue 17 are set on them). A kernel of the run that no case of today's tree
launches alike (the generator changed since) is counted as unmatched and left out. The
kernels measured are those of the run's date: where the generator changed since, these
figures say how well the model ranks those kernels, not today's (bench/gpu_tune.py measures
today's on a GPU). Where a change of the generator since a run alters what the model counts of
a kernel (GENERATOR_CHANGES), the run's kernels are modelled as they were: a run's date is its
folder's environment.txt (a folder without one is today's generator).

--fit validates the model's latencies honestly (issue 37): for each GPU given, the constants of
FIT_GRID are fitted on that GPU's runs alone (the values of the grid whose model, used as a
dispatcher, loses the least at the runs' points: the mean of -log(fastest / chosen)), and the
model with them is reported on every other GPU's runs, which the fit never saw: fit on the
H100 -> the H200, fit on the H200 -> the H100. Then, per run and GPU, the model as a
dispatcher with the model's own constants (time_model.CONSTANTS).
"""
from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import re
import sys
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT / "bench"))

from gpu_page import dispatcher_ratios, median, read_json, sample_of  # noqa: E402
from paper_gpu import SUITE, variant_file  # noqa: E402

from parakern import dispatch  # noqa: E402
from parakern.analysis.facts import substitutions  # noqa: E402
from parakern.machine.devices import PROFILES, Device, get_profile, profile_key  # noqa: E402
from parakern.pipeline import analyze  # noqa: E402
from parakern.tuning import time_model as model  # noqa: E402
from parakern.bench.tune_measure import spearman  # noqa: E402

DISPATCH_TARGET = 0.90
# The latencies --fit chooses among (cycles; time_model.CONSTANTS): the ranges microbenchmarks of
# Volta to Hopper give for an L2 hit and a DRAM access (docs/time-model.md). The other constants
# are the model's own (device specifications, instruction counts, the run of their comment).
FIT_GRID = {"l2_latency": (200.0, 230.0, 270.0, 300.0, 350.0), "dram_latency": (400.0, 500.0, 600.0, 700.0)}
MIN_RANKED = 5   # a rank correlation over fewer kernels says nothing (3 kernels: 6 orders in all)
# The samples of the paper's section 6 (bench/paper_gpu.py's SUITE has ours beside them).
PAPER_SAMPLES = ("matmul", "matmul+cache", "jacobi1d", "transpose", "matadd", "polydiv")


def _divided_copies():
    """The copies before 30b1906: every box divided each element's index by its rows' length."""
    return mock.patch("parakern.tuning.copies.stepped", lambda schedule, region: False)


# Changes of the generator that alter what the model counts of a case's kernel, with the time they
# landed (UTC, ISO): a run measured before one is modelled with the change undone, as the kernels
# it measured were (the H100 run of 2026-11-25 14:53 copied matmul's b tile with a division and a
# remainder per element; today's copy steps its coordinates: 30 operations an element, not 96).
GENERATOR_CHANGES = (("2026-11-25T15:44:25Z", "staging copies that step their coordinates (30b1906)",
                      _divided_copies),)


def run_date(folder: Path) -> "str | None":
    """When the run of a folder was taken (its environment.txt's `date:`), None where unknown."""
    path = folder / "environment.txt"
    text = path.read_text(errors="replace") if path.is_file() else ""
    found = re.search(r"^date:\s*(\S+)", text, re.M)
    return found.group(1) if found else None


def _quantities(tree, date: "str | None") -> tuple:
    """The model's quantities of every case of `tree`, as the generator of `date` made its kernels."""
    with contextlib.ExitStack() as undone:
        for landed, _, undo in GENERATOR_CHANGES:
            if date is not None and date < landed:
                undone.enter_context(undo())
        return tuple(model.quantities(c) for c in tree.cases)


def _launch_key(grid, block, shared) -> tuple:
    return tuple(int(g) for g in grid), tuple(int(b) for b in block), int(shared or 0)


def _benched(run: str, scratch: Path) -> tuple:
    """The analysis of the sample as the run benched it (its cache(...) variant, if any)."""
    entry = SUITE[sample_of(run)]
    return analyze(variant_file(entry, scratch).read_text(), f"{entry.sample}.c").results


def measured_kernels(run: str, doc: dict, device: Device, scratch: Path, date: "str | None" = None) -> tuple:
    """(the run's measured kernels, how many matched no case): each kernel with the inputs of
    FORMULA of every case of today's tree that launches alike at its point (register variants),
    so that the model can be evaluated again with other constants at no analysis cost; `date`:
    the run's (run_date), whose generator's kernels are modelled."""
    (result,) = [r for r in _benched(run, scratch) if r.schedule.id == doc["schedule"]]
    tree, quantities = result.tree, _quantities(result.tree, date)
    kernels, unmatched = [], 0
    for r in doc["results"]:
        if r.get("skipped") or not r.get("correct") or not r.get("gpu_s") or not r.get("launch"):
            continue
        if r.get("compile_time"):   # the model is the parametric kernel's (an instance runs beside it)
            continue
        subs = substitutions(result.schedule, r["values"])
        choice = dispatch.choose(tree, device, subs)
        want = _launch_key(r["launch"]["grid"], r["launch"]["block"], r["launch"]["shared_bytes"])
        same = [k for k, sizes in enumerate(choice.launches, 1)
                if sizes is not None and _launch_key(sizes.grid, sizes.block, sizes.shared_bytes) == want]
        candidates = []
        for k in same:
            p = model.predict(quantities[k - 1], subs, device, r["launch"].get("registers"))
            if p is not None:
                inputs = {n: p.step(n) for n in model.QUANTITY_NAMES}
                off = abs(r["launch"].get("registers", 0) - quantities[k - 1].registers)
                candidates.append((k, inputs, off))
        if not candidates:
            unmatched += 1
            continue
        kernels.append({"values": r["values"], "measured_case": r["case"], "calls": r["calls"],
                        "measured_s": r["gpu_s"], "candidates": candidates})
    return kernels, unmatched


def predicted(kernels: list, device: Device, constants: "dict | None" = None) -> tuple:
    """(rows: per kernel the case predicted fastest among those launching alike, its predicted
    and measured seconds; kernels left out). One kernel of today's tree per case and point:
    where several measured kernels launch alike (register variants the tree no longer tells
    apart), the one whose registers are closest to the case's; the others are left out."""
    values = {**model.device_values(device), **(constants or {})}
    rows = []
    for x in kernels:
        best = None
        for k, inputs, off in x["candidates"]:
            env = model.evaluate({**inputs, **values})
            if best is None or env["time"] < best[1]["time"]:
                best = (k, env, off)
        k, env, off = best
        rows.append({"values": x["values"], "measured_case": x["measured_case"], "case": k,
                     "predicted_s": env["time"] * x["calls"], "ranked": env["ranked"] * x["calls"],
                     "measured_s": x["measured_s"], "off": off})
    kept = {}
    for x in rows:
        key = (tuple(sorted(x["values"].items())), x["case"])
        if key not in kept or x["off"] < kept[key]["off"]:
            kept[key] = x
    return list(kept.values()), len(rows) - len(kept)


def per_point(rows: list) -> list:
    """(fraction, values, chosen row) per point: the case the model ranks first there among those
    measured (FORMULA's `ranked`, as the dispatchers compare), against the fastest measured."""
    points = {}
    for x in rows:
        points.setdefault(tuple(sorted(x["values"].items())), []).append(x)
    out = []
    for key, xs in points.items():
        chosen = min(xs, key=lambda x: (x["ranked"], x["case"]))
        out.append((min(x["measured_s"] for x in xs) / chosen["measured_s"], dict(key), chosen))
    return out


def evaluate_run(run: str, doc: dict, device: Device, kernels: tuple, constants: "dict | None" = None) -> dict:
    """Predicted and measured times of one run's kernels (see the module's docstring)."""
    found, unmatched = kernels
    rows, alike = predicted(found, device, constants)
    out = {"run": run, "kernels": len(rows), "unmatched": unmatched + alike}
    if len(rows) < 2:
        return out
    out["spearman"] = spearman([x["predicted_s"] for x in rows], [x["measured_s"] for x in rows]) \
        if len(rows) >= MIN_RANKED else None
    best = min(x["measured_s"] for x in rows)
    pick = min(rows, key=lambda x: x["predicted_s"])
    out["pick"] = {**pick, "fraction": best / pick["measured_s"]}
    fractions = per_point(rows)
    worst = min(fractions, key=lambda f: f[0])
    out["per_point"] = {"points": len(fractions), "lowest": worst[0], "at": worst[1],
                        "below": sum(1 for f, _, _ in fractions if f < DISPATCH_TARGET),
                        "fractions": [f for f, _, _ in fractions]}
    ratios = dispatcher_ratios(doc)
    if ratios:
        out["dispatcher"] = {"points": len(ratios), "lowest": min(x[3] for x in ratios),
                             "below": sum(1 for x in ratios if x[3] < DISPATCH_TARGET)}
    return out


def fit(kernels: dict, device: Device) -> dict:
    """The values of FIT_GRID whose model, used as a dispatcher on these runs (run -> measured
    kernels), loses the least: the mean over their points of -log(fastest / chosen); the first
    such in the grid's order where several tie."""
    best = None
    for chosen in itertools.product(*FIT_GRID.values()):
        constants = dict(zip(FIT_GRID, chosen))
        losses = [-math.log(f) for found, _ in kernels.values()
                  for f, _, _ in per_point(predicted(found, device, constants)[0])]
        loss = sum(losses) / max(1, len(losses))
        if best is None or loss < best[0] - 1e-12:
            best = (loss, constants)
    return best[1]


def evaluate_tune(run: str, doc: dict, device: Device, scratch: Path, date: "str | None" = None) -> list:
    """The model against a `tune --measure` run (bench/gpu_tune.py: tune_<run>.json): each
    schedule's measured configurations predicted again by today's model (the sample analysed
    again; a configuration is its case and parameters), their Spearman and the measured speed of
    the one it ranks first, beside the figures recorded with the model of the run."""
    results = {r.schedule.id: r for r in _benched(run.removeprefix("tune_"), scratch)}
    out = []
    for entry in doc["schedules"]:
        measured = (entry.get("measure") or {}).get("measured") or []
        result = results.get(entry["schedule"])
        if len(measured) < 3 or result is None or result.tree is None:
            continue
        quantities = _quantities(result.tree, date)
        rows = []
        for m in measured:
            if not m.get("measured_s"):
                continue
            subs = substitutions(result.schedule, {**entry["fixed"], **m["parameters"]})
            k = _same_kernel(result.tree, m)
            p = None if k is None else model.predict(quantities[k - 1], subs, device)
            if p is not None:
                rows.append((p.time, m["measured_s"]))
        if len(rows) < 3:
            continue
        best, pick = min(t for _, t in rows), min(rows)
        out.append({"run": run, "schedule": entry["schedule"], "configurations": len(rows),
                    "spearman": spearman([p for p, _ in rows], [t for _, t in rows]), "pick": best / pick[1],
                    "recorded": (entry["measure"].get("spearman"), entry["measure"].get("pick_fraction_of_best"))})
    return out


# Decision codes added to the trees after a record was made: a record without "decisions"
# numbers the cases of a tree that had none of these (thread coarsening, 2026-11-26).
LATER_CODES = ("(6)",)


def _same_kernel(tree, measured: dict) -> "int | None":
    """The case of today's tree that is the measured configuration's kernel: the one with its
    decisions (recorded since 2026-11-26); for an older record, its case number counted among
    today's cases without the codes added since."""
    if measured.get("decisions"):
        return next((k for k, c in enumerate(tree.cases, 1) if list(c.decisions) == measured["decisions"]), None)
    then = [k for k, c in enumerate(tree.cases, 1) if not set(c.decisions) & set(LATER_CODES)]
    return then[measured["case"] - 1] if 1 <= measured["case"] <= len(then) else None


def _point(values: dict, data: set) -> str:
    return " ".join(f"{n}={v}" for n, v in values.items() if n not in data)


def _load(folders: list, profile: "str | None") -> "dict | str":
    """profile key -> {"runs": {run: doc}, "origin": {run: folder}, "tunes": {run: doc}, "dates": {tune
    run: its date}}, the GPUs in the order their first run appears; or the message of what is wrong."""
    gpus: dict = {}
    for folder in folders:
        if not folder.is_dir():
            return f"{folder} is not a folder"
        for path in sorted(folder.glob("*.json")):
            doc = read_json(path)
            if doc is None:
                print(f"model_vs_measured: {path} is not JSON (cut short?): left out", file=sys.stderr)
            if not isinstance(doc, dict):
                continue
            tune = path.stem.startswith("tune_") and doc.get("schedules") and \
                sample_of(path.stem.removeprefix("tune_")) in SUITE
            run = "results" in doc and "schedule" in doc and sample_of(path.stem) in SUITE
            if not (tune or run):
                continue
            key = profile or profile_key(str(doc.get("device", "")))
            if key not in PROFILES:
                why = (f"--profile {profile} is not a profile" if profile else
                       f"no profile is named after {doc.get('device')} ({path}): give --profile")
                return f"{why} (one of {', '.join(sorted(PROFILES))})"
            gpu = gpus.setdefault(key, {"runs": {}, "origin": {}, "tunes": {}, "dates": {}})
            if tune:
                gpu["tunes"][path.stem], gpu["dates"][path.stem] = doc, run_date(folder)
            if run:
                gpu["runs"][path.stem], gpu["origin"][path.stem] = doc, folder
    gpus = {key: gpu for key, gpu in gpus.items() if gpu["runs"]}
    return gpus or f"no bench JSON of bench/paper_gpu.py's samples in {', '.join(map(str, folders))}"


def _report(key: str, gpu: dict, device: Device, kernels: dict, args) -> bool:
    """The table of one GPU's runs with the model's own constants (the module's docstring);
    False where a rank correlation is not a number."""
    runs, origin = gpu["runs"], gpu["origin"]
    results = [evaluate_run(run, doc, device, kernels[run]) for run, doc in runs.items()]
    header = ("run", "kernels (unmatched)", "Spearman", "model's pick of the sweep", "model per point: lowest, "
              "points < 90 %", "dispatcher per point: lowest, points < 90 %")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] if args.markdown else []
    rhos, picks, paper = [], [], []
    for r, doc in zip(results, runs.values()):
        if "spearman" not in r:
            few = f"{r['kernels']} kernels matched, {r['unmatched']} unmatched: too few"
            lines.append(f"| {r['run']} | {few} | | | | |" if args.markdown else f"{r['run']}: {few}")
            continue
        data = _data_names(doc)
        pick = r["pick"]
        pick_text = (f"{pick['fraction']:.0%} (case {pick['case']}, {_point(pick['values'], data)})")
        pp = r["per_point"]
        per_point_text = f"{pp['lowest']:.0%}, {pp['below']} of {pp['points']}"
        disp = r.get("dispatcher")
        disp_text = f"{disp['lowest']:.0%}, {disp['below']} of {disp['points']}" if disp else "-"
        rho = r["spearman"]
        cells = (r["run"], f"{r['kernels']} ({r['unmatched']})",
                 f"{rho:.2f}" if rho is not None else f"- (fewer than {MIN_RANKED} kernels)", pick_text,
                 per_point_text, disp_text)
        picks.append(pick["fraction"])
        if rho is not None:
            rhos.append(rho)
        if sample_of(r["run"]) in PAPER_SAMPLES:
            paper.append((rho, pick["fraction"]))
        lines.append("| " + " | ".join(cells) + " |" if args.markdown else "  ".join(cells))
    first = origin[next(iter(runs))]
    later = {run: str(folder) for run, folder in origin.items() if folder != first}
    print(f"model: {key}; measured: {next(iter(runs.values()))['device']} ({first}"
          + "".join(f"; {run} from {folder}" for run, folder in later.items()) + ")")
    for folder in dict.fromkeys(origin.values()):
        date = run_date(folder)
        undone = [what for landed, what, _ in GENERATOR_CHANGES if date is not None and date < landed]
        if undone:
            print(f"{folder} was measured on {date}: its kernels modelled as they were then, without "
                  + "; ".join(undone))
    print("\n".join(lines))
    if rhos:
        print(f"Spearman >= 0.7 in {sum(1 for x in rhos if x >= 0.7)} of {len(rhos)} runs (median "
              f"{median(rhos):.2f}); the model's pick >= 80 % of the best in "
              f"{sum(1 for x in picks if x >= 0.8)} of {len(picks)} runs (lowest {min(picks):.0%})")
    for run, doc in gpu["tunes"].items():
        for t in evaluate_tune(run, doc, device, args.scratch, gpu["dates"][run]):
            rho, fraction = t["recorded"]
            recorded = (f" (recorded with the run's model: {rho:.2f}, {fraction:.0%})"
                        if rho is not None and fraction is not None else "")
            print(f"{t['run']} (tune --measure, {t['schedule']}): {t['configurations']} configurations, Spearman "
                  f"{t['spearman']:.2f}, the model's pick among them {t['pick']:.0%} of the best{recorded}")
    if paper:
        ranked = [x for x, _ in paper if x is not None]
        print(f"the paper's samples: Spearman >= 0.7 in {sum(1 for x in ranked if x >= 0.7)} of {len(ranked)} "
              f"runs (lowest {min(ranked, default=float('nan')):.2f}); the model's pick >= 80 % of the best in "
              f"{sum(1 for _, x in paper if x >= 0.8)} of {len(paper)} runs (lowest {min(x for _, x in paper):.0%})")
    return not any(math.isnan(x) for x in rhos)


def _data_names(doc: dict) -> set:
    """The run's data sizes (the same at every point): left out of the points printed."""
    first = doc["results"][0]["values"]
    return {n for n in first if re.fullmatch(r"[A-Z]|[nmMN]", n) and
            all(x["values"][n] == first[n] for x in doc["results"])}


def _cross(gpus: dict, devices: dict, kernels: dict, args) -> None:
    """--fit: FIT_GRID fitted on each GPU's runs, the model reported on every GPU's (the
    module's docstring), per run the lowest point of the model as a dispatcher."""
    own = ", ".join(f"{n}={model.CONSTANTS[n]:g}" for n in FIT_GRID)
    print(f"\nFitted on one GPU's runs, reported on another's (FIT_GRID; the model's own: {own})")
    for train in gpus:
        fitted = fit(kernels[train], devices[train])
        named = ", ".join(f"{n}={v:g}" for n, v in fitted.items())
        for test in gpus:
            rows = []
            for run, doc in gpus[test]["runs"].items():
                r = evaluate_run(run, doc, devices[test], kernels[test][run], fitted)
                if "per_point" in r:
                    rows.append((run, r["per_point"], _data_names(doc)))
            points = [f for _, pp, _ in rows for f in pp["fractions"]]
            run, pp, data = min(rows, key=lambda x: x[1]["lowest"])
            below = sum(1 for f in points if f < DISPATCH_TARGET)
            where = "the runs it was fitted on" if test == train else "runs the fit never saw"
            print(f"fit on {train} ({named}) -> {test} ({where}): the model as a dispatcher >= "
                  f"{pp['lowest']:.0%} of the fastest case at every point (lowest: {run}, "
                  f"{_point(pp['at'], data)}); {below} of {len(points)} points below 90 %")
            if args.markdown:
                print("\n| run | lowest | points < 90 % |\n|---|---|---|")
            for name, r_pp, _ in rows:
                cells = (name, f"{r_pp['lowest']:.0%}", f"{r_pp['below']} of {r_pp['points']}")
                print("| " + " | ".join(cells) + " |" if args.markdown else "  " + "  ".join(cells))
            if args.markdown:
                print()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", type=Path, nargs="+", metavar="folder")
    parser.add_argument("--profile", help="the model's GPU profile (default: from each run's device name)")
    parser.add_argument("--markdown", action="store_true", help="a markdown table instead of text")
    parser.add_argument("--fit", action="store_true",
                        help="fit the latencies of FIT_GRID on each GPU's runs, report them on the others'")
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/parakern-model-vs-measured"))
    args = parser.parse_args(argv)
    gpus = _load(args.folders, args.profile)
    if isinstance(gpus, str):
        print(f"model_vs_measured: {gpus}", file=sys.stderr)
        return 2
    args.scratch.mkdir(parents=True, exist_ok=True)
    devices = {key: model.modelled(get_profile(key)) for key in gpus}
    kernels = {key: {run: measured_kernels(run, doc, devices[key], args.scratch, run_date(gpu["origin"][run]))
                     for run, doc in gpu["runs"].items()} for key, gpu in gpus.items()}
    ok = True
    for n, (key, gpu) in enumerate(gpus.items()):
        if n:
            print()
        ok = _report(key, gpu, devices[key], kernels[key], args) and ok
    if args.fit:
        _cross(gpus, devices, kernels, args)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
