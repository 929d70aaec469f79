"""Just enough lexing to cut values out of a line: balanced delimiters, string literals, tensor types.
Regex-driven so the work stays in C; no sharding grammar here (that is ``shardconv.parsing``)."""

from __future__ import annotations

import re
from functools import lru_cache

from .occurrences import Shape

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_PAIRS = {ord("{"): ord("}"), ord("<"): ord(">"), ord("["): ord("]"), ord("("): ord(")")}


@lru_cache(maxsize=None)
def _stops(open_c: int) -> re.Pattern[bytes]:
    close_c = _PAIRS[open_c]
    return re.compile(b"[" + re.escape(bytes([open_c, close_c])) + b'"]')


def match_close(buf: bytes, open_pos: int, limit: int | None = None) -> int:
    """Index just past the delimiter closing ``buf[open_pos]`` (quotes skipped), or -1 if unclosed."""
    open_c = buf[open_pos]
    close_c = _PAIRS[open_c]
    stops = _stops(open_c)
    end = len(buf) if limit is None else limit
    depth = 0
    pos = open_pos
    while True:
        m = stops.search(buf, pos, end)
        if m is None:
            return -1
        c = buf[m.start()]
        if c == 0x22:
            s = _STRING.match(buf, m.start(), end)
            if s is None:
                return -1
            pos = s.end()
            continue
        if c == open_c and not (open_c == 0x3C and buf[m.start() + 1 : m.start() + 2] == b"="):
            depth += 1
        elif c == close_c and not (close_c == 0x3E and buf[m.start() - 1 : m.start()] == b"-"):
            depth -= 1
            if depth == 0:
                return m.end()
        pos = m.end()


def string_end(buf: bytes, quote_pos: int, limit: int | None = None) -> int:
    """Index just past the string literal starting at ``buf[quote_pos]`` (a ``"``), or -1."""
    m = _STRING.match(buf, quote_pos, len(buf) if limit is None else limit)
    return -1 if m is None else m.end()


def split_top_level(text: str, sep: str = ",") -> list[tuple[int, str]]:
    """Split at ``sep`` outside brackets and quotes; each piece with its offset (whitespace-stripped)."""
    out: list[tuple[int, str]] = []
    depth, start, i, n = 0, 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "{[<(":
            depth += 1
        elif c in "}]>)":
            depth -= 1
        elif c == sep and depth == 0:
            out.append(_stripped(text, start, i))
            start = i + 1
        i += 1
    if text[start:].strip():
        out.append(_stripped(text, start, n))
    return out


def _stripped(text: str, a: int, b: int) -> tuple[int, str]:
    piece = text[a:b]
    lead = len(piece) - len(piece.lstrip())
    return a + lead, piece.strip()


# ---- tensor types ---------------------------------------------------------------------------------

_MLIR_TENSOR = re.compile(rb"tensor<((?:(?:\d+|\?)x)*)")
_HLO_SHAPE = re.compile(rb"\b[a-z][a-z0-9]*\[([^\]]*)\]")


def mlir_shapes(text: bytes) -> tuple[Shape, ...]:
    """Shapes of the ``tensor<...>`` types in ``text``, in order."""
    return tuple(_mlir_dims(m.group(1)) for m in _MLIR_TENSOR.finditer(text))


def _mlir_dims(dims: bytes) -> Shape:
    return tuple(None if d == b"?" else _dim(d) for d in dims.split(b"x")[:-1])


def _dim(d: bytes) -> int | None:
    """A dim size, or None (unknown) when it has more digits than any int64."""
    return int(d) if len(d) <= 19 else None


def hlo_shapes(text: bytes) -> tuple[Shape, ...]:
    """Shapes of the leaf array types in an HLO type (tuples flattened, as tuple shardings are)."""
    return tuple(_hlo_dims(m.group(1)) for m in _HLO_SHAPE.finditer(text))


def _hlo_dims(dims: bytes) -> Shape:
    if not dims.strip():
        return ()
    out: list[int | None] = []
    for d in dims.split(b","):
        d = d.strip()
        out.append(_dim(d) if d.isdigit() else None)
    return tuple(out)


__all__ = ["hlo_shapes", "match_close", "mlir_shapes", "split_top_level", "string_end"]
