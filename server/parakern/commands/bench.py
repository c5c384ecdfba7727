"""`parakern bench FILE --data N=4096 --sweep B0=4,8,16 ... [--plan-only --profile h100]`."""
from __future__ import annotations

import sys
from pathlib import Path

from parakern.commands.args import add_register_tiles_argument, profile_name, progress, strategies_of
from parakern.commands.source_file import host_scalars, read_source, schedules_with_tree, unknown_name
from parakern.machine.devices import PROFILES, get_profile
from parakern.bench import plan as planning
from parakern.verify.build import BuildError, ToolMissing
from parakern.pipeline import Options, analyze
from parakern.process import outputs
from parakern.bench import report, session
from parakern.bench import runner
from parakern.bench.plan import plan_text

EXIT_MISSING = 3


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="time every case of a schedule on a GPU over a parameter sweep")
    p.add_argument("file", help="C source with meta_schedule / meta_for constructs")
    p.add_argument("--schedule", metavar="ID", help="schedule id (function:index); default: the first")
    p.add_argument("--data", action="append", default=[], metavar="N=V[,V...]", help="data parameter values")
    p.add_argument("--sweep", action="append", default=[], metavar="B=V[,V...]", help="program parameter values")
    p.add_argument("--device", type=int, default=0, help="CUDA device index (default 0)")
    p.add_argument("--repeat", type=int, default=20, help="timed launches per case and point (default 20)")
    p.add_argument("--serial-repeat", type=int, default=3, metavar="N",
                   help="timed runs of the serial C per point, median taken (default 3)")
    p.add_argument("--every-case", action="store_true",
                   help="time every case that fits the device at each point, not only the one whose "
                        "constraints hold (its constraints on R_B, Z, T aside: they say when the tree "
                        "prefers it, not whether it can run)")
    p.add_argument("--instances", action="store_true",
                   help="also time each case's compile-time instance at the point's program parameters "
                        "(what `parakern emit --fix` gives); the dispatchers launch those instances")
    p.add_argument("--serial-cache", metavar="DIR",
                   help="keep the serial C results in DIR and reuse them for the same program and inputs")
    p.add_argument("--serial-jobs", type=int, default=1, metavar="N",
                   help="run the serial C of all points first, N at a time (default 1: one by one)")
    p.add_argument("--json", metavar="OUT", help="write the results as JSON")
    p.add_argument("--csv", metavar="OUT", help="write the results as CSV")
    p.add_argument("--plot", metavar="OUT.png", help="heat map of the speedups per case")
    p.add_argument("--markdown", action="store_true", help="print the table as markdown")
    p.add_argument("--plan-only", action="store_true", help="print which case runs at each point; no GPU needed")
    p.add_argument("--profile", type=profile_name, metavar="DEVICE",
                   help=f"device profile for --plan-only ({', '.join(sorted(PROFILES))})")
    add_register_tiles_argument(p)


def _fail(message: str, code: int = 2) -> int:
    print(message, file=sys.stderr)
    return code


