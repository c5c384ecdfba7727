"""`parakern serve [--stdio | --tcp HOST:PORT] [--log-file PATH] [-v]`: the language server
(lsp/start.py starts it; this module only puts it on the command line)."""
from __future__ import annotations

from parakern.lsp import start


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="run the language server (stdio, or --tcp HOST:PORT)")
    start.add_arguments(p)


def run(args) -> int:
    return start.run(args)


def main(argv=None) -> int:
    return start.main(argv)
