"""Command line: `parakern optimize FILE [--json | --format text|json|dot]`,
`parakern emit FILE [-o out.cu] [--target sm_80]`, `parakern profile FILE`, verify, bench, tune, serve."""
from __future__ import annotations

import argparse
import json
import os
import sys

from parakern import interrupts, outputs
from parakern.command_input import read_source
from parakern.devices import DEFAULT_PROFILES, PROFILES
from parakern.targets import add_target_argument, unsupported



def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parakern",
        description="Comprehensive parametric CUDA kernels from MetaFork-annotated C.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    opt = sub.add_parser("optimize", help="analyse every meta_schedule of a C file and print it")
    opt.add_argument("file", help="C source with meta_schedule / meta_for constructs")
    fmt = opt.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the JSON document (see the README)")
    fmt.add_argument("--format", choices=("text", "json", "dot"), default="text",
                     help="text (default), json, or dot (Graphviz picture of each case tree)")
    add_target_argument(opt)
    opt.add_argument("--occupancy", metavar="DEVICE", type=profile_name,
                     help="also branch on occupancy (P_occ) computed for this GPU "
                          f"({', '.join(sorted(PROFILES))})")
    _add_staging_argument(opt)
    from parakern.verify.command import add_parser as add_verify
    add_verify(sub)
    from parakern.lsp.command import add_parser as add_serve
    add_serve(sub)
    from parakern.bench.command import add_parser as add_bench
    add_bench(sub)
    from parakern.profile_command import add_parser as add_profile
    add_profile(sub)
    from parakern.tuning.command import add_parser as add_tune
    add_tune(sub)
    emit = sub.add_parser("emit", help="write the comprehensive CUDA (kernels and dispatchers) of a C file")
    emit.add_argument("file", help="C source with meta_schedule / meta_for constructs")
    emit.add_argument("-o", "--output", metavar="OUT", help="write the .cu here (default: standard output)")
    emit.add_argument("--fix", action="append", default=[], metavar="B=V,...",
                      help="program parameter values (chosen by a bench or a tuner) to compile an instance of "
                           "each case for, launched where the run-time values are these; repeatable")
    add_target_argument(emit)
    _add_staging_argument(emit)
    return parser


def profile_name(text: str) -> str:
    """A GPU profile's name as an option's value, in any case (`H100`, as --staging and tune
    took it; --occupancy and bench --profile refused it)."""
    key = text.strip().lower()
    if key not in PROFILES:
        known = ", ".join(sorted(PROFILES))
        raise argparse.ArgumentTypeError(f"unknown GPU profile {key or repr(text)}; known: {known}")
    return key