def run(args) -> int:
    try:
        data = planning.parse_assignments(args.data, "--data")
        sweeps = planning.parse_assignments(args.sweep, "--sweep")
    except planning.PlanError as exc:
        return _fail(f"parakern bench: {exc}")
    both = sorted(set(data) & set(sweeps))
    if both:   # --data B=3 --sweep B=64 ran B=3 alone, without a word
        return _fail(f"parakern bench: {both[0]} is given by --data and by --sweep; give it once")
    if args.repeat < 1 or args.serial_repeat < 1 or args.serial_jobs < 1:
        return _fail("parakern bench: --repeat, --serial-repeat and --serial-jobs must be at least 1")
    outputs = [f"--{n}" for n in ("json", "csv", "plot") if getattr(args, n)]
    if args.plan_only and outputs:   # the plan runs nothing: there are no results to write
        return _fail(f"parakern bench: --plan-only measures nothing, so {', '.join(outputs)} would write "
                     "nothing; drop --plan-only to run the plan on a GPU, or drop them")
    if args.plan_only and not args.profile:
        return _fail("parakern bench: --plan-only needs --profile DEVICE "
                     f"({', '.join(sorted(PROFILES))})")
    if args.profile and not args.plan_only:   # it was ignored: the run reads the GPU it runs on
        return _fail("parakern bench: --profile names the device of --plan-only; a run measures the GPU of "
                     "this machine (--device N picks one): add --plan-only, or drop --profile")
    if args.instances and args.plan_only:
        return _fail("parakern bench: --instances times compile-time instances, which --plan-only does not "
                     "run: drop one of them")
    problem = _output_problem(args)
    if problem:   # before the run: a bench on a GPU takes minutes
        return _fail(f"parakern bench: {problem}")
    text = read_source(args.file, "bench")
    if text is None:
        return 2
    if not args.plan_only:   # after reading: a file that cannot be read says so first
        missing = runner.requirements()
        if missing:
            return _fail(missing, EXIT_MISSING)
    analysis = analyze(text, args.file, Options(strategies=strategies_of(args)))
    results = schedules_with_tree(analysis, args.file, "bench", args.schedule)
    if not results:
        return 2
    result = results[0]
    unknown = unknown_name(list(data) + list(sweeps), [result], args.file, host_scalars(text, args.file, [result]))
    if unknown:
        return _fail(f"parakern bench: --data/--sweep {unknown}")
    try:
        if args.plan_only:
            plan = planning.make_plan(result, data, sweeps, get_profile(args.profile), args.every_case)
            print(planning.plan_text(plan))
            return 0
        return _bench(args, text, result, data, sweeps)
    except planning.PlanError as exc:
        return _fail(f"parakern bench: {exc}")
    except KeyboardInterrupt:
        return _fail("\nparakern bench: interrupted", 130)
    except (BuildError, ToolMissing) as exc:
        detail = f":\n{exc.excerpt()}" if isinstance(exc, BuildError) else ""
        return _fail(f"parakern bench: {exc}{detail}", 1)
    except Exception as exc:  # one line, never a traceback
        return _fail(f"parakern bench: {type(exc).__name__}: {exc}", 1)


def _output_problem(args) -> str:
    """Why --json, --csv, --plot or --serial-cache cannot be written ('' where they can): one of
    them is the C file (it was replaced by the JSON), a folder, in a folder that does not exist,
    or two of them are the same file."""
    files = {f"--{n}": getattr(args, n) for n in ("json", "csv", "plot")}
    for option, path in files.items():
        problem = outputs.file_problem(path, option, [args.file], results=True) if path else ""
        if problem:
            return problem
    if args.plot and Path(args.plot).suffix.lower() not in ("", ".png"):   # x.jpg got PNG bytes
        return f"--plot {args.plot}: the heat maps are PNG pictures: give a name ending in .png"
    cache = args.serial_cache and outputs.folder_problem(str(args.serial_cache), "--serial-cache")
    return cache or outputs.clash(files)


def _bench(args, text, result, data, sweeps) -> int:
    outcome = session.bench(text, args.file, result, data, sweeps, runner.GpuRunner, args.device, args.repeat,
                            progress=progress, on_plan=lambda plan: print(plan_text(plan), file=sys.stderr),
                            serial_repeat=args.serial_repeat, every_case=args.every_case,
                            serial_cache=args.serial_cache, serial_jobs=args.serial_jobs,
                            instances=args.instances)
    rows, data_names = session.block_names(outcome.plan), list(outcome.plan.data_names)
    print(report.table_text(outcome.measurements, rows, data_names, markdown=args.markdown,
                            dispatches=outcome.dispatches))
    if args.json:
        report.write_json(args.json, outcome.measurements, outcome.header(), outcome.dispatches)
    if args.csv:
        report.write_csv(args.csv, outcome.measurements, outcome.dispatches)
    if args.plot:
        for path in report.write_heatmaps(args.plot, outcome.measurements, rows, data_names):
            print(f"wrote {path}", file=sys.stderr)
    # a sweep that measures nothing is not a success (scripts check the exit): no point could run,
    # or every one that could was skipped when it ran (a host loop of no step: T = 0)
    if not any(m.case is not None and not m.skipped for m in outcome.measurements):
        print("parakern bench: no point of the sweep can run (the plan above, or the table, gives each "
              "one's reason); nothing was measured", file=sys.stderr)
        return 1
    if not outcome.correct:
        print("parakern bench: some results differ from the serial C (marked WRONG above)", file=sys.stderr)
    return 0 if outcome.correct else 1
