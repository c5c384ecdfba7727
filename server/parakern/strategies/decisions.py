"""The decision codes and their words, derived from the strategy classes (`KINDS`): the trail
of a variant, the codes a user may enable, the editor's words and the CUDA comment's words.

Beside the strategies' codes, (7) notes that the kernel makes some updates with CUDA atomics
(analysis/updates.py): not a strategy one may turn off, since the kernel needs them wherever
iterations may update one element at once (the dependence test decides)."""
from __future__ import annotations

from parakern.kernel import Kernel
from parakern.strategies import KINDS, OPT_IN

ATOMICS = "(7)"
ATOMICS_WORDS = "atomic updates"


def trail(kernel: Kernel) -> tuple[str, ...]:
    """The paper's decision codes of a variant: what was applied, and what was not; (7) where
    it makes updates atomically."""
    codes = tuple(code for kind in KINDS for code in kind.trail(kernel))
    return codes + ((ATOMICS,) if kernel.schedule.atomics else ())


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
    words[ATOMICS] = ATOMICS_WORDS
    return words


def legend(codes) -> str:
    """What each of these decision codes means, in their order ((1) (1') (2) (3a) …), for where
    they are shown (the hover's table, the text report): `(1) registers as compiled · (4a) shared memory`."""
    words = editor_words()
    shown = sorted(set(codes) & words.keys(), key=lambda code: code.rstrip(")").replace("'", "~"))
    return " · ".join(f"{code} {words[code]}" for code in shown)


def setting_words() -> dict[str, str]:
    """Each code a user may enable (`strategy_codes`) with what it lets the tree do, and the
    code every case shows without it: the descriptions of the editor's `parakern.strategies`
    setting (vscode-extension/package.json, checked against this by the tests)."""
    out = {}
    for kind in KINDS:
        text = f"{kind.code} {kind.applied_words}"
        if kind.keep_code:
            text += f"; when off, the cases keep {kind.keep_code} {kind.kept_words}"
        out.setdefault(kind.code, text)
    return {code: out[code] for code in strategy_codes()}


def setting_markdown() -> str:
    """The `parakern.strategies` setting's description (markdownDescription in package.json)."""
    lines = [f"- `{text.split(' ', 1)[0]}` {text.split(' ', 1)[1]}" for text in setting_words().values()]
    opt_in = ", ".join(f"`{code}`" for code in OPT_IN)
    return ("Decision codes the case tree may apply, e.g. `[\"(3b)\", \"(4b)\"]`; `null`: all but "
            f"{opt_in}, which apply only where named.\n\n" + "\n".join(lines))


def plain_codes() -> frozenset[str]:
    """The codes that mean "nothing was done" (the kernel as written)."""
    return frozenset(kind.keep_code for kind in KINDS if kind.keep_code and kind.keep_is_plain)


def comment_words(kernel: Kernel, cap: "int | None") -> str:
    """What the CUDA kernel's comment says of the decisions on `kernel`, compiled under
    the ptxas register cap `cap`."""
    parts = [words for kind in KINDS if (words := kind.comment_words(kernel, cap))]
    if kernel.schedule.atomics:
        parts.append(atomic_words(kernel.schedule.atomics))
    return ", ".join(parts)


def atomic_words(atomics) -> str:
    """`atomicAdd on h, w; atomicMax on m`: what (7) does."""
    by_function: dict = {}
    for a in atomics:
        by_function.setdefault(a.function, {})[a.array] = None
    return "; ".join(f"{function} on {', '.join(arrays)}" for function, arrays in by_function.items())
