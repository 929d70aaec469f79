"""Plain keys: what makes two lines of a module hold the same values (the same type and sharding, the
same op tail), found with a few C-level calls, so a repeated line is counted or re-pointed instead of
extracted again. Each key comes with where its value starts on the line."""

from __future__ import annotations

import re

from support.reference_scan.keywords import NEEDLES

# ``%r = ...``, ``%a, %b = ...``, ``%r:2 = ...``: an MLIR op's result names.
MLIR_RESULT = re.compile(rb"^\s*(%[\w#.$\-]+)(?::\d+)?(?:\s*,\s*%[\w#.$\-]+(?::\d+)?)*\s*=")
# ``%r = sdy.sharding_constraint %x <@mesh, [...]> : tensor<...>`` (or sdy.reshard), with nothing else.
_PLAIN_OP = re.compile(
    rb"\s*%[\w#.$\-]+ = sdy\.(?:sharding_constraint|reshard) %[\w#.$\-]+ "
    rb'(<@[\w$.\-]+, \[(?:[^\]"]|"[^"]*")*\](?:, \w+=\{[^}]*\})*>) : (tensor<[^>]*>)(?: loc\([^()]*\))?\s*$'
)


PlainKey = tuple[bytes, int]  # (type and value as one bytes key, where the value starts on the line)


def plain_op_key(text: bytes) -> PlainKey | None:
    """(sharding, type) of a line that is one ``sdy.sharding_constraint`` / ``sdy.reshard`` and nothing
    else, as one bytes key (one regex match), and where the sharding starts; None for any other line."""
    if b"sdy.sharding_constraint" not in text and b"sdy.reshard" not in text:
        return None
    m = _PLAIN_OP.match(text)
    return None if m is None else (b"%s\0%s" % m.group(1, 2), m.start(1))


def plain_hlo_key(text: bytes) -> PlainKey | None:
    """(type, sharding) of an HLO instruction line whose one keyword is a ``sharding={...}``, as one bytes
    key, and where the sharding starts; None when it is not such a line. Plain ``bytes`` operations only
    (C speed)."""
    i = text.find(b", sharding={") + 2
    if i < 2:
        return None
    j = text.find(b"}", i + 10)
    if j >= 0 and text.find(b"{", i + 10, j) >= 0:
        while j >= 0 and text.count(b"{", i + 9, j) != text.count(b"}", i + 9, j + 1):
            j = text.find(b"}", j + 1)  # nested (a tuple sharding, metadata inside it): the balancing brace
    if j < 0 or text.find(b'"', i + 9, j) >= 0:
        return None
    eq = text.find(b" = ", 0, i)
    if eq < 0:
        return None
    start = eq + 3
    stop = text.find(b") ", start) + 1 if text.startswith(b"(", start) else text.find(b" ", start)
    if stop <= start:
        return None
    return b"%s\0%s" % (text[start:stop], text[i + 9 : j + 1]), i + 9


# The bytes a keyword's word is made of: an _RX match starts inside the word of its keyword or later.
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.#$-")
_ANY_NEEDLE = re.compile(b"|".join(map(re.escape, NEEDLES)))
_MLIR_OP = re.compile(rb'\s*"?[A-Za-z_]\w*\.')  # ``stablehlo.add``, ``"sdy.manual_computation"``: no HLO type
_OP_VALUE = re.compile(rb"sdy\.(?:sharding_constraint|reshard)\s+%[\w#.$\-]+\s+(?=<)")


def op_tail_key(text: bytes) -> PlainKey | None:
    """The tail of an MLIR op line ``%r = op ...`` from the word of its first keyword to its end (for
    ``sdy.reshard %x <...``: the op, then from the ``<``), and where it starts: every value of the line
    sits in the tail and none depends on what comes before it but the result name. None for a line that
    is not such an op, or whose tail another line's context could change (a signature, a location
    before the keyword, a line of several, HLO text)."""
    r = MLIR_RESULT.match(text)
    if r is None or _MLIR_OP.match(text, r.end()) is None or b"\n" in text or b"func.func" in text:
        return None  # an HLO instruction (``%a = f32[8]{0} ...``) takes its shapes from before the keyword
    first = _ANY_NEEDLE.search(text)
    if first is None or first.start() < r.end():  # no keyword, or one in the result names
        return None
    start = first.start()
    while start > r.end() and text[start - 1] in _WORD:
        start -= 1
    if b"loc(" in text[:start]:
        return None
    op = _OP_VALUE.match(text, start)
    if op is not None:  # the operand's name is in the match, not in the value
        return b"%s\0%s" % (text[start : text.index(b" ", start)], text[op.end() :]), op.end()
    return text[start:], start


__all__ = ["MLIR_RESULT", "PlainKey", "op_tail_key", "plain_hlo_key", "plain_op_key"]
