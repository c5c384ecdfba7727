"""`parakern optimize FILE [--json | --format text|json|dot] [--profiles GPU,GPU] [--data N=V]`: every
meta_schedule of a file, its case tree and diagnostics (the JSON document of docs/cli.md, text, or
Graphviz), and what the default dispatcher launches on each GPU at a typical size (reports/runs.py)."""
from __future__ import annotations

import json
import sys

from parakern.bench.plan import PlanError, parse_assignments
from parakern.commands.args import (add_register_tiles_argument, add_staging_argument, profile_list,
                                    profile_name, strategies_of)
from parakern.commands.source_file import read_source
from parakern.machine.devices import DEFAULT_PROFILES, PROFILES
from parakern.machine.targets import add_target_argument
from parakern.pipeline import Options, analyze
from parakern.reports import document as report


def add_parser(sub) -> None:
    opt = sub.add_parser("optimize", help="analyse every meta_schedule of a C file and print it")
    opt.add_argument("file", help="C source with meta_schedule / meta_for constructs")
    fmt = opt.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the JSON document (see docs/cli.md)")
    fmt.add_argument("--format", choices=("text", "json", "dot"), default="text",
                     help="text (default), json, or dot (Graphviz picture of each case tree)")
    add_target_argument(opt)
    opt.add_argument("--occupancy", metavar="DEVICE", type=profile_name,
                     help="also branch on occupancy (P_occ) computed for this GPU "
                          f"({', '.join(sorted(PROFILES))})")
    add_staging_argument(opt)
    opt.add_argument("--profiles", metavar="GPU,GPU", type=profile_list, default=DEFAULT_PROFILES,
                     help="the GPUs the report says what runs on (default "
                          f"{','.join(DEFAULT_PROFILES)}; known: {', '.join(sorted(PROFILES))})")
    opt.add_argument("--data", action="append", default=[], metavar="N=V",
                     help="a data size to say what runs at (default: the bench's, 1024); repeatable")
    add_register_tiles_argument(opt)


def run(args) -> int:
    try:
        data = parse_assignments(args.data, "--data")
    except PlanError as exc:
        print(f"parakern optimize: {exc}", file=sys.stderr)
        return 2
    source = read_source(args.file, "optimize")
    if source is None:
        return 2
    analysis = analyze(source, args.file, Options(target=args.target, occupancy=args.occupancy,
                                                         staging=args.staging, strategies=strategies_of(args)))
    if args.json or args.format == "json":
        print(json.dumps(report.document(analysis, args.profiles, data), indent=2, ensure_ascii=False))
    elif args.format == "dot":   # DOT on stdout; why a schedule has no graph, on stderr
        for d in analysis.diagnostics:
            print(d.format(), file=sys.stderr)
        print(report.dot(analysis))
    else:
        print(report.text(analysis, args.profiles, data))
    return 0
