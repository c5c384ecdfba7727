"""The GPU architectures registers can be counted for, and the default one: one home for the
CLI's --target choices, the editor's `target` setting, and every stage's default."""
from __future__ import annotations

TARGETS = ("sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90")
DEFAULT_TARGET = "sm_80"


def add_target_argument(parser) -> None:
    """The --target option of optimize, emit and verify."""
    parser.add_argument("--target", default=DEFAULT_TARGET, choices=TARGETS,
                        help=f"GPU architecture registers are counted for (default {DEFAULT_TARGET})")
