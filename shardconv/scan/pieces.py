"""Pieces: a long dump scanned a piece at a time, each piece whole dumps (cut only just before a pass
log's ``// -----// IR Dump`` line) or whole modules (just before a top-level ``module`` line), or whole
functions of a long module (just before a top-level ``func.func`` line, never before a module's first:
its head, the module line and meshes, stays with it), so that memory holds one piece's scan, never the
whole file's. A piece's scan says what the scan of the whole file says about those bytes, its lines and
bytes counted from the piece's. In a pass log, a dump whose text after its dump line is the text of the
dump before it, byte for byte, need not be scanned at all: asked for, it comes as a ``Repeated`` (pass
logs print the module after every pass, and most passes change nothing). A reader that looks for some
words, or one line, need not scan a piece whose bytes spell none of them, or that does not hold the
line: asked for, such a piece comes as an ``Unscanned``."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterator
from itertools import chain
from typing import TYPE_CHECKING, Protocol, TypeGuard

from shardconv.core.records import record
from shardconv.scan.ahead import run_ahead
from shardconv.scan.forms import refuse_generic_form
from shardconv.scan.inputs import scan_input, skip_reason
from shardconv.scan.native import READ_SIZE, count_lines, fed_scan, find_from, scan_bytes, sniff, sniff_bytes

if TYPE_CHECKING:
    from shardconv._native import Scan

PIECE_BYTES = 1 << 21  # a piece ends at the first dump line past this many bytes
HELD_BYTES = 1 << 23  # a dump up to this size is held whole, to tell whether it repeats the one before
FEED_BYTES = 1 << 23  # a piece's bytes held for its scan past this are fed to it at once
DUMP_LINE = b"\n// -----// IR Dump"  # where a pass log may be cut (the line break before the line)
MODULE_LINE = b"\nmodule "  # where a file of MLIR modules may be cut
FUNCTION_LINE = b"\n  func.func "  # where a module of many functions may be cut (its top-level functions)
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


RECORD_WORDS = (b"sharding_origin", b"propagation_edges")  # what every propagation record's keyword spells


@record
class Unscanned:
    """A piece left unscanned, since it spells none of the words, or does not hold the line, its reader
    looks for (``Cuts.holding``, ``Cuts.holding_line``): its size, its line breaks, and whether it
    spells a propagation record's keyword."""

    size: int
    lines: int
    records: bool


Piece = tuple["Scan | Repeated | Unscanned", int]  # a piece and how many lines come before it


@record
class Cuts:
    """How a file is cut into pieces: before which lines (``DUMP_LINE``, or ``MODULE_LINE`` and
    ``FUNCTION_LINE``: a piece may then begin inside a module, at one of its functions), whether a
    dump repeating the one before is left unscanned (a pass log's, read with ``names``), and whether a
    piece whose bytes spell none of ``holding``, or that does not hold line ``holding_line`` (the first
    is 1), is (comes as an ``Unscanned``; the file's first piece, its head, is always scanned)."""

    lines: tuple[bytes, ...] = (DUMP_LINE,)
    repeats: bool = False
    holding: tuple[bytes, ...] = ()
    holding_line: int | None = None


PASS_LOG = Cuts()  # cut before dump lines, every dump scanned


def scan_pieces(
    path: str, *, names: bool = False, cuts: Cuts = PASS_LOG, workers: int | None = None
) -> Iterator[Piece]:
    """The pieces of ``path`` (``-``: stdin), each with how many lines come before it, scanned on
    ``workers`` threads (see ``run_ahead``); OSError when it cannot be read. What is not a regular
    file, or is one piece at most, comes whole."""
    if path == "-":
        yield from _scanned(sys.stdin.buffer.read, path, names, cuts, workers)
        return
    if _size(path) <= PIECE_BYTES:
        yield scan_input(path, names=names), 0  # with the scan's own error, if it cannot be read
        return
    with open(path, "rb") as f:
        expected, read, skipped = os.fstat(f.fileno()).st_size, _Counted(f.read), False
        for piece, lines in _scanned(read, path, names, cuts, workers):
            skipped = is_skip(piece)
            yield piece, lines
        _check_size(path, os.fstat(f.fileno()).st_size, expected, read.total if not skipped else expected)


