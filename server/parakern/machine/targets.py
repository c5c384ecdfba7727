"""The GPU architectures registers can be counted for, and the default one: one home for the
CLI's --target choices, the editor's `target` setting, and every stage's default."""
from __future__ import annotations

import functools
import re
import shutil
import subprocess

# Maxwell and Pascal too (CUDA 12's ptxas builds for them): an atomicAdd on double needs sm_60
TARGETS = ("sm_52", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90")
DEFAULT_TARGET = "sm_80"


def add_target_argument(parser) -> None:
    """The --target option of optimize, emit and verify."""
    parser.add_argument("--target", default=DEFAULT_TARGET, choices=TARGETS,
                        help=f"GPU architecture registers are counted for (default {DEFAULT_TARGET})")


@functools.lru_cache(maxsize=4)
def _ptxas_targets(ptxas: str) -> "frozenset[str] | None":
    """The sm_XY names `ptxas --help` allows for --gpu-name (None: it could not be asked)."""
    try:
        text = subprocess.run([ptxas, "--help"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    start = text.find("--gpu-name")
    allowed = text.find("Allowed values", start)
    if start < 0 or allowed < 0:
        return None
    end = text.find("\n\n", allowed)   # the option's paragraph
    names = frozenset(re.findall(r"'(sm_\d+)'", text[allowed:end if end >= 0 else None]))
    return names or None


def unsupported(target: str) -> str:
    """Why the installed ptxas cannot count registers for `target` ('' where it can, or where
    there is no ptxas to ask: the counter then says so itself)."""
    ptxas = shutil.which("ptxas")
    allowed = _ptxas_targets(ptxas) if ptxas else None
    if allowed is None or target in allowed:
        return ""
    usable = [t for t in TARGETS if t in allowed]
    return (f"the installed ptxas ({ptxas}) cannot build for {target}; choose one it can: "
            f"{', '.join(usable) or 'none of ' + ', '.join(TARGETS)}")
