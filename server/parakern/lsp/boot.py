"""How an analysis process starts: its initializer and its warm-up.

Only the standard library at import: the server spawns its workers from here before it
imports its own heavy modules (lsprotocol, sympy), so they warm up meanwhile; the
analysis modules are imported in the worker itself.
"""
from __future__ import annotations

import os

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
    from parakern.process.lifeline import exit_with_parent
    exit_with_parent(parent)
    try:
        os.nice(5)
    except (AttributeError, OSError):
        pass
    try:
        import sys
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    except OSError:
        pass
    import parakern.pipeline  # noqa: F401  (sympy, z3, llvmlite: the slow imports)


def warm_up() -> int:
    """Runs one tiny analysis and its summary (llvmlite, z3, the modules a job imports and
    the caches warm up) and returns the pid."""
    try:
        from parakern.machine.devices import DEFAULT_PROFILES
        from parakern.frontend import analyze_source
        from parakern.lsp.worker import summarize
        from parakern.pipeline import optimize_schedule
        for schedule in analyze_source(_WARM_SOURCE, "<warm-up>").schedules:
            summarize(optimize_schedule(schedule), "warm-up", 0, DEFAULT_PROFILES, tune=False)
        from parakern.lsp.diskcache import code_version
        code_version()      # the summary folder's name hashes parakern's sources: once, now
    except Exception:
        pass
    return os.getpid()
