"""The one routine from a character offset to a 1-based line and column, and the caret excerpt under it:
every error and finding that points into text uses these, so they all count the same way."""

from __future__ import annotations

EXCERPT_WIDTH = 100


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of ``offset`` in ``text``; columns count characters, lines count ``\\n``."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def caret_excerpt(text: str, line: int, column: int, *, width: int = EXCERPT_WIDTH) -> str:
    """Line ``line`` of ``text`` with a ``^`` under ``column``, windowed to ``width`` characters around it
    (``...`` marks a cut); empty when the line does not exist."""
    at = _line_start(text, line)
    if at is None:
        return ""
    end = text.find("\n", at)
    src = text[at : len(text) if end < 0 else end]
    col = column - 1
    start = max(0, min(col - width // 2, len(src) - width))
    prefix = "..." if start > 0 else ""
    suffix = "..." if start + width < len(src) else ""
    shown = prefix + visible(src[start : start + width]) + suffix
    return f"  {shown}\n  {' ' * (len(prefix) + len(visible(src[start:col])))}^"


def _line_start(text: str, line: int) -> int | None:
    """Where 1-based line ``line`` of ``text`` starts (None: no such line), found by bisecting on counts of
    line breaks: the text (a module of millions of lines) is never split."""
    if not 1 <= line <= text.count("\n") + 1:
        return None
    lo, hi = 0, len(text)
    while lo < hi:  # the first offset with line - 1 line breaks before it
        mid = (lo + hi) // 2
        if text.count("\n", 0, mid) >= line - 1:
            hi = mid
        else:
            lo = mid + 1
    return lo


def visible(text: str) -> str:
    """``text`` safe to print on one terminal line: a byte that was not UTF-8 (a surrogate escape)
    as ``\\xNN``, other unprintable characters as ``\\xNN`` / ``\\uNNNN``, a tab as a space (a CR as nothing)."""
    if text.isprintable():
        return text
    return "".join(_visible_char(c) for c in text)


def _visible_char(c: str) -> str:
    o = ord(c)
    if c == "\t":
        return " "
    if c == "\r":  # the end of a CRLF line
        return ""
    if 0xDC80 <= o <= 0xDCFF:  # surrogateescape's stand-in for the byte o - 0xDC00
        return f"\\x{o - 0xDC00:02x}"
    if c.isprintable():
        return c
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


__all__ = ["caret_excerpt", "line_col", "visible"]
