"""`parakern verify FILE [--points N] [--seed N] [--json] [--build-dir DIR] [--target sm_XX]
[--tolerance X] [--no-race-check]`.

Exit status: 0 every case of every schedule matched the serial C and was chosen by its
dispatcher; 1 a mismatch, a wrong case, a crash or something not verified; 2 bad usage;
3 a needed tool (gcc, g++) is missing.
"""
from __future__ import annotations

import argparse
import json
import sys

from parakern.process import interrupts, outputs
from parakern.commands.args import add_register_tiles_argument, strategies_of
from parakern.commands.source_file import read_source
from parakern.machine.targets import add_target_argument
from parakern.verify.runner import TOLERANCE
from parakern.pipeline import Options
from parakern.verify import ToolMissing, text, verify_source

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_TOOL = 0, 1, 2, 3


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("verify", help="run every case of every meta_schedule on a CPU emulation of CUDA "
                                      "and compare it with the serial C")
    p.add_argument("file", help="C source with meta_schedule / meta_for constructs")
    p.add_argument("--points", type=int, default=3, metavar="N",
                   help="parameter points per case (default 3, at most 50)")
    p.add_argument("--seed", type=int, default=0, help="seed of the parameter points and the inputs (default 0)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--build-dir", metavar="DIR",
                   help="keep the generated .cu, the C files and the libraries in DIR")
    p.add_argument("--tolerance", metavar="X | float=X,double=Y", type=tolerance,
                   help="relative bound of floating differences, |got - expected| <= X * max(1, max |expected| "
                        "over the array), for both types or per type (the other keeps its default); replaces the "
                        "default bound (1e-5 float, 1e-12 double, or twice the serial C's own spread with and "
                        "without FMA contraction where larger)")
    add_register_tiles_argument(p)
    p.add_argument("--no-race-check", dest="races", action="store_false",
                   help="do not look for races by execution (shadow memory of every element reference, and "
                        "a second run in a shuffled thread order): faster, and a race may pass")
    add_target_argument(p)
    return p


def tolerance(text: str) -> dict:
    """`--tolerance`: 'X' for both floating types, or 'float=X,double=Y' (either alone)."""
    bounds = dict(TOLERANCE)
    parts = [p.strip() for p in text.split(",")]
    for part in parts:
        name, _, value = part.rpartition("=")
        if (name and name.strip() not in TOLERANCE) or (not name and len(parts) > 1):
            raise argparse.ArgumentTypeError(f"'{part}': write a number, or float=X and/or double=Y")
        try:
            number = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{value}' is not a number") from None
        if not 0 <= number < float("inf"):
            raise argparse.ArgumentTypeError(f"'{value}': the bound must be a finite number >= 0")
        for ctype in ([name.strip()] if name else TOLERANCE):
            bounds[ctype] = number
    return bounds


def run(args) -> int:
    if not 1 <= args.points <= 50:
        print("parakern verify: --points must be between 1 and 50", file=sys.stderr)
        return EXIT_USAGE
    source = read_source(args.file, "verify")
    if source is None:
        return EXIT_USAGE
    build_dir = None
    if args.build_dir is not None:   # the user's folder: a wrong one is usage, not an internal error
        build_dir, problem = outputs.build_folder(args.build_dir, "--build-dir")
        if problem:
            print(f"parakern verify: {problem}", file=sys.stderr)
            return EXIT_USAGE
    try:
        result = verify_source(source, args.file, args.points, seed=args.seed, build_dir=build_dir,
                               options=Options(target=args.target, strategies=strategies_of(args)), races=args.races,
                               tolerance=args.tolerance)
    except ToolMissing as exc:
        print(f"parakern verify: {exc}", file=sys.stderr)
        return EXIT_TOOL
    except KeyboardInterrupt:   # 130, as every command: 1 says "not verified"
        print("parakern verify: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug of ours: one line, not a traceback
        interrupts.reraise()
        print(f"parakern verify: internal error ({type(exc).__name__}: {exc}); please report it with "
              "this file", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        print(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
    else:
        print(text(result))
    return EXIT_OK if result.ok else EXIT_FAILED
