"""Where the summaries kept between editor sessions live (diskcache.py keeps them):
PARAKERN_CACHE_DIR ("off" turns the cache off), else $XDG_CACHE_HOME/parakern or
~/.cache/parakern. The standard library only: the server reads this before it starts its
workers, which inherit the folder.
"""
from __future__ import annotations

import os
from pathlib import Path

ENV = "PARAKERN_CACHE_DIR"


def pin_root(environ=os.environ) -> None:
    """A relative PARAKERN_CACHE_DIR or XDG_CACHE_HOME made absolute, from the current directory:
    the server moves to a private directory of its own before it starts (lsp/start.py), where
    a relative folder would be a new, empty cache every session."""
    for name in (ENV, "XDG_CACHE_HOME"):
        value = environ.get(name, "")
        if value and value.strip().lower() != "off" and not os.path.isabs(value):
            environ[name] = os.path.abspath(value)


def root() -> "Path | None":
    chosen = os.environ.get(ENV, "")
    if chosen.strip().lower() == "off":
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "parakern"