def scan_whole(path: str, *, names: bool = False) -> Scan | None:
    """The scan of a regular file ``scan_pieces`` reads in one piece; None for any other (read in
    pieces, or stdin); OSError when it cannot be read."""
    if path == "-":
        return None
    st = os.stat(path)  # (one call: a read-ahead thread waits for the interpreter's lock after each)
    if not (stat.S_ISREG(st.st_mode) and 0 < st.st_size <= PIECE_BYTES):
        return None
    return scan_input(path, names=names)


def read_pieces(path: str, error: Callable[[str], Exception], *, names: bool = False,
                cuts: Cuts = PASS_LOG, scanned: Scan | None = None, workers: int | None = None) -> Iterator[Piece]:
    """``scan_pieces`` (or the one piece ``scanned``, the file's scan already made), raising
    ``error(message)`` when the file cannot be read, is not IR, or is MLIR in the generic op form (its
    readers, trace and explain, follow values by the function signatures it does not print)."""
    pieces = scan_pieces(path, names=names, cuts=cuts, workers=workers) if scanned is None else iter([(scanned, 0)])
    while True:
        try:
            got = next(pieces, None)
        except OSError as e:
            raise error(f"{path}: {e.strerror or e}") from None
        if got is None:
            return
        piece, lines = got
        if is_skip(piece):
            raise error(f"{path}: {skip_reason(path, piece.reason)}")
        if not isinstance(piece, Repeated | Unscanned):
            refuse_generic_form(piece, path, lines, error)
        yield got


def is_skip(piece: Scan | Repeated | Unscanned) -> TypeGuard[Scan]:
    """Whether ``piece`` is a scan that skipped its bytes (not IR)."""
    return not isinstance(piece, Repeated | Unscanned) and piece.kind == "skip"


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


def _scanned(read: Read, what: str, names: bool, cuts: Cuts, workers: int | None) -> Iterator[Piece]:
    """The pieces ``read`` gives, scanned on ``workers`` threads, each with how many lines come before it
    (a piece ends at a line break: the next starts on a line of its own)."""
    lines = 0
    for piece in chain.from_iterable(run_ahead(_jobs(read, what, names, cuts), workers)):
        yield piece, lines
        lines += piece.lines


def _jobs(read: Read, what: str, names: bool, cuts: Cuts) -> Iterator[_Job]:
    """The pieces of a file, in order, as jobs of about ``PIECE_BYTES`` each (see ``run_ahead``): a
    piece to scan, and the repeated dumps after it, left unscanned."""
    head = _head(read)
    if sniff(head)[0] == "skip":  # as the whole scan says, from the same head
        whole = _Held(what, names, None)
        whole.add(head)
        yield _Job(whole)
        return
    job = _Job()
    held: _Held | None = None
    before: tuple[bytes, int] | None = None  # the part before and where its body starts, when a whole dump
    lines = 0  # before the part (counted only to find ``cuts.holding_line``)
    first = True  # the file's first piece, always scanned
    functions = False  # whether the module read holds a function yet (its first is never cut from its head)
    log = _Log(read, head, cuts.lines)
    for part in log.parts():
        body = part.body_at() if cuts.repeats else None
        repeat = body is not None and before is not None and _same_after((part.data, body), before)
        function = part.at_line and part.data.startswith(FUNCTION_LINE[1:])
        big = held is not None and held.size >= PIECE_BYTES and (functions or not function)
        functions = function or (functions and not part.at_line)
        if (repeat or big) and log.may_cut(part):
            held = None
            if repeat:
                job.repeat(Repeated(part.data, count_lines(part.data), names))
                lines += job.repeats[-1].lines
                if job.size >= PIECE_BYTES:
                    yield job
                    job = _Job()
                continue
        before = (part.data, body) if body is not None else None
        if held is None:
            if job.size:
                yield job
            held = _Held(what, names, None if first else _looker(cuts, lines))
            job, first = _Job(held), False
        held.add(part.data)
        if cuts.holding_line is not None:
            lines += count_lines(part.data)
    if job.size:
        yield job


