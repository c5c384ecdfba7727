"""The front doors: every command of the CLI, one module each with `add_parser` and `run`
(commands/cli.py puts them together). Nothing imports this package but `parakern.__main__`.

    optimize.py  the case trees of a file          emit.py     its CUDA
    verify.py    every case run against serial C   profile.py  memory traffic per case
    tune.py      the best program parameters       bench.py    every case timed on a GPU
    serve.py     the language server               inputs.py   the FILE argument, for all
    args.py      options and progress several commands share
"""
from __future__ import annotations

import sys


def main(argv: "list[str] | None" = None) -> int:
    """The `parakern` program."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv[:1] == ["serve"]:
            # deferred: the editor waits for the server, which needs none of the pipeline here
            from parakern.commands.serve import main as serve
            return serve(argv[1:])
        # deferred: sympy, z3 and llvmlite take seconds to import; a Ctrl-C meanwhile is no traceback
        from parakern.commands import cli
    except KeyboardInterrupt:
        return 130
    return cli.main(argv)
