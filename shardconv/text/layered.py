"""Layered string values in dumps: MLIR prints ``"`` as ``\\22`` (or ``\\"``); HLO text uses C escapes;
older dumps escape twice (an HLO frontend attribute inside an MLIR string, or a quoted string in a string).
``decode_layered`` reads a value out of such a literal and ``encode_layered`` writes one back in exactly
the style it came in. Only ``check`` needs this, so the everyday parsers never load it."""

from __future__ import annotations

import re

from shardconv.core.records import record
from shardconv.text.escapes import escape_c, escape_mlir, unescape_c, unescape_mlir

_LEGACY = re.compile(rb'\\(?:22|5C|5c|"|\\)')


@record
class StringEncoding:
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


def _escape_as(kind: str, data: bytes, quote_style: str) -> bytes:
    if kind == "mlir":
        return escape_mlir(data, quote_style="backslash" if quote_style == "backslash" else "hex")
    return escape_c(data) if kind == "c" else data


def decode_layered(raw: bytes, outer: str) -> tuple[bytes, StringEncoding]:
    """Decode a string body, undoing a second (legacy) level when the result is still escaped."""
    style = "backslash" if b'\\"' in raw and b"\\22" not in raw else "hex"
    once = _unescape(outer, raw)
    if outer == "none" or (b"\\" not in once and not (len(once) >= 2 and once[:1] == once[-1:] == b'"')):
        return once, StringEncoding(outer, style)
    quoted = len(once) >= 2 and once[:1] == once[-1:] == b'"'
    body = once[1:-1] if quoted else once
    inner = "none"
    if _LEGACY.search(body):
        inner = "mlir" if re.search(rb"\\(?:22|5C|5c)", body) else "c"
        body = _unescape(inner, body)
    return body, StringEncoding(outer, style, inner, quoted)


def encode_layered(data: bytes, enc: StringEncoding) -> bytes:
    """Inverse of ``decode_layered``: the raw bytes to put back between the quotes."""
    body = _escape_as(enc.inner, data, "hex" if enc.inner == "mlir" else enc.quote_style)
    if enc.inner_quoted:
        body = b'"' + body + b'"'
    return _escape_as(enc.outer, body, enc.quote_style)


__all__ = ["StringEncoding", "decode_layered", "encode_layered"]
