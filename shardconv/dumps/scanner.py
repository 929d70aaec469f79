"""Streams a dump and yields every sharding occurrence. Memory stays bounded: the file is read in
chunks, only lines holding a keyword are looked at (found with ``bytes.find``, in C), and a line
longer than ``max_line`` is scanned in overlapping windows instead of being held whole."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from .linescan import LineScanner
from .occurrences import FileKind, Occurrence
from .sniff import SNIFF_BYTES, sniff

KEYWORDS: tuple[bytes, ...] = (b"sharding", b"sdy", b"num_partitions", b"expected-error", b"unspecified_dims")
REGION_CLOSE = b"} : "
CHUNK = 1 << 20
MAX_LINE = 4 << 20
OVERLAP = 1 << 20  # longest single value guaranteed intact inside an over-long line


@dataclass(frozen=True)
class ScanOptions:
    chunk: int = CHUNK
    max_line: int = MAX_LINE
    overlap: int = OVERLAP


def open_input(path: str) -> BinaryIO:
    """``-`` is stdin; anything else is opened for binary reading."""
    if path == "-":
        return sys.stdin.buffer
    return open(path, "rb")  # noqa: SIM115 - the caller owns it


def scan_stream(stream: BinaryIO, path: str, opts: ScanOptions = ScanOptions()) -> tuple[FileKind, Iterator[Occurrence]]:
    """Sniff the stream, then lazily yield its occurrences (none when the file is skipped)."""
    head = _read_at_least(stream, SNIFF_BYTES)
    kind = sniff(head, path)
    if kind.skipped:
        return kind, iter(())
    return kind, _occurrences(stream, path, head, opts)


def scan_path(path: str, opts: ScanOptions = ScanOptions()) -> tuple[FileKind, list[Occurrence]]:
    """Convenience for tests and small files: every occurrence of ``path`` as a list."""
    with open_input(path) as f:
        kind, occ = scan_stream(f, path, opts)
        return kind, list(occ)


def _read_at_least(stream: BinaryIO, n: int) -> bytes:
    parts: list[bytes] = []
    got = 0
    while got < n:
        b = stream.read(n - got)
        if not b:
            break
        parts.append(b)
        got += len(b)
    return b"".join(parts)


def _occurrences(stream: BinaryIO, path: str, head: bytes, opts: ScanOptions) -> Iterator[Occurrence]:
    lines = LineScanner(path)
    buf = head
    buf_off = 0  # file offset of buf[0]
    lineno = 1  # line number at buf[0]
    col_base = 0  # column of buf[0] within its line (non-zero only after a window cut)
    eof = False
    while True:
        if not eof:
            data = stream.read(opts.chunk)
            eof = not data
            if data:
                buf = buf + data if buf else data
        last_nl = buf.rfind(b"\n")
        if eof:
            limit = len(buf)
        elif last_nl >= 0:
            limit = last_nl + 1
        elif len(buf) >= opts.max_line:
            limit = -1  # over-long line: window mode below
        else:
            continue
        if limit >= 0:
            yield from _scan_region(lines, buf, limit, buf_off, lineno, col_base)
            lineno += buf.count(b"\n", 0, limit)
            if limit and buf[limit - 1 : limit] == b"\n":
                col_base = 0
            else:
                col_base += limit
            buf_off += limit
            buf = buf[limit:]
            if eof:
                break
            continue
        cut = len(buf) - opts.overlap
        found = lines.scan(buf, buf_off, lineno, col_base)
        keep = [o for o in found if o.start - buf_off < cut]
        yield from keep
        nxt = max([cut] + [o.end - buf_off for o in keep])
        col_base += nxt
        buf_off += nxt
        buf = buf[nxt:]
    yield from lines.finish()


def _scan_region(lines: LineScanner, buf: bytes, limit: int, buf_off: int, lineno: int, col_base: int) -> Iterator[Occurrence]:
    """Scan the complete lines in ``buf[:limit]`` that hold a keyword."""
    kws = list(KEYWORDS)
    if lines.pending:
        kws.append(REGION_CLOSE)
    nexts = [buf.find(k, 0, limit) for k in kws]
    counted = 0
    pos = 0
    while True:
        live = [n for n in nexts if n >= 0]
        if not live:
            return
        hit = min(live)
        start = buf.rfind(b"\n", 0, hit) + 1
        end = buf.find(b"\n", hit, limit)
        end = limit if end < 0 else end
        lineno += buf.count(b"\n", counted, start)
        counted = start
        text = buf[start:end]
        if text.endswith(b"\r"):
            text = text[:-1]
        yield from lines.scan(text, buf_off + start, lineno, col_base if start == 0 else 0)
        pos = end + 1
        if lines.pending and REGION_CLOSE not in kws:
            kws.append(REGION_CLOSE)
            nexts.append(buf.find(REGION_CLOSE, pos, limit))
        nexts = [n if n >= pos or n < 0 else buf.find(k, pos, limit) for n, k in zip(nexts, kws)]


__all__ = ["KEYWORDS", "ScanOptions", "open_input", "scan_path", "scan_stream"]
