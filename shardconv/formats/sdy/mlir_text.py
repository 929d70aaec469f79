"""MLIR lexical values (string literals, integers, symbol names) decoded exactly as MLIR's lexer does,
so names with escapes or non-UTF-8 bytes round-trip byte for byte."""

from __future__ import annotations

import re

from shardconv.core.errors import ShardingSyntaxError
from shardconv.core.limits import INT64_MAX
from shardconv.text.escapes import EscapeError, unescape_mlir

_COMMENT = re.compile(r"//[^\n]*")
_LIST_ITEM = re.compile(r"(-)?\s*(0x[0-9a-fA-F]+|[0-9]+)")


def decode_string(token: str, pos: int = 0) -> str:
    """The value of a quoted MLIR string literal (``"a\\22b"`` -> ``a"b``); bytes that are not UTF-8
    are kept as surrogate escapes so the printer can write them back unchanged."""
    body = token[1:-1]
    if "\\" not in body:
        return body
    raw = body.encode("utf-8", "surrogateescape")
    try:
        return unescape_mlir(raw).decode("utf-8", "surrogateescape")
    except EscapeError as e:  # the codec counts bytes; find the same backslash among the characters
        col = -1
        for _ in range(raw.count(b"\\", 0, e.offset) + 1):
            col = body.index("\\", col + 1)
        raise ShardingSyntaxError("unknown escape in string literal", pos=pos + 1 + col) from None


def decode_symbol(token: str, pos: int = 0) -> str:
    """``@name`` or ``@"quoted name"`` -> the symbol name; MLIR accepts ``@""`` but cannot print it back."""
    name = decode_string(token[1:], pos + 1) if token.startswith('@"') else token[1:]
    if not name:
        raise ShardingSyntaxError("empty symbol name (@\"\") is not a valid mesh reference", pos=pos)
    return name


def parse_int(text: str, negative: bool = False, pos: int = 0) -> int:
    """An MLIR integer literal (decimal or ``0x`` hex, leading zeros allowed) that must fit in int64."""
    if len(text.lstrip("0x")) > 20:
        raise ShardingSyntaxError("integer value too large", pos=pos)
    value = int(text, 16) if text.startswith("0x") else int(text, 10)
    if value > INT64_MAX + (1 if negative else 0):
        raise ShardingSyntaxError("integer value too large", pos=pos)
    return -value if negative else value


def parse_int_list(text: str, pos: int = 0) -> tuple[int, ...]:
    """A comma-separated MLIR integer list lexed as one token (``1, 0x2, -3``, ``//`` comments allowed)."""
    blanked = _COMMENT.sub(lambda m: " " * len(m.group()), text)
    return tuple(parse_int(m.group(2), bool(m.group(1)), pos + m.start(2)) for m in _LIST_ITEM.finditer(blanked))


_STRING_LITERAL = re.compile(r'"(?:[^"\\\n\x0b\x0c]|\\[^\n])*"')  # MLIR's lexer: no raw newline in a string


def check_dialect_body(text: str, start: int) -> int:
    """MLIR's pre-scan of a pretty dialect attribute body (``#sdy.x<...>`` from the ``<`` at ``start``):
    brackets must balance, skipping string literals but *not* comments, as MLIR does. Returns where
    MLIR ends the body (a '>' inside a ``//`` comment can end it early)."""
    if start >= len(text):
        return start
    from shardconv.text.brackets import group_end  # loaded with the first sdy attribute, not at start-up

    end = group_end(text, start, comments=False, strings=_STRING_LITERAL)
    if isinstance(end, int):
        return end
    if end.found == '"':
        raise ShardingSyntaxError("expected '\"' in string literal", pos=end.pos)
    raise ShardingSyntaxError(f"unbalanced '{end.innermost}' character in pretty dialect name", pos=end.pos)