class _Job:
    """Pieces in order, to be made in one call: a piece to scan (``piece``), then repeated dumps."""

    def __init__(self, piece: _Held | None = None) -> None:
        self.piece, self.repeats, self.repeated = piece, list[Repeated](), 0  # (the repeats' bytes)

    @property
    def size(self) -> int:
        """Its bytes: the piece's, and the repeats'."""
        return (self.piece.size if self.piece is not None else 0) + self.repeated

    def repeat(self, dump: Repeated) -> None:
        """A dump left unscanned, after the piece and the repeats before it."""
        self.repeats.append(dump)
        self.repeated += len(dump.text)

    def __call__(self) -> list[Scan | Repeated | Unscanned]:
        made: list[Scan | Repeated | Unscanned] = [self.piece.scan()] if self.piece is not None else []
        return made + self.repeats


class _Held:
    """A piece's bytes, held for the job that scans them; past ``FEED_BYTES`` (a dump with no cut line in
    hundreds of MB) they are fed to its scan as they come, so memory stays bounded. With a ``looker``,
    the piece is scanned only if it finds what it looks for (or some bytes were fed already)."""

    def __init__(self, what: str, names: bool, looker: Looker | None) -> None:
        self.fed, self.parts, self.held, self.size = fed_scan(what, names=names), list[bytes](), 0, 0
        self.looker, self.fed_any = looker, False

    def add(self, data: bytes) -> None:
        if self.looker is not None:
            self.looker.add(data)
        self.parts.append(data)
        self.held += len(data)
        self.size += len(data)
        if self.held > FEED_BYTES:
            self.fed.feed(b"".join(self.parts))
            self.parts, self.held, self.fed_any = [], 0, True

    def scan(self) -> Scan | Unscanned:
        """The piece's scan: what is held fed in one call (the core then waits for the lock once)."""
        data, self.parts = b"".join(self.parts), []
        if self.looker is not None and not (self.looker.found or self.fed_any):
            return Unscanned(self.size, count_lines(data), any(find_from(data, w, 0) >= 0 for w in RECORD_WORDS))
        self.fed.feed(data)
        return self.fed.finish()


class Looker(Protocol):
    """Whether a piece holds what its reader looks for, told from its bytes given in parts."""

    found: bool

    def add(self, data: bytes) -> bool:
        """Whether the bytes so far, ``data`` the last of them, hold it."""
        ...


def _looker(cuts: Cuts, lines: int) -> Looker | None:
    """What a piece starting after ``lines`` line breaks is scanned for, if ``cuts`` looks for anything."""
    if cuts.holding:
        return Spotter(cuts.holding)
    if cuts.holding_line is not None:
        return LineSpotter(lines, cuts.holding_line)
    return None


class Spotter:
    """Whether bytes given in parts spell any of ``needles``: in one part, or across two or more."""

    def __init__(self, needles: tuple[bytes, ...]) -> None:
        self.needles, self.found, self.tail = needles, False, b""  # (the last bytes given, one fewer than it)
        self.keep = max(map(len, needles)) - 1

    def add(self, data: bytes) -> bool:
        """Whether the bytes so far, ``data`` the last of them, spell a needle."""
        if self.found:
            return True
        keep = self.keep
        edge = self.tail + data[:keep]
        self.found = any(find_from(edge, n, 0) >= 0 or find_from(data, n, 0) >= 0 for n in self.needles)
        self.tail = (self.tail + data[-keep:])[-keep:] if keep else b""
        return self.found


class LineSpotter:
    """Whether bytes given in parts, after ``before`` line breaks, hold line ``line`` (or the line after
    them: a piece ends at a line break, unless it is the file's last)."""

    def __init__(self, before: int, line: int) -> None:
        self.before, self.line, self.seen, self.found = before, line, 0, False

    def add(self, data: bytes) -> bool:
        self.seen += count_lines(data)
        self.found = self.before < self.line <= self.before + self.seen + 1
        return self.found


def _head(read: Read) -> bytes:
    """The first ``SNIFF_BYTES`` (fewer at the end), which decide whether the file is scanned at all."""
    head = bytearray()
    while len(head) < sniff_bytes() and (data := read(sniff_bytes() - len(head))):
        head += data
    return bytes(head)


