"""Streams a dump and yields every sharding occurrence. Memory stays bounded: the file is read in
chunks, only lines holding a keyword are looked at (found with ``bytes.find``, in C), and a line
longer than ``max_line`` is scanned in overlapping windows instead of being held whole. A consumer
may vouch for whole regions of repeated lines (``FileChecker.vouch``), which are then skipped."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from shardconv.check.linescan import LineScanner
from shardconv.check.occurrences import FileKind, Occurrence
from shardconv.check.sniff import SNIFF_BYTES, sniff

# Every place a value can sit holds one of these on its line ("sharding" covers mhlo./sdy./xla.sdy.
# shardings, in/out_shardings and sharding_constraint; unspecified_dims only appear next to one).
KEYWORDS: tuple[bytes, ...] = (b"sharding", b"sdy.mesh", b"sdy.reshard", b"manual_axes", b"num_partitions", b"expected-error")
REGION_CLOSE = b"} : "
CHUNK = 8 << 20
PIECE = 256 << 10  # a region the consumer cannot vouch for is retried in pieces this big
MAX_LINE = 4 << 20
OVERLAP = 1 << 20  # longest single value guaranteed intact inside an over-long line


Gate = Callable[[bytes], bool]
Vouch = Callable[[memoryview], bool]


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


def scan_stream(
    stream: BinaryIO, path: str, opts: ScanOptions = ScanOptions(), gate: Gate | None = None, vouch: Vouch | None = None
) -> tuple[FileKind, Iterator[Occurrence]]:
    """Sniff the stream, then lazily yield its occurrences (none when the file is skipped).
    ``gate`` lets a consumer skip lines it has already seen clean, ``vouch`` whole regions of them
    (see ``FileChecker.gate`` and ``FileChecker.vouch``)."""
    head = _read_at_least(stream, SNIFF_BYTES)
    kind = sniff(head, path)
    if kind.skipped:
        return kind, iter(())
    return kind, _occurrences(stream, path, head, opts, gate, vouch)


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


def _occurrences(
    stream: BinaryIO, path: str, head: bytes, opts: ScanOptions, gate: Gate | None, vouch: Vouch | None
) -> Iterator[Occurrence]:
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
            if vouch is None or col_base or lines.pending:
                yield from _scan_region(lines, buf, 0, limit, buf_off, lineno, col_base, gate)
            else:
                yield from _vouched_region(lines, buf, limit, buf_off, lineno, gate, vouch)
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


def _candidate_lines(buf: bytes, begin: int, limit: int, kws: list[bytes]) -> list[int]:
    """Sorted start offsets of the lines in ``buf[begin:limit]`` holding a keyword (``bytes.find`` hops, in C)."""
    starts: set[int] = set()
    for k in kws:
        p = buf.find(k, begin, limit)
        while p >= 0:
            starts.add(buf.rfind(b"\n", begin, p) + 1 or begin)
            e = buf.find(b"\n", p, limit)
            if e < 0:
                break
            p = buf.find(k, e, limit)
    return sorted(starts)


def _vouched_region(
    lines: LineScanner, buf: bytes, limit: int, buf_off: int, lineno: int, gate: Gate | None, vouch: Vouch
) -> Iterator[Occurrence]:
    """``buf[:limit]`` (complete lines) skipped whole when ``vouch`` passes it, else in pieces: each
    piece vouched for or scanned, so a few new lines cost a piece, not the chunk."""
    view = memoryview(buf)
    if vouch(view[:limit]):
        return
    begin = 0
    while begin < limit:
        end = buf.find(b"\n", min(begin + PIECE, limit) - 1, limit) + 1 or limit
        if lines.pending or not vouch(view[begin:end]):
            yield from _scan_region(lines, buf, begin, end, buf_off, lineno, 0, gate)
        lineno += buf.count(b"\n", begin, end)
        begin = end


def _scan_region(
    lines: LineScanner, buf: bytes, begin: int, limit: int, buf_off: int, lineno: int, col_base: int, gate: Gate | None = None
) -> Iterator[Occurrence]:
    """Scan the complete lines in ``buf[begin:limit]`` (``lineno`` is the line at ``begin``) that hold a
    keyword. ``gate(line)`` may vouch for a line (a repeat of one already found clean) so it is not
    scanned again."""
    first = counted = begin
    while True:
        kws = [*KEYWORDS, REGION_CLOSE] if lines.pending else list(KEYWORDS)
        restart = -1
        for start in _candidate_lines(buf, begin, limit, kws):
            end = buf.find(b"\n", start, limit)
            end = limit if end < 0 else end
            lineno += buf.count(b"\n", counted, start)
            counted = start
            text = buf[start:end]
            if text.endswith(b"\r"):
                text = text[:-1]
            if gate is not None and not lines.pending and gate(text):
                continue
            yield from lines.scan(text, buf_off + start, lineno, col_base if start == first else 0)
            if lines.pending and REGION_CLOSE not in kws and end < limit:
                restart = end + 1  # a manual computation opened: rescan the rest watching for its close
                break
        if restart < 0:
            return
        lineno += buf.count(b"\n", counted, restart)
        begin = counted = restart


__all__ = ["KEYWORDS", "ScanOptions", "open_input", "scan_path", "scan_stream"]
