"""Schedule summaries kept on disk between editor sessions, so that reopening a file in a
fresh server shows its cases without analysing again (as clangd keeps its index).

A summary is stored under its cache key (summary.cache_key: the function's text, the
file-scope declarations, the settings) in a folder named after this parakern's code, the z3
version and the ptxas binary: any change to them starts an empty folder, so a stored
summary is always what this code would compute. JSON, never pickle: the files are read
back as data only. Only complete summaries are kept (a tree, or a schedule with errors),
never a timeout or a crash. PARAKERN_CACHE_DIR chooses the folder ("off" turns it off;
default $XDG_CACHE_HOME/parakern or ~/.cache/parakern). Any failure to read or write is
a cache miss, never an error.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from parakern.lsp.summary import CaseInfo, DiagInfo, ProfileInfo, ScheduleSummary, TuneInfo

ENV = "PARAKERN_CACHE_DIR"
KEPT = ("ok", "no-tree")
_TYPES = {cls.__name__: cls for cls in (ScheduleSummary, CaseInfo, DiagInfo, ProfileInfo, TuneInfo)}


def root() -> "Path | None":
    chosen = os.environ.get(ENV, "")
    if chosen.strip().lower() == "off":
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "parakern"


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """What a summary depends on besides its input: parakern's sources, z3, ptxas."""
    from importlib.metadata import PackageNotFoundError, version
    try:     # the installed z3's version, without importing it (the server reads summaries too)
        z3_version = version("z3-solver")
    except PackageNotFoundError:
        z3_version = "?"
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parents[1]
    for path in sorted(package.rglob("*")):
        if path.suffix in (".py", ".h") and path.is_file():
            digest.update(str(path.relative_to(package)).encode())
            digest.update(path.read_bytes())
    digest.update(z3_version.encode())
    ptxas = shutil.which("ptxas")
    if ptxas:
        info = os.stat(ptxas)
        digest.update(f"{os.path.realpath(ptxas)}:{info.st_size}:{info.st_mtime_ns}".encode())
    return digest.hexdigest()[:24]


def _folder() -> "Path | None":
    base = root()
    return None if base is None else base / "summaries" / code_version()


def _encode(value):
    if dataclasses.is_dataclass(value):
        out = {"__type": type(value).__name__}
        out.update({f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)})
        return out
    if isinstance(value, (tuple, list)):
        return [_encode(v) for v in value]
    return value


def _decode(value):
    if isinstance(value, list):
        return tuple(_decode(v) for v in value)
    if isinstance(value, dict):
        cls = _TYPES[value.pop("__type")]
        return cls(**{k: _decode(v) for k, v in value.items()})
    return value


def load(key: str) -> "ScheduleSummary | None":
    folder = _folder()
    if folder is None or not key.isalnum():
        return None
    try:
        summary = _decode(json.loads((folder / f"{key}.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return summary if isinstance(summary, ScheduleSummary) and summary.key == key else None


def store(summary: ScheduleSummary) -> None:
    folder = _folder()
    if folder is None or summary.status not in KEPT or not summary.key.isalnum():
        return
    try:
        text = json.dumps(_encode(summary), ensure_ascii=False)
        data = text.encode("utf-8")          # a lone surrogate fails here: not kept
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError):
        return
    # written whole, then renamed: another worker never reads half a file
    fd, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, folder / f"{summary.key}.json")
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
