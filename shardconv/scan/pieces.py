"""Pieces: a pass log scanned a piece at a time, each piece whole dumps (cut only just before a
``// -----// IR Dump`` line), so that memory holds one piece's scan, never the whole log's. A piece's
scan says what the scan of the whole file says about those bytes, its lines counted from the piece's.
A dump whose text after its dump line is the text of the dump before it, byte for byte, is not scanned
at all: it comes as a ``Repeated`` (pass logs print the module after every pass, and most passes change
nothing)."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from shardconv.core.records import record
from shardconv.scan.inputs import scan_input
from shardconv.scan.native import READ_SIZE, fed_scan, scan_bytes, sniff, sniff_bytes

if TYPE_CHECKING:
    from shardconv._native import Scan

PIECE_BYTES = 1 << 21  # a piece ends at the first dump line past this many bytes
HELD_BYTES = 1 << 23  # a dump up to this size is held whole, to tell whether it repeats the one before
_DUMP_LINE = b"\n// -----// IR Dump"
Read = Callable[[int], bytes]


@record
class Repeated:
    """A dump left unscanned: its text after its dump line (its first line) is that of the dump right
    before it. ``text`` is the whole dump, for a reader that must scan it after all; ``lines``, its line
    breaks."""

    text: bytes
    lines: int
    names: bool  # how the pieces are scanned

    @property
    def header(self) -> bytes:
        """Its dump line, without the line break."""
        return self.text.partition(b"\n")[0]

    def scan(self) -> Scan:
        """Its scan, as a piece of its own."""
        return scan_bytes(self.text, names=self.names)


Piece = tuple["Scan | Repeated", int]  # a piece and how many lines come before it


def scan_pieces(path: str, *, names: bool = False) -> Iterator[Piece]:
    """The pieces of ``path`` (``-``: stdin), each with how many lines come before it; OSError when it
    cannot be read. What is not a regular file, or is one piece at most, comes whole."""
    if path == "-":
        yield from _pieces(sys.stdin.buffer.read, path, names)
        return
    if _size(path) <= PIECE_BYTES:
        yield scan_input(path, names=names), 0  # with the scan's own error, if it cannot be read
        return
    with open(path, "rb") as f:
        expected, read, skipped = os.fstat(f.fileno()).st_size, _Counted(f.read), False
        for piece, lines in _pieces(read, path, names):
            skipped = not isinstance(piece, Repeated) and piece.kind == "skip"
            yield piece, lines
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


def _pieces(read: Read, what: str, names: bool) -> Iterator[Piece]:
    head = _head(read)
    if sniff(head)[0] == "skip":  # as the whole scan says, from the same head
        yield scan_bytes(head, names=names), 0
        return
    lines, fed, size, before = 0, None, 0, None
    for part in _Log(read, head).parts():
        body = part.body()
        if part.cut and body is not None and body == before:
            if fed is not None:
                scan = fed.finish()
                yield scan, lines
                lines += scan.lines  # (a piece ends at a line break: the next starts on a line of its own)
                fed = None
            repeated = Repeated(part.data, part.data.count(b"\n"), names)
            yield repeated, lines
            lines += repeated.lines
            continue
        before = body
        if fed is not None and part.cut and size >= PIECE_BYTES:
            scan = fed.finish()
            yield scan, lines
            lines += scan.lines
            fed = None
        if fed is None:
            fed, size = fed_scan(what, names=names), 0
        fed.feed(part.data)
        size += len(part.data)
    if fed is not None:
        yield fed.finish(), lines


def _head(read: Read) -> bytes:
    """The first ``SNIFF_BYTES`` (fewer at the end), which decide whether the file is scanned at all."""
    head = bytearray()
    while len(head) < sniff_bytes() and (data := read(sniff_bytes() - len(head))):
        head += data
    return bytes(head)


@record
class _Part:
    """Bytes of the log in order: a dump whole (from its dump line to the next), else a piece of one too
    big to hold. ``cut``: it starts at a dump line where a piece may begin (its head is scanned, not
    skipped, by the sniff)."""

    data: bytes
    whole: bool
    cut: bool

    def body(self) -> bytes | None:
        """A whole dump's text after its dump line; None for a part of a dump."""
        if not (self.whole and self.data.startswith(_DUMP_LINE[1:])):
            return None
        return self.data[self.data.find(b"\n") + 1:] if b"\n" in self.data else b""


class _Log:
    """The bytes of a log read but not yet handed on as parts."""

    def __init__(self, read: Read, head: bytes) -> None:
        self.read, self.pending, self.eof = read, bytearray(head), False

    def parts(self) -> Iterator[_Part]:
        """The whole log from here, in parts; none of them empty."""
        whole, cut, searched = True, False, 0
        while True:
            i = self.pending.find(_DUMP_LINE, searched)
            if i >= 0 and (i + 1 + sniff_bytes() <= len(self.pending) or self.eof):
                end = i + 1
                yield _Part(bytes(self.pending[:end]), whole and end <= HELD_BYTES, cut)
                del self.pending[:end]
                whole, searched = True, 1
                cut = sniff(bytes(self.pending[:sniff_bytes()]))[0] != "skip"
                continue
            if i < 0 and self.eof:
                if self.pending:
                    yield _Part(bytes(self.pending), whole and len(self.pending) <= HELD_BYTES, cut)
                return
            if i < 0 and len(self.pending) > HELD_BYTES:  # too big to hold: passed on as it settles
                end = self._settled()
                yield _Part(bytes(self.pending[:end]), False, cut)
                del self.pending[:end]
                whole, cut = False, False
            searched = max(0, (i if i >= 0 else len(self.pending)) - len(_DUMP_LINE))
            chunk = self.read(READ_SIZE)
            self.pending += chunk
            self.eof = not chunk

    def _settled(self) -> int:
        """How much of what is pending no cut can fall in any more: all but what a dump line starting
        in the rest needs to be found and its piece's head sniffed."""
        return max(1, len(self.pending) - sniff_bytes() - len(_DUMP_LINE))


__all__ = ["HELD_BYTES", "PIECE_BYTES", "Piece", "Repeated", "scan_pieces"]
