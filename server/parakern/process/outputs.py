"""Files and folders a command writes: never one of its inputs, checked before the work (a
bench on a GPU, minutes, is not lost to a path that cannot be written), and a file never
left half-written (written beside, then renamed over)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from parakern.process import interrupts


SOURCES = (".c", ".h", ".cu", ".cuh", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".inc")


def file_problem(path: str, option: str, inputs=(), results: bool = False) -> str:
    """Why `path` cannot be written as the output of `option` ('' where it can). results: the
    output is a report (JSON, CSV, a picture), which never replaces an existing source file
    (`--csv metafork.h` replaced the header the program includes)."""
    target = Path(path)
    for source in inputs:
        if _same(target, Path(source)):
            return (f"{option} {path} is the input file {source}: writing it would replace your source; "
                    "give another name")
    if results and target.is_file() and target.suffix.lower() in SOURCES:
        return f"{option} {path} is a source file: writing it would replace it; give another name"
    if target.is_dir():
        return f"{option} {path} is a folder: give a file name"
    if not target.parent.is_dir():
        return f"{option} {path}: the folder {target.parent} does not exist"
    return ""


def clash(outputs: dict) -> str:
    """Two options that would write the same file ('' where none do): {option: path}."""
    named = [(option, path) for option, path in outputs.items() if path]
    for k, (option, path) in enumerate(named):
        for other, second in named[k + 1:]:
            if _same(Path(path), Path(second)):
                return f"{option} and {other} name the same file {path}: give each its own"
    return ""


def folder_problem(path: str, option: str) -> str:
    """Why `path` cannot be a folder to write into ('' where it can be made or is one)."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        return f"{option} {path} is a file: give a folder"
    return ""


def write_text(path: str, text: str) -> None:
    """`text` into `path`, whole or not at all: written to a file beside it, then renamed.
    Nothing after an interrupt (the run may have gone on without what it interrupted)."""
    interrupts.reraise()
    target = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _same(a: Path, b: Path) -> bool:
    """The same file, through a link or another spelling of its path too."""
    try:
        return os.path.samefile(a, b)
    except OSError:   # one does not exist yet
        return a.resolve() == b.resolve()


BUILD_MARK = ".parakern-build"   # in a folder parakern made its own: it may write there again


def build_folder(path: str, option: str) -> "tuple[Path | None, str]":
    """(the folder, absolute, made and marked as parakern's; why not). A folder that holds
    files of its own is refused: parakern writes source.c, metafork.h... there, and replaced
    the user's (`--build-dir .` in a project)."""
    target = Path(path).resolve()
    problem = folder_problem(path, option)
    if problem:
        return None, problem
    if target.is_dir() and any(target.iterdir()) and not (target / BUILD_MARK).exists():
        return None, (f"{option} {path} holds files of its own, which the build would replace: give an empty "
                      "or a new folder")
    try:
        target.mkdir(parents=True, exist_ok=True)
        (target / BUILD_MARK).write_text("made by parakern: its build files, written again at each run\n")
    except OSError as exc:
        return None, f"cannot create {option} {path}: {exc.strerror or exc}"
    return target, ""
