"""Which module of a file ``outputs`` reads: a pass log (MLIR's IR printing, XLA's modules one after
another, ``// -----`` splits) holds many, and the last is the one after every pass. The module starts
are the scan's (``scan/``), so this reads no IR structure of its own."""

from __future__ import annotations

from dataclasses import KW_ONLY

from shardconv.core.records import record

_DUMP_LINE = b"// -----"  # an MLIR pass log's ``// -----// IR Dump ...`` line, or a split marker


@record
class Dump:
    """The module read from a file: its text (after as many line breaks as lines come before it in the
    file, so that every line and column read off it is the file's), which it is and of how many."""

    _: KW_ONLY
    text: str
    number: int  # 1-based
    count: int
    line: int  # the file's line it starts on
    header: str | None  # its pass log line (``// -----// IR Dump After ...``), if it has one

    @property
    def skipped(self) -> int:
        return self.count - 1


def last_dump(data: bytes) -> Dump:
    """The last module of ``data`` (the whole of it when the scan finds one module, or none)."""
    starts = dump_starts(data)
    if len(starts) < 2:
        return Dump(text=data.decode("utf-8", "surrogateescape"), number=1, count=1, line=1, header=None)
    start, line = starts[-1]
    nl = data.find(b"\n", start)
    head = data[start : len(data) if nl < 0 else nl]
    header = head.decode("utf-8", "surrogateescape").strip() if head.startswith(_DUMP_LINE) else None
    body = data[start:].decode("utf-8", "surrogateescape")
    return Dump(text="\n" * (line - 1) + body, number=len(starts), count=len(starts), line=line, header=header)


def dump_starts(data: bytes) -> list[tuple[int, int]]:
    """Where each module of ``data`` starts (byte offset, line): the scan's module headers, a pass log's
    dump line and the module line right after it counted once."""
    from shardconv.scan.columns import site_column, sites_of, values_of_kind
    from shardconv.scan.native import scan_bytes
    from shardconv.scan.sites import SiteKind

    scan = scan_bytes(data)
    sites = sites_of(scan, values_of_kind(scan, {SiteKind.MODULE_START}))
    starts, lines = site_column(scan, "start"), site_column(scan, "line")
    out: list[tuple[int, int]] = []
    for i in sites:
        start, line = starts[i], lines[i]
        if out and out[-1][1] == line - 1 and data.startswith(_DUMP_LINE, out[-1][0]):
            continue  # the module printed under its dump line
        out.append((start, line))
    return out