@record
class _Part:
    """Bytes of the log in order: a dump whole (from its cut line to the next), else a piece of one too
    big to hold. ``at_line``: it starts at a cut line."""

    data: bytes
    whole: bool
    at_line: bool

    def body_at(self) -> int | None:
        """Where a whole dump's text after its dump line starts; None for a part of a dump."""
        if not (self.whole and self.data.startswith(DUMP_LINE[1:])):
            return None
        line_end = self.data.find(b"\n")
        return len(self.data) if line_end < 0 else line_end + 1



def _same_after(a: tuple[bytes, int], b: tuple[bytes, int]) -> bool:
    """Whether two texts hold the same bytes from their given offsets on (two dumps' bodies: copied to be
    compared only when as long, and a pass log's dumps are mostly of other lengths)."""
    (x, i), (y, j) = a, b
    return len(x) - i == len(y) - j and x[i:] == y[j:]


class _Log:
    """The bytes of a log read but not yet handed on as parts: ``buf[at:]``, the pending bytes."""

    def __init__(self, read: Read, head: bytes, cuts: tuple[bytes, ...]) -> None:
        self.read, self.buf, self.at, self.eof, self.cuts = read, head, 0, False, cuts
        self.longest = max(map(len, cuts))

    def _find(self, start: int) -> int:
        """Where the first cut line at or after ``start`` begins (its line break), or -1."""
        found = [i for i in (find_from(self.buf, cut, start) for cut in self.cuts) if i >= 0]
        return min(found, default=-1)

    def parts(self) -> Iterator[_Part]:
        """The whole log from here, in parts; none of them empty. While a part is handed on, what is
        pending starts with it (see ``may_cut``)."""
        whole, at_line, searched = True, False, 0  # (offsets into what is pending)
        while True:
            found = self._find(self.at + searched)
            i, pending = (found - self.at if found >= 0 else -1), len(self.buf) - self.at
            if i >= 0 and (i + 1 + sniff_bytes() <= pending or self.eof):
                end = i + 1
                yield _Part(self._pending(end), whole and end <= HELD_BYTES, at_line)
                self.at += end
                whole, at_line, searched = True, True, 1
                continue
            if i < 0 and self.eof:
                if pending:
                    yield _Part(self._pending(pending), whole and pending <= HELD_BYTES, at_line)
                return
            if i < 0 and pending > HELD_BYTES:  # too big to hold: passed on as it settles
                end = self._settled()
                yield _Part(self._pending(end), False, at_line)
                self.at += end
                whole, at_line = False, False
            searched = max(0, (i if i >= 0 else len(self.buf) - self.at) - self.longest)
            self._read_more()

    def _pending(self, n: int) -> bytes:
        """The first ``n`` pending bytes."""
        return self.buf[self.at:self.at + n]

    def _read_more(self) -> None:
        """Append a read to what is pending; a read at least as long as it, so that a long dump is
        copied a bounded number of times as it builds up."""
        kept = self.buf[self.at:]
        chunk = self.read(max(READ_SIZE, len(kept)))
        self.buf, self.at, self.eof = kept + chunk, 0, not chunk

    def may_cut(self, part: _Part) -> bool:
        """Whether a piece may begin with ``part``, the part being handed on: it starts at a cut line and
        its head is scanned, not skipped, by the sniff (asked only where a cut is wanted)."""
        return part.at_line and sniff(self._pending(sniff_bytes()))[0] != "skip"

    def _settled(self) -> int:
        """How much of what is pending no cut can fall in any more: all but what a dump line starting
        in the rest needs to be found and its piece's head sniffed."""
        return max(1, len(self.buf) - self.at - sniff_bytes() - self.longest)


__all__ = ["DUMP_LINE", "FUNCTION_LINE", "HELD_BYTES", "MODULE_LINE", "PIECE_BYTES", "Cuts", "LineSpotter", "Looker",
           "Piece", "Repeated", "Spotter", "Unscanned", "is_skip", "read_pieces", "scan_pieces", "scan_whole"]
