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
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return ""
    src = lines[line - 1]
    col = column - 1
    start = max(0, min(col - width // 2, len(src) - width))
    prefix = "..." if start > 0 else ""
    suffix = "..." if start + width < len(src) else ""
    shown = prefix + src[start : start + width] + suffix
    return f"  {shown}\n  {' ' * (len(prefix) + col - start)}^"


__all__ = ["caret_excerpt", "line_col"]
