"""No module from the workspace: where parakern's processes import from.

An editor starts the server in the workspace folder, and Python puts the current
directory first on sys.path for `python -m` and for `python -c`, which is how
multiprocessing starts its spawn workers and its resource tracker: a `multiprocessing/`
or a `shutil.py` in the workspace would run as soon as a C file is opened. Three rules
hold for every start path, on every Python parakern supports, without relying on `-P`
(which a user's own `python -m` call may not pass):

- an entry point (`python -m parakern`, the `parakern` script, `python -m parakern.lsp`)
  drops the current directory from sys.path before it imports anything else
  (`scrub_sys_path`); spawned workers take that sys.path over;
- a child that needs only the standard library runs isolated (`lifeline.python_command`:
  `-I`, neither its script's folder nor the current directory on its sys.path);
- the server works in a private empty directory (lsp/start.py), so that the `python -c`
  children multiprocessing starts find nothing in theirs.

Imports only what every interpreter has loaded before it runs any code (os, sys; not even
`__future__`): `python -m parakern` imports this with the current directory still first.
"""
import os
import sys

# the folder parakern is imported from (site-packages, or a source checkout's `server`)
OWN_ROOT = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def scrub_sys_path() -> None:
    """Removes from sys.path what names the current directory: '' and relative entries (read
    against it) and the directory itself (`python -m` puts it first, an empty PYTHONPATH
    entry too), unless parakern itself is imported from there."""
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:          # the current directory was removed: only '' and relative entries name it
        here = None
    sys.path[:] = [entry for entry in sys.path
                   if isinstance(entry, str) and os.path.isabs(entry)
                   and (os.path.realpath(entry) != here or os.path.realpath(entry) == OWN_ROOT)]
