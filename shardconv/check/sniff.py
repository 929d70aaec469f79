"""Decides from content (not only the extension) whether a file is an HLO or MLIR dump."""

from __future__ import annotations

import re

from shardconv.check.occurrences import FileKind

SNIFF_BYTES = 1 << 16

_HLO = re.compile(rb"^\s*(?:HloModule\s|ENTRY\s|ROOT\s)|=\s*[a-z][a-z0-9]*\[[\d,<=?]*\]\S*\s+[\w\-]+\(|(?<![\w.])sharding=\{", re.M)
_MLIR = re.compile(
    rb"^\s*(?:module\b|func\.func\b|sdy\.mesh\b|//\s*-----)|(?<![\w.])(?:stablehlo|mhlo|sdy|func|tt\w*)\.[a-z_]+|tensor<",
    re.M,
)


def sniff(head: bytes, path: str) -> FileKind:
    """Kind of a dump from its first bytes: "hlo", "mlir", "mixed", or "skip" with a reason."""
    if b"\x00" in head:
        return FileKind("skip", "binary file (contains NUL bytes)")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 4:  # a multi-byte char cut at the end of the window is fine
            return FileKind("skip", "not UTF-8 text")
    hlo = _HLO.search(head) is not None
    mlir = _MLIR.search(head) is not None
    if hlo and mlir:
        return FileKind("mixed")
    if hlo or mlir:
        return FileKind("hlo" if hlo else "mlir")
    if not head.strip():
        return FileKind("skip", "empty file")
    return FileKind("skip", "no HLO or MLIR found in the first 64 KiB")


__all__ = ["SNIFF_BYTES", "sniff"]
