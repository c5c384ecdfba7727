"""How the language server starts: its options, a private working directory, the analysis
processes first, then pygls (no pygls import until the workers are spawned). `parakern serve`
(commands/serve.py) and `python -m parakern.lsp` both come here."""
from __future__ import annotations

import atexit
import os

from parakern.process.isolation import scrub_sys_path
from parakern.process.lifeline import ScratchDirectory
from parakern.lsp import cachedir


def add_arguments(parser) -> None:
    parser.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP port instead (for debugging)")
    parser.add_argument("--log-file", metavar="PATH", help="write the server's log to this file")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at debug level")


def _problem(args) -> str:
    """Why the options cannot be used ('' where they can), before any worker starts: a log
    file that cannot be opened, a --tcp port out of range (a traceback, or a silent hang)."""
    import socket
    if args.log_file:
        try:
            with open(args.log_file, "a", encoding="utf-8"):
                pass
        except OSError as exc:
            return f"cannot write --log-file {args.log_file}: {exc.strerror or exc}"
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit() or not 1 <= int(port) <= 65535:
            return f"--tcp wants HOST:PORT with a port from 1 to 65535, got {args.tcp!r}"
        try:
            socket.getaddrinfo(host or "127.0.0.1", int(port))
        except OSError as exc:
            return f"--tcp {args.tcp}: {exc.strerror or exc}"
    return ""


def run(args) -> int:
    import sys
    problem = _problem(args)
    if problem:
        print(f"parakern serve: {problem}", file=sys.stderr)
        return 2
    if args.log_file:     # named from the editor's directory, which the server leaves now
        args.log_file = os.path.abspath(args.log_file)
    cachedir.pin_root()
    _enter_private_directory()
    # The analysis processes start first, so that they import and warm up while this one
    # imports pygls, lsprotocol and the front-end (about a second each on two cores).
    from parakern.lsp.jobs import JobPool   # deferred: the workers start before pygls loads
    pool = JobPool()
    pool.prestart()
    from parakern.lsp.server import run as run_server   # deferred: pygls, lsprotocol: after the workers
    return run_server(args, pool)


def _enter_private_directory() -> None:
    """The server's current directory from now on: a new empty one, so that its children
    started as `python -c` (multiprocessing's workers and resource tracker, whose sys.path
    begins with the current directory) find no module there, and sys.path without the
    editor's directory (parakern.process.isolation). Removed at the interpreter's exit, after
    multiprocessing has ended its children (atexit runs the later registrations first), or by
    its janitor when the server is killed: a worker started while the server ends still has it."""
    scrub_sys_path()
    directory = ScratchDirectory("parakern-serve-")
    os.chdir(directory.name)
    atexit.register(directory.cleanup)


def main(argv=None) -> int:
    """`python -m parakern.lsp [options]`."""
    import argparse
    parser = argparse.ArgumentParser(prog="parakern serve", description="the parakern language server")
    add_arguments(parser)
    return run(parser.parse_args(argv))
