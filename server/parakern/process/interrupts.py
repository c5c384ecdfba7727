"""Ctrl-C or a termination signal, remembered.

A library may turn the KeyboardInterrupt into an error of its own (ctypes' ArgumentError,
llvmlite's, a ptxas killed by the same signal: PtxasError). Where parakern makes an error an
internal-error diagnostic (PK099), `reraise` turns it back into the interrupt, so that an
interrupted command exits 130 and writes nothing, instead of a PK099 and a result that
looks complete.
"""
from __future__ import annotations

import signal
import sys

_received = False


def handler(signum, frame) -> None:
    global _received
    _received = True
    raise KeyboardInterrupt      # unwinds: temporary directories removed, child processes killed


def install() -> None:
    """SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt here, and are remembered. z3 takes
    SIGINT for itself while it solves (it stops that check, which then answers 'unknown', and
    the command went on as if nothing had happened): it is told not to."""
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is not None:
            signal.signal(signum, handler)
    import z3
    z3.set_param("ctrl_c", False)
    default = sys.unraisablehook

    def quiet(unraisable) -> None:   # raised in a finalizer (z3's __del__): printed, with a
        if not issubclass(unraisable.exc_type, KeyboardInterrupt):   # traceback, then ignored;
            default(unraisable)                                      # `received` still says so
    sys.unraisablehook = quiet


def received() -> bool:
    """Whether a signal arrived (a KeyboardInterrupt raised in a finalizer is only printed)."""
    return _received


def reraise() -> None:
    """KeyboardInterrupt if a signal arrived: call it before calling an error internal."""
    if _received:
        raise KeyboardInterrupt
