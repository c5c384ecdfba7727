"""How an analysis process starts: its initializer and its warm-up.

Only the standard library at import (and parakern.process.lifeline, which is no more): the
server spawns its workers from here before it imports its own heavy modules (lsprotocol,
sympy), so they warm up meanwhile; the analysis modules are imported in the worker itself.
"""
from __future__ import annotations

import os
import sys

from parakern.process.lifeline import exit_with_parent

_WARM_SOURCE = """void warm(int n, int B, float *x, float *y)
{
    int blocks = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < blocks; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n)
                    y[i] = 2.0f * x[i] + y[i];
            }
    }
}
"""


def initialize(parent: "int | None" = None) -> None:
    """Process initializer: ends with the server (`parent`) however it ends, lower priority
    (the editor's server stays responsive), stdout onto stderr (the server's stdout is the
    LSP stream), imports."""
    exit_with_parent(parent)
    try:
        os.nice(5)
    except (AttributeError, OSError):
        pass
    try:
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    except OSError:
        pass
    # deferred: the analysis modules (sympy, z3, llvmlite: seconds) load in the worker, not the server
    import parakern.pipeline  # noqa: F401


def warm_up() -> int:
    """Runs one tiny analysis and its summary in the worker (llvmlite, z3, the modules a job
    imports and the caches warm up) and returns the pid."""
    try:
        # deferred: the worker's modules load in the worker, not in the server that names this function
        from parakern.lsp import worker
        worker.warm_up(_WARM_SOURCE)
    except Exception:
        pass
    return os.getpid()
