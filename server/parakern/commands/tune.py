"""`parakern tune FILE --profile h100 --data N=4096 [--top 5] [--json] [--formula] [--measure]`."""
from __future__ import annotations

import json
import math
import sys

from parakern.commands.args import progress
from parakern.commands.source_file import host_scalars, no_tree, read_source, schedules_with_tree, unknown_name
from parakern.machine.devices import PROFILES
from parakern.machine.limits import c_integer
from parakern.reports.tuning import configuration_text, emit_hint, formulas, time_text, tuning_text
from parakern.machine.devices import get_profile
from parakern import search
from parakern.tuning import time_model
from parakern.pipeline import analyze
from parakern.bench import runner
from parakern.bench.tune_measure import measure, selection

EXIT_MISSING = 3


def add_parser(sub) -> None:
    p = sub.add_parser("tune", help="the best program parameters of each schedule on a GPU profile, by the time model")
    p.add_argument("file", help="C source with meta_schedule / meta_for constructs")
    p.add_argument("--profile", required=True, metavar="GPU", help=f"device profile ({', '.join(sorted(PROFILES))})")
    p.add_argument("--data", action="append", default=[], metavar="N=V",
                   help="a parameter's value (data sizes, and any parameter not to be tuned); repeatable")
    p.add_argument("--schedule", metavar="ID", help="schedule id (function:index); default: every schedule")
    p.add_argument("--top", type=int, default=5, help="configurations shown per schedule (default 5)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--formula", action="store_true", help="also print each case's time model")
    p.add_argument("--measure", action="store_true",
                   help="run the top configurations and a sample of the rest on the GPU (the bench) and "
                        "report the model's rank correlation and the pick's fraction of the best")
    p.add_argument("--device", type=int, default=0, help="CUDA device index for --measure (default 0)")
    p.add_argument("--repeat", type=int, default=10, help="timed launches per configuration for --measure")


def _fail(message: str, code: int = 2) -> int:
    print(message, file=sys.stderr)
    return code


def _data(items) -> dict:
    """["N=4096", "t=0"] -> {"N": 4096, "t": 0}; ValueError with the item at fault."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise ValueError(f"--data {item!r}: expected NAME=VALUE")
        number = c_integer(value)
        if number is None and "=" in value:   # --data M=1000,N=600: one name per --data
            each = " ".join(f"--data {part.strip()}" for part in item.split(",") if part.strip())
            raise ValueError(f"--data {item!r}: one name per --data, repeated: {each}")
        if number is None:
            raise ValueError(f"--data {item!r}: the value must be one integer")
        if name in out and out[name] != number:
            raise ValueError(f"--data {item!r}: {name} has a value already ({out[name]})")
        out[name] = number
    return out


def run(args) -> int:
    key = args.profile.strip().lower()
    if key not in PROFILES:
        return _fail(f"parakern tune: unknown GPU profile {args.profile!r}; known: {', '.join(sorted(PROFILES))}")
    if args.top < 1 or args.repeat < 1:
        return _fail("parakern tune: --top and --repeat must be at least 1")
    try:
        fixed = _data(args.data)
    except ValueError as exc:
        return _fail(f"parakern tune: {exc}")
    text = read_source(args.file, "tune")
    if text is None:
        return 2
    try:
        device = time_model.modelled(get_profile(key))
    except time_model.ModelError as exc:
        return _fail(f"parakern tune: {exc}")
    analysis = analyze(text, args.file)
    with_tree = schedules_with_tree(analysis, args.file, "tune", args.schedule)
    if not with_tree:
        if args.json:   # a script reading stdout gets the document, with the diagnostics that say why
            why = no_tree(analysis, args.file, args.schedule, "in `diagnostics`")
            print(json.dumps(_document(args, device, [], [why], [], analysis), indent=2, ensure_ascii=False))
        return 2
    scalars = host_scalars(text, args.file, with_tree)
    unknown = unknown_name(fixed, with_tree, args.file, scalars)
    if unknown:
        return _fail(f"parakern tune: --data {unknown}")
    tunings, problems, status = [], [], 0
    for r in with_tree:
        mine = {n: v for n, v in fixed.items() if n in {p.name for p in r.schedule.params}}
        # the function's other scalar arguments, another schedule's parameters included: its
        # asserts may read them (`assert(m % B == 0)` where only the second schedule reads m)
        arguments = {n: v for n, v in fixed.items() if n in scalars and n not in mine}
        try:
            tunings.append((r, mine, search.tune(r, mine, device, arguments)))
        except search.TuneError as exc:   # a value missing or wrong: the user's to give (usage, 2)
            problems.append(str(exc))
            status = 2
        except Exception as exc:  # one line, never a traceback
            problems.append(f"{r.schedule.id}: internal error ({type(exc).__name__}: {exc})")
            status = status or 1
    empty = [t for _, _, t in tunings if t.pick is None]
    # a function's common values only where all its schedules were tuned (three_mm without nm:
    # 'call it with B0=2 B1=32' summed two of its three products): each has a case tree, was
    # tuned and has a feasible configuration
    picked = {r.schedule.id for r, _, t in tunings if t.pick is not None}
    failed = {r.schedule.function for r in analysis.results
              if args.schedule in (None, r.schedule.id) and r.schedule.id not in picked}
    shared = search.shared_choices([(r.schedule.function, t) for r, _, t in tunings
                                    if r.schedule.function not in failed])
    document = _document(args, device, [t.as_dict(args.top) for _, _, t in tunings], problems,
                         [c.as_dict() for c in shared], analysis)
    if args.json:
        if args.formula:
            for entry, (r, _, _) in zip(document["schedules"], tunings):
                entry["formula"] = formulas(r)
    elif tunings:
        in_shared = {s for choice in shared for s, _ in choice.picks}
        print(tuning_text(tunings, device, args.top, args.formula, args.file, in_shared))
        for choice in shared:
            print(_shared_text(choice, args.file))
    for problem in problems:
        print(f"parakern tune: {problem}", file=sys.stderr)
    for t in empty:
        print(f"parakern tune: {t.schedule}: no feasible configuration ({_rejected(t)})", file=sys.stderr)
        status = status or 1
    if args.measure:
        code = _measure(args, text, tunings, document, fixed)
        status = status or code
    if args.json:
        print(json.dumps(document, indent=2, ensure_ascii=False))
    return status


def _document(args, device, schedules: list, problems: list, functions: list, analysis) -> dict:
    """tune --json's document; `diagnostics` as optimize --json gives them."""
    return {"file": args.file, "device": device.key, "device_name": device.name, "schedules": schedules,
            "problems": problems, "functions": functions,
            "diagnostics": [d.to_json() for d in analysis.diagnostics]}


