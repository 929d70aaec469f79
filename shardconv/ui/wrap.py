"""Line breaking that never cuts a value: a sharding, device list or message breaks only after a
separator (a space, else a comma; never inside a ``"..."`` string); a piece with none runs long."""

from __future__ import annotations

from collections.abc import Iterator


def pieces(text: str, separators: str) -> Iterator[str]:
    """``text`` cut after each of ``separators`` outside double quotes; joined, the pieces are ``text``."""
    start, quoted = 0, False
    for i, ch in enumerate(text):
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and ch in separators:
            yield text[start : i + 1]
            start = i + 1
    if start < len(text):
        yield text[start:]


def wrap_value(text: str, width: int | None, *, indent: int = 0, first: int = 0) -> list[str]:
    """``text`` in lines of at most ``width`` columns, broken at spaces, and at commas inside a word
    too long for a line (``None``: one line, as for a pipe). The first line starts ``first`` columns in
    (after a label the caller prints), the others are indented by ``indent`` spaces. Trailing spaces
    are dropped; a line exceeds ``width`` only when a piece with no separator does."""
    if width is None:
        return [text]
    lines: list[str] = []
    line, room = "", width - first

    def add(piece: str) -> None:
        nonlocal line, room
        if line.strip() and len(line) + len(piece.rstrip(" ")) > room:
            lines.append(line.rstrip(" "))
            line, room = " " * indent, width
        line += piece if line.strip() or not lines else piece.lstrip(" ")

    for word in pieces(text, " "):
        if len(word.rstrip(" ")) > width - indent:
            for part in pieces(word, ","):
                add(part)
        else:
            add(word)
    lines.append(line.rstrip(" "))
    return lines


def wrapped(text: str, width: int | None, *, indent: int = 0, first: int = 0) -> str:
    """``wrap_value``'s lines joined with newlines, ready to print with wrapping off."""
    return "\n".join(wrap_value(text, width, indent=indent, first=first))
