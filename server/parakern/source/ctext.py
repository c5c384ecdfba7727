"""User text (a source path, mostly) inside generated C: in a comment or a string literal
it must stay there. A path may hold `*/`, quotes, line breaks, any character: pasted
verbatim, the rest of it would become code."""
from __future__ import annotations

_LINE_SEPARATORS = {"\u0085", "\u2028", "\u2029"}     # line breaks to editors, if not to C


def in_comment(text: str) -> str:
    """`text` as it can sit inside a /* */ comment: `*/` and `/*` are split by a backslash,
    control characters, line separators and lone surrogates (a path's undecodable bytes)
    are written as escapes."""
    out = []
    n = len(text)
    for i, ch in enumerate(text):
        code = ord(ch)
        if ch == "/":
            before = "\\" if i > 0 and text[i - 1] == "*" else ""
            after = "\\" if i + 1 < n and text[i + 1] == "*" else ""
            out.append(before + "/" + after)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif ch in _LINE_SEPARATORS or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def in_string(text: str) -> str:
    """`text` as the body of a C string literal ("…"): quotes and backslashes escaped,
    control characters as octal escapes, a path's undecodable bytes (lone surrogates of
    Python's surrogateescape) as the bytes they stand for."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in "\\\"":
            out.append("\\" + ch)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\{code:03o}")
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\{code - 0xDC00:03o}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("?")
        else:
            out.append(ch)
    return "".join(out)