def _rejected(tuning) -> str:
    return "; ".join(f"{n} {why}" for why, n in tuning.rejected[:3]) or "no candidate"


def _shared_text(choice, file: str = "FILE") -> str:
    """What a function whose schedules share a tuned parameter is called with."""
    values = " ".join(f"{n}={v}" for n, v in choice.values)
    each = "; ".join(f"{s} case {c.case} {time_text(c.time)}" + (f", computes {c.computes}" if c.partial else "")
                     for s, c in choice.picks)
    head = (f"{choice.function}: its schedules share {', '.join(choice.shared)} (one argument each): "
            f"call it with {values}: {time_text(choice.time)} in all ({each})")
    if not choice.agrees():
        head += (f"; each schedule's own pick would total {time_text(choice.alone)}, but their values "
                 "differ and the function takes one")
    return head + "\n  " + emit_hint(file, choice.every_value)


def _measure(args, text, tunings, document, given: dict) -> int:
    missing = runner.requirements()
    if missing:
        print(missing.replace("parakern bench:", "parakern tune: --measure needs a GPU:", 1), file=sys.stderr)
        return EXIT_MISSING
    status = 0
    for entry, (r, mine, t) in zip(document["schedules"], tunings):
        if t.pick is None:
            continue
        # the function's own scalar arguments given with --data (jacobi's step count) run with it
        fixed = {**{n: v for n, v in given.items() if n not in {p.name for p in r.schedule.params}}, **mine}
        chosen = selection(t.configurations, args.top)
        try:
            comparison = measure(text, args.file, r, t, chosen, fixed, runner.GpuRunner, args.device, args.repeat,
                                 progress=progress)
        except Exception as exc:  # one line, never a traceback
            print(f"parakern tune: --measure {t.schedule}: {type(exc).__name__}: {exc}", file=sys.stderr)
            status = 1
            continue
        entry["measure"] = comparison.as_dict()
        if not args.json:
            print(f"{t.schedule} measured: {len([1 for _, m in comparison.pairs if not math.isnan(m)])} "
                  f"configurations; Spearman {comparison.spearman:.2f}; the pick reaches "
                  f"{comparison.pick_fraction:.0%} of the best measured speed")
            for c, m in comparison.pairs:
                print(f"  {configuration_text(c):<40} predicted {time_text(c.time):>10}  measured {time_text(m):>10}")
        if not comparison.correct:
            status = 1
    return status
