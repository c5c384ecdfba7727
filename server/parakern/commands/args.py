"""What several commands share on their command lines: GPU profile names, the --staging and
--register-tiles options, and progress on stderr."""
from __future__ import annotations

import argparse
import sys

from parakern.machine.devices import DEFAULT_PROFILES, PROFILES
from parakern.strategies.decisions import strategy_codes


def profile_name(text: str) -> str:
    """A GPU profile's name as an option's value, in any case (`H100`, as --staging and tune
    took it; --occupancy and bench --profile refused it)."""
    key = text.strip().lower()
    if key not in PROFILES:
        known = ", ".join(sorted(PROFILES))
        raise argparse.ArgumentTypeError(f"unknown GPU profile {key or repr(text)}; known: {known}")
    return key


def profile_list(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
    if not names:
        raise argparse.ArgumentTypeError(f"unknown GPU profile {text!r}; known: {', '.join(sorted(PROFILES))}")
    return tuple(profile_name(n) for n in names)


def add_staging_argument(parser) -> None:
    parser.add_argument("--staging", metavar="GPU,GPU", type=profile_list, default=(),
                        help="judge staging's cost in occupancy on these GPUs: where shared memory "
                             "halves the resident blocks on one of them, the tree offers the variant "
                             f"without it there (e.g. {','.join(DEFAULT_PROFILES)}; trees take longer)")


def add_register_tiles_argument(parser) -> None:
    parser.add_argument("--register-tiles", action="store_true",
                        help="offer register tiles (8) and their smaller sizes (8b) in the trees of "
                             "products (gemm-like code): more cases, longer analysis")


def strategies_of(args) -> "tuple[str, ...] | None":
    """Options.strategies for the command line: every strategy with --register-tiles, else the default."""
    return strategy_codes() if getattr(args, "register_tiles", False) else None


def progress(i: int, n: int, what: str) -> None:
    """A bar on stderr when it is a terminal; a line per step otherwise (logs stay readable)."""
    if sys.stderr.isatty():
        width = 30
        done = int(width * i / max(n, 1))
        sys.stderr.write(f"\r[{'#' * done}{'.' * (width - done)}] {i}/{n} {what:<40.40}")
        if i == n:
            sys.stderr.write("\n")
    else:
        sys.stderr.write(f"[{i}/{n}] {what}\n")
    sys.stderr.flush()