def _profile_list(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
    if not names:
        raise argparse.ArgumentTypeError(f"unknown GPU profile {text!r}; known: {', '.join(sorted(PROFILES))}")
    return tuple(profile_name(n) for n in names)


def _add_staging_argument(parser) -> None:
    parser.add_argument("--staging", metavar="GPU,GPU", type=_profile_list, default=(),
                        help="judge staging's cost in occupancy on these GPUs: where shared memory "
                             "halves the resident blocks on one of them, the tree offers the variant "
                             f"without it there (e.g. {','.join(DEFAULT_PROFILES)}; trees take longer)")


def main(argv: "list[str] | None" = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["serve"]:         # straight on: the editor waits for this one
        from parakern.lsp.command import main as serve
        return serve(argv[1:])
    try:
        parser = _parser()    # imports sympy and the rest: a Ctrl-C here is no traceback either
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed a one-line usage error
        return 2 if exc.code else 0
    except KeyboardInterrupt:
        return 130
    why = unsupported(args.target) if getattr(args, "target", None) else ""
    if why:
        print(f"parakern {args.command}: --target {args.target}: {why}", file=sys.stderr)
        return 2
    if args.command != "serve":       # the server has its own (parakern.lsp.server)
        interrupts.install()
    try:
        status = _run(args)
    except BrokenPipeError:  # output piped into `head`: not an error of the user's
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:  # Ctrl-C or a termination signal: no traceback
        return 130
    except OSError as exc:  # standard output on a full disk (`> /dev/full`), a closed terminal
        print(f"parakern {args.command}: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
        _quiet_stdout()
        return 1
    # an interrupt a library swallowed (raised in a finalizer, z3's) still ends the command so
    return 130 if interrupts.received() else status


def _run(args) -> int:
    if args.command == "optimize":
        return _optimize(args)
    if args.command == "emit":
        return _emit(args)
    if args.command == "verify":
        from parakern.verify.command import run as run_verify
        return run_verify(args)
    if args.command == "bench":
        from parakern.bench.command import run as run_bench
        return run_bench(args)
    if args.command == "profile":
        from parakern.profile_command import run as run_profile
        return run_profile(args)
    if args.command == "tune":
        from parakern.tuning.command import run as run_tune
        return run_tune(args)
    if args.command == "serve":
        from parakern.lsp.command import run as run_serve
        return run_serve(args)
    return 2


def _quiet_stdout() -> None:
    """Standard output to /dev/null, so that Python's flush at exit does not fail once more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _optimize(args) -> int:
    source = read_source(args.file, "optimize")
    if source is None:
        return 2
    from parakern import report
    from parakern.pipeline import Options, analyze
    analysis = analyze(source, args.file, Options(target=args.target, occupancy=args.occupancy,
                                                         staging=args.staging))
    if args.json or args.format == "json":
        print(json.dumps(report.document(analysis), indent=2, ensure_ascii=False))
    elif args.format == "dot":   # DOT on stdout; why a schedule has no graph, on stderr
        for d in analysis.diagnostics:
            print(d.format(), file=sys.stderr)
        print(report.dot(analysis))
    else:
        print(report.text(analysis))
    return 0


def _emit(args) -> int:
    """The .cu on stdout or in OUT; diagnostics (schedules left out, and why) on stderr."""
    source = read_source(args.file, "emit")
    if source is None:
        return 2
    problem = outputs.file_problem(args.output, "-o", [args.file]) if args.output else ""
    if problem:
        print(f"parakern emit: {problem}", file=sys.stderr)
        return 2
    from parakern.codegen import emit
    from parakern.pipeline import Options, analyze
    from parakern.profile_command import parse_values
    fixed = [parse_values(text) for text in args.fix]
    if any(not v for v in fixed):   # None: not NAME=INTEGER; {}: nothing given (--fix "")
        print("parakern emit: --fix takes NAME=INTEGER pairs separated by commas, each name once",
              file=sys.stderr)
        return 2
    analysis = analyze(source, args.file, Options(target=args.target, staging=args.staging))
    problem = _fixed_problem(analysis, fixed)
    if problem:
        for d in analysis.diagnostics:
            print(d.format(), file=sys.stderr)
        print(f"parakern emit: {problem}", file=sys.stderr)
        return 2
    emitted = emit(analysis, tuple(fixed))
    for d in analysis.diagnostics + emitted.diagnostics:
        print(d.format(), file=sys.stderr)
    if args.output is None:
        sys.stdout.write(emitted.text)
        return 0
    try:
        outputs.write_text(args.output, emitted.text)
    except OSError as exc:
        print(f"parakern emit: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


def _fixed_problem(analysis, fixed: list) -> str:
    """Why values given with --fix cannot be compiled in ('' when they can): a name no schedule
    has as an integer program parameter, a value beyond its C type or against a fact (an
    assertion, a loop bound) of a schedule (facts.check_facts). Before, such values were
    left out without a word, or written into an instance nvcc rejects (B0 = -4 in its name)."""
    from parakern import dispatch
    from parakern.analysis.fixed import fixable, fixed_points, unlaunchable
    from parakern.facts import check_facts
    schedules = [r.schedule for r in analysis.results]
    names = sorted({p.name for s in schedules for p in fixable(s)})
    for values in fixed:
        given = ",".join(f"{n}={v}" for n, v in values.items())
        for name in values:
            if name not in names:
                host = any(name in s.host_loops for s in schedules)
                other = any(p.name == name for s in schedules for p in s.params)
                kind = ("is the variable of a host loop around the schedule (a new value at every execution)"
                        if host else
                        "is not an integer program parameter (data sizes and floats stay run-time values)"
                        if other else "is no schedule's parameter")
                return (f"--fix {given}: {name or '(no name)'} {kind}; the parameters it fixes: "
                        f"{', '.join(names) or 'none'}")
        for r in analysis.results:
            s = r.schedule
            mine = {n: v for n, v in values.items() if n in {p.name for p in fixable(s)}}
            if not mine:
                continue
            where = f"{s.id} ({s.span.file}:{s.span.line}:{s.span.col})"
            why = check_facts(s, dispatch.substitutions(s, mine))
            if why:
                return f"--fix {given}: {why} in {where}"
            cases = r.tree.cases if r.tree is not None else ()
            for point in fixed_points(s, (mine,))[:1]:
                fails = [unlaunchable(case, point) for case in cases]
                if cases and all(fails):
                    return (f"--fix {given}: no kernel of {where} can run at these values on any known GPU "
                            f"(case 1 needs {fails[0]})")
    return ""


if __name__ == "__main__":
    raise SystemExit(main())
