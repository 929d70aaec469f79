"""Pieces: a pass log scanned a piece at a time, each piece whole dumps (cut only just before a
``// -----// IR Dump`` line), so that memory holds one piece's scan, never the whole log's. A piece's
scan says what the scan of the whole file says about those bytes, its lines counted from the piece's."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from shardconv.scan.inputs import scan_input
from shardconv.scan.native import READ_SIZE, fed_scan, scan_bytes, sniff, sniff_bytes

if TYPE_CHECKING:
    from shardconv._native import Scan

PIECE_BYTES = 1 << 21  # a piece ends at the first dump line past this many bytes
_DUMP_LINE = b"\n// -----// IR Dump"
Read = Callable[[int], bytes]


def scan_pieces(path: str, *, names: bool = False) -> Iterator[tuple[Scan, int]]:
    """The scans of the pieces of ``path`` (``-``: stdin), each with how many lines come before it;
    OSError when it cannot be read. What is not a regular file, or is one piece at most, comes whole."""
    if path == "-":
        yield from _pieces(sys.stdin.buffer.read, path, names)
        return
    if _size(path) <= PIECE_BYTES:
        yield scan_input(path, names=names), 0  # with the scan's own error, if it cannot be read
        return
    with open(path, "rb") as f:
        expected, read, skipped = os.fstat(f.fileno()).st_size, _Counted(f.read), False
        for scan, lines in _pieces(read, path, names):
            skipped = scan.kind == "skip"
            yield scan, lines
        _check_size(path, os.fstat(f.fileno()).st_size, expected, read.total if not skipped else expected)


def _size(path: str) -> int:
    """The size of a regular file this process may read; 0 for anything else (read whole, by the scan)."""
    try:
        st = os.stat(path)
    except OSError:
        return 0
    return st.st_size if stat.S_ISREG(st.st_mode) and os.access(path, os.R_OK) else 0


class _Counted:
    """A file's ``read``, counting the bytes it gave."""

    def __init__(self, read: Read) -> None:
        self.read, self.total = read, 0

    def __call__(self, n: int) -> bytes:
        data = self.read(n)
        self.total += len(data)
        return data


def _check_size(path: str, now: int, expected: int, total: int) -> None:
    """OSError, as the scan of a whole file raises it, when the file changed size while it was read
    (``total``: the bytes read, taken as ``expected`` for a skipped file, read only as far as its head)."""
    if now != expected or total != expected:
        raise OSError(f"{path}: the file changed size while it was read ({expected} bytes, then {now}; {total} read)")


def _pieces(read: Read, what: str, names: bool) -> Iterator[tuple[Scan, int]]:
    head = _head(read)
    if sniff(head)[0] == "skip":  # as the whole scan says, from the same head
        yield scan_bytes(head, names=names), 0
        return
    log, lines = _Log(read, head), 0
    while True:
        fed = fed_scan(what, names=names)
        more = log.piece(fed.feed)
        scan = fed.finish()
        yield scan, lines
        if not more:
            return
        lines += scan.lines  # (a piece ends at a line break: the next starts on a line of its own)


def _head(read: Read) -> bytes:
    """The first ``SNIFF_BYTES`` (fewer at the end), which decide whether the file is scanned at all."""
    head = bytearray()
    while len(head) < sniff_bytes() and (data := read(sniff_bytes() - len(head))):
        head += data
    return bytes(head)


class _Log:
    """The bytes of a log read but not yet fed to a piece's scan."""

    def __init__(self, read: Read, head: bytes) -> None:
        self.read, self.pending, self.eof = read, bytearray(head), False

    def piece(self, feed: Callable[[bytes], None]) -> bool:
        """Feeds the next piece; whether another piece follows."""
        fed = 0
        while True:
            cut = self._cut(fed)
            end = cut if cut is not None else len(self.pending) if self.eof else self._settled()
            if end:  # (an empty piece of data would end the scan)
                data = bytes(self.pending[:end])
                del self.pending[:end]
                feed(data)
                fed += end
            if cut is not None or self.eof:
                return cut is not None
            chunk = self.read(READ_SIZE)
            self.pending += chunk
            self.eof = not chunk

    def _settled(self) -> int:
        """How much of what is pending no cut can fall in any more: all but what a dump line starting
        in the rest needs to be found and its piece's head sniffed."""
        return max(0, len(self.pending) - sniff_bytes() - len(_DUMP_LINE))

    def _cut(self, fed: int) -> int | None:
        """Where the piece fed ``fed`` bytes so far ends in what is pending: at the first dump line past
        ``PIECE_BYTES`` whose piece the sniff scans (never a piece the scan would skip); None: not here."""
        start = max(0, PIECE_BYTES - fed - 1)
        while (i := self.pending.find(_DUMP_LINE, start)) >= 0:
            p = i + 1
            if p + sniff_bytes() > len(self.pending) and not self.eof:
                return None  # its head is not read yet
            if sniff(bytes(self.pending[p:p + sniff_bytes()]))[0] != "skip":
                return p
            start = p
        return None


__all__ = ["PIECE_BYTES", "scan_pieces"]
