"""Sniff: the kind of a dump from its content, whatever its name (``tensors.txt.0``, ``*.txt``, ``-``).
XLA's buffer-assignment, memory-usage and live-range reports quote instructions but are not IR."""

from __future__ import annotations

import re

from shardconv.scan.sites import FileKind

SNIFF_BYTES = 1 << 16

# What makes a head HLO or MLIR: any one of these. Each starts with a literal, which ``re`` scans for
# fast (one alternation, or a look-behind first, tries every branch at every byte: ten times slower).
# Those in ``*_LINE`` count only with nothing but blanks before them on their line.
_HLO_LINE = tuple(re.compile(p) for p in (rb"HloModule\s", rb"ENTRY\s", rb"ROOT\s"))
_HLO = tuple(
    re.compile(p)
    for p in (rb"=\s*[a-z][a-z0-9]*\[[\d,<=?]*\]\S*\s+[\w\-]+\(", rb"sharding=\{(?<![\w.]sharding=\{)")
)
_MLIR_LINE = tuple(re.compile(p) for p in (rb"module\b", rb"func\.func\b", rb"sdy\.mesh\b", rb"//\s*-----"))
_MLIR = tuple(
    re.compile(p)
    for p in (
        *(rb"%s\.(?<![\w.]%s\.)[a-z_]" % (d, d) for d in (b"stablehlo", b"mhlo", b"sdy", b"func", b"shard")),
        rb"tt(?<![\w.]tt)\w*\.[a-z_]",
        rb"tensor<",
    )
)


def _found(head: bytes, line_starts: tuple[re.Pattern[bytes], ...], anywhere: tuple[re.Pattern[bytes], ...]) -> bool:
    return any(rx.search(head) for rx in anywhere) or any(_at_line_start(rx, head) for rx in line_starts)


def _at_line_start(rx: re.Pattern[bytes], head: bytes) -> bool:
    """``rx`` matches with only blanks before it on its line (what ``^\\s*`` means in multi-line mode)."""
    for m in rx.finditer(head):
        start = head.rfind(b"\n", 0, m.start()) + 1
        if start == m.start() or head[start : m.start()].isspace():
            return True
    return False


# The first line of each report XLA writes beside a module's HLO in a --xla_dump_to folder.
# XLA's --xla_dump_hlo_as_dot: a graph whose labels quote instructions, HTML-escaped.
_GRAPHVIZ = re.compile(rb"\A\s*digraph\b")
_XLA_REPORT = re.compile(rb"\A\s*(?:BufferAssignment:|Total bytes used:|HloLiveRange\b|Memory Space:)")


def sniff(head: bytes) -> FileKind:
    """Kind of a dump from its first bytes: "hlo", "mlir", "mixed", or "skip" with a reason."""
    nul = head.find(b"\x00")
    if nul >= 0 and not (_found(head[:nul], _HLO_LINE, _HLO) or _found(head[:nul], _MLIR_LINE, _MLIR)):
        return FileKind("skip", "binary file (contains NUL bytes)")
    if _XLA_REPORT.match(head):
        return FileKind("skip", "an XLA buffer-assignment / memory report, not IR")
    if _GRAPHVIZ.match(head):
        return FileKind("skip", "a Graphviz graph (--xla_dump_hlo_as_dot), not IR")
    hlo = _found(head, _HLO_LINE, _HLO)
    mlir = _found(head, _MLIR_LINE, _MLIR)
    if hlo and mlir:
        return FileKind("mixed")
    if hlo or mlir:
        return FileKind("hlo" if hlo else "mlir")
    if not head.strip():
        return FileKind("skip", "empty file")
    return FileKind("skip", "no HLO or MLIR found in the first 64 KiB")


__all__ = ["SNIFF_BYTES", "sniff"]
