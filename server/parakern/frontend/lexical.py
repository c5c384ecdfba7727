"""Where C text is code: past comments, string and character literals and line splices
(a backslash before a line break), with any of LSP's line breaks ("\\n", "\\r\\n", "\\r").

Used to place and recognise generated regions: text is inserted only at the start of a
line that begins in code (never inside a comment that goes on after a function's
closing brace), and a region's braces are matched without counting those in comments
or strings.
"""
from __future__ import annotations

CODE, LINE_COMMENT, BLOCK_COMMENT, STRING, CHAR = range(5)


def _step(text: str, i: int, state: int) -> tuple[int, int]:
    """(next index, state there) after the character at `i` read in `state`."""
    c = text[i]
    if c == "\\" and i + 1 < len(text) and text[i + 1] in "\r\n":
        # A splice: the line goes on, whatever the state.
        return (i + 3 if text.startswith("\r\n", i + 1) else i + 2), state
    if state == CODE:
        if text.startswith("//", i):
            return i + 2, LINE_COMMENT
        if text.startswith("/*", i):
            return i + 2, BLOCK_COMMENT
        if c == '"':
            return i + 1, STRING
        if c == "'":
            return i + 1, CHAR
        return i + 1, CODE
    if state == BLOCK_COMMENT:
        return (i + 2, CODE) if text.startswith("*/", i) else (i + 1, BLOCK_COMMENT)
    if state in (STRING, CHAR):
        if c == "\\":
            return i + 2, state
        if c == ('"' if state == STRING else "'") or c in "\r\n":
            return i + 1, CODE          # closed (or, at a line break, left unterminated)
        return i + 1, state
    # LINE_COMMENT: ends at the line break (which is code again)
    return (i, CODE) if c in "\r\n" else (i + 1, LINE_COMMENT)


def next_code_line(text: str, offset: int) -> "int | None":
    """The offset of the first line start after `offset` (read as code) at which code
    resumes: not inside a comment, a literal or a spliced line. len(text) when the text
    ends in code without a final line break; None when it ends inside a comment."""
    i, state, n = offset, CODE, len(text)
    while i < n:
        c = text[i]
        if c in "\r\n" and state in (CODE, LINE_COMMENT):
            return i + (2 if text.startswith("\r\n", i) else 1)
        i, state = _step(text, i, state)
    return n if state in (CODE, LINE_COMMENT) else None


def matching_brace(text: str, open_at: int) -> "int | None":
    """The offset of the `}` that closes the `{` at `open_at`, or None."""
    depth, i, state, n = 0, open_at, CODE, len(text)
    while i < n:
        if state == CODE:
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return i
        i, state = _step(text, i, state)
    return None


def file_scope_code(text: str) -> str:
    """The code of the text outside functions: declarations, enumerations, `#define`s with
    their continuation lines, whatever their column, with comments left out and each line
    stripped (blank ones dropped). A function is a `{` whose last code character before it
    is `)`, with the declarator before it (back to the last `;`, `}` or directive line); the
    braces of an enum, a struct or an initialiser are file scope."""
    out: list[str] = []
    i, state, n = 0, CODE, len(text)
    depth = 0            # inside a function body: its brace depth
    last = ""            # the last code character (not a blank, not in a comment)
    since = 0            # where in `out` the current declaration began
    line_start = 0       # where in `out` the current line began
    while i < n:
        c = text[i]
        j, after = _step(text, i, state)
        if state == CODE and after in (LINE_COMMENT, BLOCK_COMMENT):
            out.append(" ")                      # a comment separates what it sits between
        elif state in (CODE, STRING, CHAR):
            if state == CODE and depth:
                depth += (c == "{") - (c == "}")
                if not depth:
                    since = line_start = len(out)
            elif state == CODE and c == "{" and last == ")" and \
                    not "".join(out[line_start:]).lstrip().startswith("#"):   # not a macro's braces
                depth = 1
                del out[since:]                  # a function's declarator and body: not file scope
                out.append("\n")
                since = line_start = len(out)
            elif not depth:
                out.append(text[i:j])
                if state == CODE and c in ";}":
                    since = len(out)
                elif state == CODE and c in "\r\n":
                    if "".join(out[line_start:]).lstrip().startswith("#"):
                        since = len(out)         # a directive ends with its line
                    line_start = len(out)
            if state == CODE and not c.isspace():
                last = c
        i, state = j, after
    return "\n".join(line.strip() for line in "".join(out).splitlines() if line.strip())
