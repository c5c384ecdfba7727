"""The command line: `parakern optimize | emit | verify | profile | tune | bench | serve`, one
module per command in this package (each with `add_parser` and `run`). Usage errors exit 2, an
interrupt 130, a closed or full standard output ends quietly."""
from __future__ import annotations

import argparse
import os
import sys

from parakern.commands import bench, emit, optimize, profile, serve, tune, verify
from parakern.machine.targets import unsupported
from parakern.process import interrupts

# in the order `parakern --help` lists them
COMMANDS = {"optimize": optimize, "verify": verify, "serve": serve, "bench": bench, "profile": profile,
            "tune": tune, "emit": emit}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parakern",
        description="Comprehensive parametric CUDA kernels from MetaFork-annotated C.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for command in COMMANDS.values():
        command.add_parser(sub)
    return parser


def main(argv: "list[str] | None" = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = _parser()
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
        status = COMMANDS[args.command].run(args)
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


def _quiet_stdout() -> None:
    """Standard output to /dev/null, so that Python's flush at exit does not fail once more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
