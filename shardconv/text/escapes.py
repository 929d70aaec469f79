"""The two string-literal codecs every format here uses, written once: MLIR's (``\\22``, ``\\XX``, as
llvm::printEscapedString prints) and C's (absl::CEscape, as HLO text uses). Bytes in, bytes out;
``*_str`` helpers carry non-UTF-8 bytes through ``str`` as surrogate escapes."""

from __future__ import annotations

from typing import Literal

QuoteStyle = Literal["hex", "backslash"]

_HEX = b"0123456789abcdefABCDEF"
_MLIR_SIMPLE = {ord("\\"): b"\\", ord('"'): b'"', ord("n"): b"\n", ord("t"): b"\t"}
_C_SIMPLE = {
    ord("n"): b"\n", ord("t"): b"\t", ord("r"): b"\r", ord("\\"): b"\\", ord("'"): b"'", ord('"'): b'"',
    ord("?"): b"?", ord("a"): b"\a", ord("b"): b"\b", ord("f"): b"\f", ord("v"): b"\v",
}
_PRINTABLE = bytes(range(0x20, 0x7F))


class EscapeError(ValueError):
    """A malformed escape; ``offset`` is where its backslash sits in the raw bytes, ``escape`` the
    character after it (None for a lone trailing backslash)."""

    def __init__(self, message: str, offset: int, escape: str | None = None) -> None:
        super().__init__(message)
        self.offset = offset
        self.escape = escape


def _table(special: dict[int, bytes], other: str) -> tuple[bytes, ...]:
    return tuple(special.get(b, bytes([b]) if 0x20 <= b < 0x7F else (other % b).encode()) for b in range(256))


_MLIR_HEX = _table({0x22: b"\\22", 0x5C: b"\\\\"}, "\\%02X")
_MLIR_BACKSLASH = _table({0x22: b'\\"', 0x5C: b"\\\\"}, "\\%02X")
_C = _table({0x22: b'\\"', 0x5C: b"\\\\", 0x27: b"\\'", 0x0A: b"\\n", 0x09: b"\\t", 0x0D: b"\\r"}, "\\%03o")


def _escape(data: bytes, table: tuple[bytes, ...], special: bytes) -> bytes:
    if not data.translate(None, _PRINTABLE) and not any(c in data for c in special):
        return data  # nothing to escape: stay in C
    return b"".join([table[b] for b in data])


def escape_mlir(data: bytes, *, quote_style: QuoteStyle = "hex") -> bytes:
    """Bytes -> MLIR string body: ``"`` as ``\\22`` (as MLIR and Shardy print it) or, with
    ``quote_style="backslash"``, ``\\"`` (as some dumps spell it); other non-printables ``\\XX``."""
    return _escape(data, _MLIR_BACKSLASH if quote_style == "backslash" else _MLIR_HEX, b'"\\')


def escape_c(data: bytes) -> bytes:
    """Bytes -> absl::CEscape body: C escapes for quotes, backslash, \\n \\t \\r; else 3-digit octal."""
    return _escape(data, _C, b"\"\\'")


def escape_mlir_str(text: str, *, quote_style: QuoteStyle = "hex") -> str:
    """``escape_mlir`` of the UTF-8 (surrogate-escaped) bytes of ``text``; the result is ASCII."""
    return escape_mlir(text.encode("utf-8", "surrogateescape"), quote_style=quote_style).decode("ascii")


def escape_c_str(text: str) -> str:
    """``escape_c`` of the UTF-8 (surrogate-escaped) bytes of ``text``; the result is ASCII."""
    return escape_c(text.encode("utf-8", "surrogateescape")).decode("ascii")


def _backslash(raw: bytes, i: int, lone_ok: bool) -> tuple[int, int] | None:
    """Next backslash at or after ``i`` and the byte after it; None when there is none left."""
    j = raw.find(b"\\", i)
    if j < 0 or (j + 1 >= len(raw) and lone_ok):
        return None
    if j + 1 >= len(raw):
        raise EscapeError("string ends with a lone backslash", j)
    return j, raw[j + 1]


def unescape_mlir(raw: bytes) -> bytes:
    """MLIR string body -> bytes (``\\22``, ``\\"``, ``\\\\``, ``\\n``, ``\\t``, ``\\XX``)."""
    if b"\\" not in raw:
        return raw
    out = bytearray()
    i = 0
    while (found := _backslash(raw, i, False)) is not None:
        j, c = found
        out += raw[i:j]
        if j + 2 < len(raw) and c in _HEX and raw[j + 2] in _HEX:
            out.append(int(raw[j + 1 : j + 3], 16))
            i = j + 3
        elif c in _MLIR_SIMPLE:
            out += _MLIR_SIMPLE[c]
            i = j + 2
        else:
            raise EscapeError(f"invalid escape \\{chr(c)} in an MLIR string", j, chr(c))
    return bytes(out + raw[i:])


def unescape_c(raw: bytes, *, max_hex_digits: int | None = None, keep_lone_backslash: bool = False) -> bytes:
    """C-escaped body -> bytes: simple escapes, up to 3 octal digits, ``\\xH...`` (absl reads every hex
    digit; XLA's HLO lexer at most ``max_hex_digits=2``, and keeps a lone trailing backslash)."""
    if b"\\" not in raw:
        return raw
    out = bytearray()
    i, n = 0, len(raw)
    while (found := _backslash(raw, i, keep_lone_backslash)) is not None:
        j, c = found
        out += raw[i:j]
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
            k, stop = j + 2, n if max_hex_digits is None else min(n, j + 2 + max_hex_digits)
            while k < stop and raw[k] in _HEX:
                k += 1
            if k == j + 2:
                raise EscapeError("\\x with no hex digits", j, "x")
            out.append(int(raw[j + 2 : k], 16) & 0xFF)
            i = k
        else:
            raise EscapeError(f"invalid escape \\{chr(c)} in a C string", j, chr(c))
    return bytes(out + raw[i:])


__all__ = [
    "EscapeError",
    "QuoteStyle",
    "escape_c",
    "escape_c_str",
    "escape_mlir",
    "escape_mlir_str",
    "unescape_c",
    "unescape_mlir",
]
