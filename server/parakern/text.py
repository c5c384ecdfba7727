"""Line breaks: every stage reads source text with `\\n` line ends."""
from __future__ import annotations


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR as LF (the front-end's columns and spans count on it)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")
