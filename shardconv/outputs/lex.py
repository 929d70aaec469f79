"""Bracket- and string-aware scanning of MLIR text: just enough to find the spans of ops, attribute
dicts and types without an MLIR parser (so the package works without jaxlib)."""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import ShardingSyntaxError

_OPEN = {"(": ")", "[": "]", "{": "}", "<": ">"}
_CLOSE = set(_OPEN.values())


def skip_ws(text: str, i: int, end: int | None = None) -> int:
    """Index of the next character that is neither whitespace nor inside a ``//`` comment."""
    end = len(text) if end is None else end
    while i < end:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith("//", i):
            nl = text.find("\n", i)
            i = end if nl < 0 or nl > end else nl + 1
        else:
            break
    return i


def skip_string(text: str, i: int) -> int:
    """``text[i]`` is ``"``: index just past the closing quote (MLIR escapes are ``\\XX``, ``\\"``, ``\\\\``)."""
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == '"':
            return j + 1
        j += 1
    raise ShardingSyntaxError("unterminated string", text=text, pos=i)


def skip_group(text: str, i: int) -> int:
    """``text[i]`` opens a bracket: index just past its match (strings, comments and ``->`` skipped)."""
    stack = [_OPEN[text[i]]]
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == '"':
            j = skip_string(text, j)
            continue
        if c == "/" and text.startswith("//", j):
            j = skip_ws(text, j)
            continue
        if c == "-" and text.startswith("->", j):
            j += 2
            continue
        if c in _OPEN:
            stack.append(_OPEN[c])
        elif c in _CLOSE:
            if c != stack[-1]:
                raise ShardingSyntaxError(f"unbalanced {c!r}; expected {stack[-1]!r}", text=text, pos=j)
            stack.pop()
            if not stack:
                return j + 1
        j += 1
    raise ShardingSyntaxError(f"unclosed {text[i]!r}", text=text, pos=i)


def split_top(text: str, start: int, end: int, sep: str = ",") -> list[tuple[int, int]]:
    """Spans of the ``sep``-separated pieces of ``text[start:end]`` at bracket depth 0, whitespace trimmed."""
    pieces: list[tuple[int, int]] = []
    i = piece = start
    while i < end:
        c = text[i]
        if c == '"':
            i = skip_string(text, i)
        elif c in _OPEN:
            i = skip_group(text, i)
        elif c == sep:
            pieces.append(_trim(text, piece, i))
            i = piece = i + 1
        else:
            i += 1
    last = _trim(text, piece, end)
    if last[0] < last[1] or pieces:
        pieces.append(last)
    return pieces


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    start = skip_ws(text, start, end)
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def statements(text: str, start: int, end: int) -> Iterator[int]:
    """Start offsets of the lines of a region body at its own nesting depth (one op per line, as MLIR prints)."""
    i = skip_ws(text, start, end)
    at_line_start = True
    while i < end:
        if at_line_start:
            yield i
            at_line_start = False
        c = text[i]
        if c == "\n":
            at_line_start = True
            i = skip_ws(text, i, end)
            continue
        if c == "/" and text.startswith("//", i):
            i = skip_ws(text, i, end)
            at_line_start = True
            continue
        if c == '"':
            i = skip_string(text, i)
        elif c in _OPEN:
            i = skip_group(text, i)
        elif c == "-" and text.startswith("->", i):
            i += 2
        else:
            i += 1


def line_end(text: str, i: int, end: int | None = None) -> int:
    """End of the statement starting at ``i``: the first newline at depth 0 (groups may span lines)."""
    end = len(text) if end is None else end
    while i < end:
        c = text[i]
        if c == "\n":
            return i
        if c == '"':
            i = skip_string(text, i)
        elif c in _OPEN:
            i = skip_group(text, i)
        elif c == "-" and text.startswith("->", i):
            i += 2
        else:
            i += 1
    return end
