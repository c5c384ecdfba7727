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

The folder is bounded: PARAKERN_CACHE_MB megabytes (default 100) for the summaries of every
version together; past it the least recently used go (a summary read is a use: its file's
time is set then), the folders of earlier versions first since nothing reads them, down to
three quarters of the bound. Each process counts the folder once, then adds what it writes,
and counts again past the bound or every RECOUNT_EVERY summaries (the others write too).
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import shutil
import tempfile
import time
from pathlib import Path

from parakern.lsp.cachedir import root
from parakern.lsp.summary import CaseInfo, DiagInfo, ProfileInfo, RunInfo, ScheduleSummary, TuneInfo

SIZE_ENV = "PARAKERN_CACHE_MB"
DEFAULT_MB = 100.0
RECOUNT_EVERY = 64
STALE_TEMPORARY_S = 3600.0    # a half-written file this old was left by a process killed meanwhile
KEPT = ("ok", "no-tree")
_TYPES = {cls.__name__: cls for cls in (ScheduleSummary, CaseInfo, DiagInfo, ProfileInfo, RunInfo, TuneInfo)}


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


def size_limit() -> int:
    """Bytes the summaries may take on disk (PARAKERN_CACHE_MB; not a number: the default)."""
    try:
        megabytes = float(os.environ.get(SIZE_ENV, "") or DEFAULT_MB)
    except ValueError:
        megabytes = DEFAULT_MB
    if not math.isfinite(megabytes) or megabytes < 0:
        megabytes = DEFAULT_MB
    return int(megabytes * 2 ** 20)


def _summaries() -> "Path | None":
    base = root()
    return None if base is None else base / "summaries"


def _folder() -> "Path | None":
    summaries = _summaries()
    return None if summaries is None else summaries / code_version()


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
    path = folder / f"{key}.json"
    try:
        summary = _decode(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(summary, ScheduleSummary) or summary.key != key:
        return None
    try:
        os.utime(path)          # used now: the last to go
    except OSError:
        pass
    return summary


def store(summary: ScheduleSummary) -> None:
    folder = _folder()
    limit = size_limit()
    if folder is None or summary.status not in KEPT or not summary.key.isalnum() or limit == 0:
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
        return
    _make_room(folder.parent, len(data), limit)


_counted: dict = {}       # summaries folder -> (bytes counted + written since by this process, stores since)


def _make_room(summaries: Path, written: int, limit: int) -> None:
    """Keeps the summaries folder within `limit` bytes (see the module's docstring)."""
    known, stores = _counted.get(summaries, (None, 0))
    if known is not None and known + written <= limit and stores + 1 < RECOUNT_EVERY:
        _counted[summaries] = (known + written, stores + 1)
        return
    files = _files(summaries)
    total = sum(size for _, _, size, _ in files)
    if total > limit:
        target = limit * 3 // 4
        for _, _, size, path in sorted(files):          # least recently used first
            if total <= target:
                break
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except OSError:
                continue
            total -= size
        for version in summaries.iterdir():
            try:
                version.rmdir()          # an earlier version's folder, emptied
            except OSError:
                pass
    _counted[summaries] = (total, 0)


def _files(summaries: Path) -> list:
    """(this version's, last use, bytes, path) of the summaries of every version (sorted, an
    earlier version's come first); half-written files left by a process killed meanwhile are
    removed on the way."""
    found = []
    now = time.time()
    current = code_version()
    try:
        versions = [entry for entry in os.scandir(summaries) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return found
    for version in versions:
        try:
            entries = list(os.scandir(version.path))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.name.endswith(".tmp"):
                if now - info.st_mtime > STALE_TEMPORARY_S:
                    try:
                        os.unlink(entry.path)
                    except OSError:
                        pass
                continue
            if entry.name.endswith(".json"):
                found.append((version.name == current, info.st_mtime, info.st_size, Path(entry.path)))
    return found
