"""Bracket- and string-aware scanning of MLIR text, shared by ``outputs`` (spans of ops, attribute dicts
and types without an MLIR parser) and ``dumps`` (value ends on a log line, read as latin-1 so offsets
are byte offsets). Searches are regex-driven so long lines cost C time."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from shardconv.core.errors import ShardingSyntaxError
from shardconv.core.records import record

_OPEN = {"(": ")", "[": "]", "{": "}", "<": ">"}
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


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


def string_end(text: str, i: int, end: int | None = None) -> int:
    """``text[i]`` is ``"``: index just past the closing quote (``\\`` escapes the next character), or -1."""
    m = _STRING.match(text, i, len(text) if end is None else end)
    return -1 if m is None else m.end()


def skip_string(text: str, i: int, end: int | None = None) -> int:
    """``string_end`` that raises on an unterminated string."""
    j = string_end(text, i, end)
    if j < 0:
        raise ShardingSyntaxError("unterminated string", text=text, pos=i)
    return j


@cache
def _stops(own_kind: str, comments: bool) -> re.Pattern[str]:
    """What ``skip_group`` must look at: quotes, ``->``, maybe ``//``, and the brackets it tracks."""
    brackets = own_kind + _OPEN[own_kind] if own_kind else "".join(_OPEN) + "".join(_OPEN.values())
    alts = ['"', "->", *(["//"] if comments else []), *(["<="] if own_kind == "<" else []), f"[{re.escape(brackets)}]"]
    return re.compile("|".join(alts))


@record
class Unbalanced:
    """Why a bracket group does not close: at ``pos`` the scan met ``found`` (a wrong closer, ``"`` for
    an unterminated string, ``""`` for the end of the text) while ``innermost`` was the open bracket."""

    pos: int
    found: str
    innermost: str


def group_end(
    text: str,
    i: int,
    end: int | None = None,
    *,
    own_kind_only: bool = False,
    comments: bool = True,
    strings: re.Pattern[str] = _STRING,
) -> int | Unbalanced:
    """``text[i]`` opens a bracket: index just past its match, or why there is none. String literals
    (as ``strings`` matches them), ``->`` and, if ``comments``, ``//`` comments are skipped;
    ``own_kind_only`` counts only that bracket kind, as a log line needs (other brackets may be
    unbalanced there, and HLO's ``<=`` is no bracket). Callers word the failure in their own terms."""
    end = len(text) if end is None else end
    stops = _stops(text[i] if own_kind_only else "", comments)
    stack = [text[i]]  # the open brackets, innermost last
    j = i + 1
    while (m := stops.search(text, j, end)) is not None:
        tok, j = m.group(), m.end()
        if tok == '"':
            literal = strings.match(text, m.start(), end)
            if literal is None:
                return Unbalanced(m.start(), '"', stack[-1])
            j = literal.end()
        elif tok == "//":
            j = text.find("\n", j, end) + 1
            if not j:
                break
        elif tok in _OPEN:
            stack.append(tok)
        elif len(tok) == 1:
            if tok != _OPEN[stack[-1]]:
                return Unbalanced(m.start(), tok, stack[-1])
            stack.pop()
            if not stack:
                return j
    return Unbalanced(end, "", stack[-1])


def skip_group(text: str, i: int, end: int | None = None, *, own_kind_only: bool = False, comments: bool = True) -> int:
    """``group_end`` that raises a positioned ShardingSyntaxError when the group does not close."""
    j = group_end(text, i, end, own_kind_only=own_kind_only, comments=comments)
    if isinstance(j, int):
        return j
    if j.found == '"':
        raise ShardingSyntaxError("unterminated string", text=text, pos=j.pos)
    if not j.found:
        raise ShardingSyntaxError(f"unclosed {text[i]!r}", text=text, pos=i)
    raise ShardingSyntaxError(f"unbalanced {j.found!r}; expected {_OPEN[j.innermost]!r}", text=text, pos=j.pos)


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


def _past_token(text: str, i: int) -> int:
    """Index past the depth-0 token at ``i``: a whole string or group, ``->``, or one character."""
    c = text[i]
    if c == '"':
        return skip_string(text, i)
    if c in _OPEN:
        return skip_group(text, i)
    return i + 2 if text.startswith("->", i) else i + 1


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
        i = _past_token(text, i)


def line_end(text: str, i: int, end: int | None = None) -> int:
    """End of the statement starting at ``i``: the first newline at depth 0 (groups may span lines)."""
    end = len(text) if end is None else end
    while i < end:
        c = text[i]
        if c == "\n":
            return i
        i = _past_token(text, i)
    return end
