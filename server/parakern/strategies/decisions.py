"""The decision codes and their words, derived from the strategy classes (`KINDS`): the trail
of a variant, the codes a user may enable, the editor's words and the CUDA comment's words."""
from __future__ import annotations

from parakern.kernel import Kernel
from parakern.strategies import KINDS


def trail(kernel: Kernel) -> tuple[str, ...]:
    """The paper's decision codes of a variant: what was applied, and what was not."""
    return tuple(code for kind in KINDS for code in kind.trail(kernel))


def strategy_codes() -> tuple[str, ...]:
    """The codes that enable a strategy (settings, `Options.strategies`), in the order of their numbers."""
    return tuple(sorted({kind.code for kind in KINDS}))


def editor_words() -> dict[str, str]:
    """Every decision code, applied or kept, with the editor's words for it."""
    words = {}
    for kind in KINDS:
        words[kind.code] = kind.applied_words
        if kind.keep_code:
            words[kind.keep_code] = kind.kept_words
    return words


def plain_codes() -> frozenset[str]:
    """The codes that mean "nothing was done" (the kernel as written)."""
    return frozenset(kind.keep_code for kind in KINDS if kind.keep_code and kind.keep_is_plain)


def comment_words(kernel: Kernel, cap: "int | None") -> str:
    """What the CUDA kernel's comment says of the decisions on `kernel`, compiled under
    the ptxas register cap `cap`."""
    return ", ".join(words for kind in KINDS if (words := kind.comment_words(kernel, cap)))
