"""Front-end runs of the documents: each in a thread of its own, interrupted when superseded.

The front end is pure Python and takes seconds on a large file (6 s on 200 schedules of
one function). A run for a version the editor has already replaced is worth nothing, so
it is interrupted: `Run.cancel` raises `Interrupted` in its thread, which Python delivers
at the thread's next bytecode (PyThreadState_SetAsyncExc, CPython's API for it). The
front end catches `Exception` only and takes no lock, so the interruption unwinds it
whole. Each run has a daemon thread of its own: one document's runs never wait for
another's, and the end of the server never waits for a run (a thread pool's threads are
joined at exit).

Where the interpreter has no such API, a cancelled run goes on to its end and its result
is dropped; the caller sees the same either way: `Run.future` gives None.
"""
from __future__ import annotations

import asyncio
import ctypes
import threading

_LOCK = threading.Lock()         # a run's state changes and its interruption are atomic
_WAITING, _RUNNING, _CANCELLED, _DONE = range(4)


class Interrupted(BaseException):
    """Raised inside a cancelled run's thread (BaseException: `except Exception` lets it through)."""


def _async_exc_api():
    try:
        function = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except (AttributeError, ValueError):     # not CPython
        return None
    function.argtypes = (ctypes.c_ulong, ctypes.py_object)
    function.restype = ctypes.c_int
    return function


_SET_ASYNC_EXC = _async_exc_api()


def _interrupt(ident: int) -> None:
    """Interrupted in thread `ident` at its next bytecode."""
    if _SET_ASYNC_EXC is not None:
        _SET_ASYNC_EXC(ident, Interrupted)


def _forget_interrupt(ident: int) -> None:
    """The interruption of thread `ident`, if not delivered yet, never will be (NULL clears it)."""
    if _SET_ASYNC_EXC is not None:
        _SET_ASYNC_EXC(ident, ctypes.py_object())


def interruptible() -> bool:
    return _SET_ASYNC_EXC is not None


class Run:
    """fn(*args) in a daemon thread, started now (call from the event loop). `future` gives
    its value, None once cancelled, or the exception it raised. `key` says what it computes."""

    def __init__(self, key, fn, *args):
        self.key = key
        self.future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._loop = self.future.get_loop()
        self._call = (fn, args)
        self._state = _WAITING
        self._ident = 0
        self.cancelled = False           # stopped before its end: its future gave None
        threading.Thread(target=self._main, name="parakern-frontend", daemon=True).start()

    def cancel(self) -> None:
        """Stops the run (at its next bytecode); its future gives None. From the event loop."""
        with _LOCK:
            if self._state == _DONE:
                return
            if self._state == _RUNNING:
                _interrupt(self._ident)
            self._state, self.cancelled = _CANCELLED, True
        if not self.future.done():
            self.future.set_result(None)

    def _main(self) -> None:
        cancelled, value, error = True, None, None
        try:
            try:
                with _LOCK:
                    if self._state == _CANCELLED:
                        return
                    self._ident, self._state = threading.get_ident(), _RUNNING
                fn, args = self._call
                value = fn(*args)
            finally:
                self._call = None
                with _LOCK:
                    cancelled = self._state == _CANCELLED
                    self._state = _DONE
                    if cancelled:
                        _forget_interrupt(threading.get_ident())
        except Interrupted:
            return
        except BaseException as exc:      # the caller's to report (the front end makes its own bugs diagnostics)
            error = exc
        if not cancelled:
            try:
                self._loop.call_soon_threadsafe(self._settle, value, error)
            except RuntimeError:          # the event loop is closed: nobody waits
                pass

    def _settle(self, value, error) -> None:
        if self.future.done():
            return
        if error is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(value)
