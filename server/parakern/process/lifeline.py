"""No orphans: helper processes end with the process that started them, whatever ended it.

A parent killed by SIGKILL (or SIGTERM without a handler) cannot stop its children, so
each child watches for itself: `exit_with_parent` polls its parent's pid from a daemon
thread (threads run while the main thread is in z3, LLVM or generated code: ctypes
releases the GIL) and exits when the parent is gone. A temporary directory cannot
remove itself, so `Janitor` starts a tiny process that waits on a pipe from the parent
and removes the directory when the pipe closes, which happens however the parent ends.

A helper that is a Python process runs isolated (`python_command`): no module of the
workspace or of the current directory is ever imported there (parakern.process.isolation).

Standard library only, no package imports: verify's runner loads this file by path.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

POLL_SECONDS = 0.5


def python_command(*arguments: str) -> list:
    """The command line of a Python child that needs only the standard library: isolated
    (`-I`, since 3.4), so that neither its script's folder nor the current directory is on its
    sys.path (`python -c` and `python -m` put the current directory first) and no PYTHON*
    variable changes that."""
    return [sys.executable, "-I", *arguments]


def exit_with_parent(parent: "int | None" = None, poll: float = POLL_SECONDS) -> None:
    """Ends this process (os._exit, no clean-up: the parent's is gone) within `poll`
    seconds of its parent's end. `parent`: the pid it must keep (default: the current one)."""
    expected = os.getppid() if parent is None else parent

    def watch() -> None:
        while os.getppid() == expected:
            time.sleep(poll)
        os._exit(0)

    threading.Thread(target=watch, name="parakern-lifeline", daemon=True).start()


_JANITOR = """
import os, shutil, sys, time
sys.stdin.buffer.read()          # returns when the parent's end of the pipe closes
for _ in range(50):              # again while a compiler the parent started still adds a file
    shutil.rmtree(sys.argv[1], ignore_errors=True)
    if not os.path.lexists(sys.argv[1]):
        break
    time.sleep(0.1)
"""


class Janitor:
    """Removes `directory` once this process has ended, or at close()."""

    def __init__(self, directory: str):
        self.directory = directory
        try:
            self.process: "subprocess.Popen | None" = subprocess.Popen(
                python_command("-c", _JANITOR, directory), stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError:      # no janitor: the directory is still removed by a normal end
            self.process = None

    def close(self) -> None:
        """The directory goes now (the caller removed it, or the janitor does)."""
        process, self.process = self.process, None
        if process is not None:
            process.stdin.close()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()


class ScratchDirectory:
    """A temporary directory (tempfile.TemporaryDirectory's interface: `name`, `cleanup()`)
    that is removed even when this process is killed (a Janitor watches it)."""

    def __init__(self, prefix: str):
        import tempfile
        self._directory = tempfile.TemporaryDirectory(prefix=prefix)
        self.name = self._directory.name
        self._janitor = Janitor(self.name)

    def cleanup(self) -> None:
        self._directory.cleanup()
        self._janitor.close()
