"""`parakern emit FILE [-o out.cu] [--fix B=V,...] [--target sm_XX]`: the comprehensive CUDA of a
file (every case's kernel and the dispatchers), with compile-time instances at --fix values."""
from __future__ import annotations

import sys

from parakern.analysis.facts import check_facts, substitutions
from parakern.analysis.fixed import fixable, fixed_points, unlaunchable
from parakern.codegen import emit
from parakern.commands.args import add_register_tiles_argument, add_staging_argument, strategies_of
from parakern.commands.source_file import read_source
from parakern.commands.profile import parse_values
from parakern.machine.targets import add_target_argument
from parakern.pipeline import Options, analyze
from parakern.process import outputs


def add_parser(sub) -> None:
    p = sub.add_parser("emit", help="write the comprehensive CUDA (kernels and dispatchers) of a C file")
    p.add_argument("file", help="C source with meta_schedule / meta_for constructs")
    p.add_argument("-o", "--output", metavar="OUT", help="write the .cu here (default: standard output)")
    p.add_argument("--fix", action="append", default=[], metavar="B=V,...",
                   help="program parameter values (chosen by a bench or a tuner) to compile an instance of "
                        "each case for, launched where the run-time values are these; repeatable")
    add_target_argument(p)
    add_staging_argument(p)
    add_register_tiles_argument(p)


def run(args) -> int:
    """The .cu on stdout or in OUT; diagnostics (schedules left out, and why) on stderr."""
    source = read_source(args.file, "emit")
    if source is None:
        return 2
    problem = outputs.file_problem(args.output, "-o", [args.file]) if args.output else ""
    if problem:
        print(f"parakern emit: {problem}", file=sys.stderr)
        return 2
    fixed = [parse_values(text) for text in args.fix]
    if any(not v for v in fixed):   # None: not NAME=INTEGER; {}: nothing given (--fix "")
        print("parakern emit: --fix takes NAME=INTEGER pairs separated by commas, each name once",
              file=sys.stderr)
        return 2
    analysis = analyze(source, args.file, Options(target=args.target, staging=args.staging,
                                                     strategies=strategies_of(args)))
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
            why = check_facts(s, substitutions(s, mine))
            if why:
                return f"--fix {given}: {why} in {where}"
            cases = r.tree.cases if r.tree is not None else ()
            for point in fixed_points(s, (mine,))[:1]:
                fails = [unlaunchable(case, point) for case in cases]
                if cases and all(fails):
                    return (f"--fix {given}: no kernel of {where} can run at these values on any known GPU "
                            f"(case 1 needs {fails[0]})")
    return ""
