"""Sniff: the kind of a dump from its content, whatever its name (``tensors.txt.0``, ``*.txt``, ``-``).
XLA's buffer-assignment, memory-usage and live-range reports quote instructions but are not IR."""

from __future__ import annotations

import re

from shardconv.check.sites import FileKind

SNIFF_BYTES = 1 << 16

_HLO = re.compile(
    rb"^\s*(?:HloModule\s|ENTRY\s|ROOT\s)|=\s*[a-z][a-z0-9]*\[[\d,<=?]*\]\S*\s+[\w\-]+\(|(?<![\w.])sharding=\{",
    re.MULTILINE,
)
_MLIR = re.compile(
    rb"^\s*(?:module\b|func\.func\b|sdy\.mesh\b|//\s*-----)|(?<![\w.])(?:stablehlo|mhlo|sdy|func|tt\w*)\.[a-z_]+|tensor<",
    re.MULTILINE,
)
# The first line of each report XLA writes beside a module's HLO in a --xla_dump_to folder.
_XLA_REPORT = re.compile(rb"\A\s*(?:BufferAssignment:|Total bytes used:|HloLiveRange\b|Memory Space:)")


def sniff(head: bytes) -> FileKind:
    """Kind of a dump from its first bytes: "hlo", "mlir", "mixed", or "skip" with a reason."""
    if b"\x00" in head:
        return FileKind("skip", "binary file (contains NUL bytes)")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 4:  # a multi-byte char cut at the end of the window is fine
            return FileKind("skip", "not UTF-8 text")
    if _XLA_REPORT.match(head):
        return FileKind("skip", "an XLA buffer-assignment / memory report, not IR")
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
