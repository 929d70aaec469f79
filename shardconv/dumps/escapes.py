"""String escapes of the two dump formats, so a sharding can be read out of a string literal and
written back in exactly the style it came in.

MLIR prints ``"`` as ``\\22`` (or ``\\"``) and other bytes as ``\\XX``; HLO text uses C escapes. Older
dumps escape twice (an HLO frontend attribute inside an MLIR string, or a quoted string in a string).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEX = b"0123456789abcdefABCDEF"
_MLIR_SIMPLE = {ord("\\"): b"\\", ord('"'): b'"', ord("n"): b"\n", ord("t"): b"\t"}
_C_SIMPLE = {
    ord("n"): b"\n", ord("t"): b"\t", ord("r"): b"\r", ord("\\"): b"\\", ord("'"): b"'", ord('"'): b'"',
    ord("?"): b"?", ord("a"): b"\a", ord("b"): b"\b", ord("f"): b"\f", ord("v"): b"\v",
}


class EscapeError(ValueError):
    """A string literal with a malformed escape; ``offset`` is where it starts in the raw bytes."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


def unescape_mlir(raw: bytes) -> bytes:
    """Body of an MLIR string literal -> its bytes (``\\22``, ``\\"``, ``\\\\``, ``\\n``, ``\\t``, ``\\XX``)."""
    if b"\\" not in raw:
        return raw
    out = bytearray()
    i, n = 0, len(raw)
    while i < n:
        j = raw.find(b"\\", i)
        if j < 0:
            out += raw[i:]
            break
        out += raw[i:j]
        if j + 1 >= n:
            raise EscapeError("string ends with a lone backslash", j)
        c = raw[j + 1]
        if j + 2 < n and c in _HEX and raw[j + 2] in _HEX:
            out.append(int(raw[j + 1 : j + 3], 16))
            i = j + 3
        elif c in _MLIR_SIMPLE:
            out += _MLIR_SIMPLE[c]
            i = j + 2
        else:
            raise EscapeError(f"invalid escape \\{chr(c)} in an MLIR string", j)
    return bytes(out)


def unescape_c(raw: bytes) -> bytes:
    """Body of a C-escaped (absl CEscape) string -> its bytes: simple escapes, octal, ``\\xHH``."""
    if b"\\" not in raw:
        return raw
    out = bytearray()
    i, n = 0, len(raw)
    while i < n:
        j = raw.find(b"\\", i)
        if j < 0:
            out += raw[i:]
            break
        out += raw[i:j]
        if j + 1 >= n:
            raise EscapeError("string ends with a lone backslash", j)
        c = raw[j + 1]
        if c in _C_SIMPLE:
            out += _C_SIMPLE[c]
            i = j + 2
        elif 0x30 <= c <= 0x37:
            k = j + 1
            while k < n and k < j + 4 and 0x30 <= raw[k] <= 0x37:
                k += 1
            out.append(int(raw[j + 1 : k], 8) & 0xFF)
            i = k
        elif c == ord("x"):
            k = j + 2
            while k < n and raw[k] in _HEX:
                k += 1
            if k == j + 2:
                raise EscapeError("\\x with no hex digits", j)
            out.append(int(raw[j + 2 : k], 16) & 0xFF)
            i = k
        else:
            raise EscapeError(f"invalid escape \\{chr(c)} in a C string", j)
    return bytes(out)


def escape_mlir(data: bytes, *, quote_style: str = "hex") -> bytes:
    """Bytes -> MLIR string body as MLIR prints it (``quote_style="backslash"`` writes ``\\"``)."""
    out = bytearray()
    for b in data:
        if b == 0x22:
            out += b'\\"' if quote_style == "backslash" else b"\\22"
        elif b == 0x5C:
            out += b"\\\\"
        elif 0x20 <= b < 0x7F:
            out.append(b)
        else:
            out += b"\\%02X" % b
    return bytes(out)


def escape_c(data: bytes) -> bytes:
    """Bytes -> C-escaped body as absl::CEscape writes it (what HLO text uses)."""
    out = bytearray()
    for b in data:
        if b == 0x22:
            out += b'\\"'
        elif b == 0x5C:
            out += b"\\\\"
        elif b == 0x27:
            out += b"\\'"
        elif b == 0x0A:
            out += b"\\n"
        elif b == 0x09:
            out += b"\\t"
        elif b == 0x0D:
            out += b"\\r"
        elif 0x20 <= b < 0x7F:
            out.append(b)
        else:
            out += b"\\%03o" % b
    return bytes(out)


_LEGACY = re.compile(rb'\\(?:22|5C|5c|"|\\)')


@dataclass(frozen=True)
class Encoding:
    """How a value sits in the source: ``outer`` string syntax ("none" | "mlir" | "c"), the quote
    style MLIR used, and a second level of escaping found in legacy dumps."""

    outer: str = "none"
    quote_style: str = "hex"
    inner: str = "none"  # "none" | "mlir" | "c"
    inner_quoted: bool = False  # the once-decoded value was itself a quoted literal

    @property
    def depth(self) -> int:
        return (self.outer != "none") + (self.inner != "none" or self.inner_quoted)


def _unescape(kind: str, raw: bytes) -> bytes:
    return unescape_mlir(raw) if kind == "mlir" else unescape_c(raw) if kind == "c" else raw


def _escape(kind: str, data: bytes, quote_style: str) -> bytes:
    if kind == "mlir":
        return escape_mlir(data, quote_style=quote_style)
    return escape_c(data) if kind == "c" else data


def decode(raw: bytes, outer: str) -> tuple[bytes, Encoding]:
    """Decode a string body, undoing a second (legacy) level when the result is still escaped."""
    style = "backslash" if b'\\"' in raw and b"\\22" not in raw else "hex"
    once = _unescape(outer, raw)
    if outer == "none" or b"\\" not in once and not (len(once) >= 2 and once[:1] == once[-1:] == b'"'):
        return once, Encoding(outer, style)
    quoted = len(once) >= 2 and once[:1] == once[-1:] == b'"'
    body = once[1:-1] if quoted else once
    inner = "none"
    if _LEGACY.search(body):
        inner = "mlir" if re.search(rb"\\(?:22|5C|5c)", body) else "c"
        body = _unescape(inner, body)
    return body, Encoding(outer, style, inner, quoted)


def encode(data: bytes, enc: Encoding) -> bytes:
    """Inverse of ``decode``: the raw bytes to put back between the quotes."""
    body = _escape(enc.inner, data, "hex" if enc.inner == "mlir" else enc.quote_style)
    if enc.inner_quoted:
        body = b'"' + body + b'"'
    return _escape(enc.outer, body, enc.quote_style)


__all__ = ["Encoding", "EscapeError", "decode", "encode", "escape_c", "escape_mlir", "unescape_c", "unescape_mlir"]
