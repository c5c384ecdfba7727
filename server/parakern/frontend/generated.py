"""Regions a user inserted with "Insert comprehensive dispatcher": generated CUDA
between `// parakern:begin ID` and `// parakern:end ID` lines. The front-end blanks
them (same length, newlines kept) so a file keeps analysing after the insertion,
from the editor and from the command line alike, with every position unchanged.
"""
from __future__ import annotations

import re

BEGIN_MARK = "// parakern:begin"
END_MARK = "// parakern:end"


def mask_generated(text: str) -> str:
    """The text with every `// parakern:begin ID` … `// parakern:end ID` region blanked
    (same length, newlines kept), so the inserted CUDA never reaches the C front-end and
    every position stays where it was."""
    if BEGIN_MARK not in text:
        return text
    out = []
    pos = 0
    for begin, end in generated_regions(text):
        out.append(text[pos:begin])
        out.append(re.sub(r"[^\n]", " ", text[begin:end]))
        pos = end
    out.append(text[pos:])
    return "".join(out)


_BEGIN_RE = re.compile(r"^[ \t]*// parakern:begin[ \t]+(\S+)[ \t]*\r?$", re.M)


def generated_regions(text: str, wanted: "str | None" = None) -> list[tuple[int, int]]:
    """(start, end) offsets of the marked regions: from the start of the begin line to
    the end of the end line (its newline included when there is one)."""
    regions = []
    for m in _BEGIN_RE.finditer(text):
        ident = m.group(1)
        if wanted is not None and ident != wanted:
            continue
        end_re = re.compile(r"^[ \t]*// parakern:end[ \t]+" + re.escape(ident) + r"[ \t]*\r?$", re.M)
        e = end_re.search(text, m.end())
        if e is None:
            continue
        stop = e.end() + 1 if e.end() < len(text) and text[e.end()] == "\n" else e.end()
        if regions and m.start() < regions[-1][1]:
            continue
        regions.append((m.start(), stop))
    return regions


