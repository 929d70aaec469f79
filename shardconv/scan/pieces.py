"""Pieces: a long dump scanned a piece at a time, each piece whole dumps (cut only just before a pass log's
``// -----// IR Dump`` line) or whole modules (just before a top-level ``module`` or ``HloModule`` line),
or whole functions of a long module (just before a top-level ``func.func`` line, never before a module's
first: its head, the module line and meshes, stays with it), so that memory holds one piece's scan, never
the whole file's. A piece's scan says what the scan of the whole file says about those bytes, its lines
and bytes counted from the piece's, or (``placed``) from the file's start. In a pass log, a dump whose
text after its dump line is the text of the dump before it, byte for byte, need not be scanned at all:
asked for, it comes as a ``Repeated`` (pass logs print the module after every pass, and most passes
change nothing). A reader that looks for some words, or one line, need not scan a piece whose bytes spell
none of them, or that does not hold the line: asked for, such a piece comes as an ``Unscanned``. The core
reads the file, cuts it and gathers each piece's bytes (``native/core/src/cut.rs``), the interpreter's lock
released: Python gets whole jobs."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import KW_ONLY, replace
from itertools import chain
from typing import TYPE_CHECKING, TypeGuard

from shardconv.core.records import record
from shardconv.scan.ahead import run_ahead
from shardconv.scan.forms import refuse_generic_form
from shardconv.scan.inputs import scan_input, skip_reason
from shardconv.scan.native import READ_SIZE, ScanOptions, cutter, guarded, scan_bytes
from shardconv.text.files import os_reason

if TYPE_CHECKING:
    from shardconv._native import Cutter, PieceJob, Scan

PIECE_BYTES = 1 << 21  # a piece ends at the first dump line past this many bytes
HELD_BYTES = 1 << 23  # a dump up to this size is held whole, to tell whether it repeats the one before
FEED_BYTES = 1 << 23  # a piece's bytes held for its scan past this are fed to it at once
# a segment of a file defining names and what they are past this many bytes lets them go: trace reads the
# few it asks about again from the file (a long module defines every instruction)
NAMES_HELD_BYTES = 1 << 22
DUMP_LINE = b"\n// -----// IR Dump"  # where a pass log may be cut (the line break before the line)
MODULE_LINE = b"\nmodule "  # where a file of MLIR modules may be cut
FUNCTION_LINE = b"\n  func.func "  # where a module of many functions may be cut (its top-level functions)
HLO_MODULE_LINE = b"\nHloModule "  # where a file of HLO modules may be cut


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
        return scan_bytes(self.text, ScanOptions(names=self.names))


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
    is 1), is (comes as an ``Unscanned``; the file's first piece, its head, is always scanned). A piece
    ends at the first cut line past ``piece_bytes`` (at most ``PIECE_BYTES``); with ``whole_modules``, only
    at one the scan reads as a module's start (a bare ``HloModule m`` line holds no keyword, and the scan
    of the whole file reads it as part of the module before: each piece then holds whole modules as the
    whole file's scan numbers them). With ``drain`` (a reader of every site that names none), a piece
    read past ``FEED_BYTES`` (one long module) comes in parts as it is fed to its scan, each a scan of the
    sites so far at their place, its own part the last: the reader holds a part of it at a time."""

    _: KW_ONLY
    lines: tuple[bytes, ...] = (DUMP_LINE,)
    repeats: bool = False
    holding: tuple[bytes, ...] = ()
    holding_line: int | None = None
    piece_bytes: int = PIECE_BYTES
    whole_modules: bool = False
    drain: bool = False

    def size(self) -> int:
        """The size a piece ends past (``PIECE_BYTES`` is read when asked: a test may lower it)."""
        return min(self.piece_bytes, PIECE_BYTES)


PASS_LOG = Cuts()  # cut before dump lines, every dump scanned
SMALL_PIECE_BYTES = 1 << 19  # a reader of every site holds a piece's table (about ten times its bytes), and a
# few pieces are scanned ahead: its pieces end past this many bytes
# cut before a dump or HLO module the scan reads as one; a reader of each group's first site (check) holds a
# small table, so a file up to PIECE_BYTES is one scan, in one call (no cutter, no threads)
MODULES = Cuts(lines=(DUMP_LINE, HLO_MODULE_LINE), whole_modules=True)
EVERY_SITE_MODULES = replace(MODULES, piece_bytes=SMALL_PIECE_BYTES, drain=True)  # read by a reader of every site




def scan_pieces(
    path: str, *, names: bool = False, cuts: Cuts = PASS_LOG, workers: int | None = None,
    every_site: bool = True, placed: bool = False,
) -> Iterator[Piece]:
    """The pieces of ``path`` (``-``: stdin), each with how many lines come before it, scanned on
    ``workers`` threads (see ``run_ahead``); OSError when it cannot be read. What is not a regular
    file, or is one piece at most, comes whole. ``placed``: each piece's lines and byte offsets are the
    file's, as the scan of the whole file gives them."""
    how = {"every_site": every_site, "placed": placed}
    if path == "-":
        yield from _scanned(_cutter(sys.stdin.buffer.read, names, cuts, **how), path, names, workers)
        return
    if _size(path) <= cuts.size():
        # with the scan's own error, if it cannot be read
        yield scan_input(path, ScanOptions(names=names, every_site=every_site)), 0
        return
    cut = _cutter(path, names, cuts, **how)
    yield from _scanned(cut, path, names, workers)
    cut.check_size()  # (the core's one check, as the scan of a whole file makes it)


def placed_scans(path: str, *, every_site: bool = True) -> Iterator[Scan]:
    """``path`` (``-``: stdin) scanned a piece of whole modules at a time (``MODULES``), each piece at its
    place in the file (its lines and byte offsets the file's), as the readers of every module read it
    (check, ``scan_path``); with ``every_site``, a long module in parts (``Cuts.drain``). OSError when it
    cannot be read."""
    cuts = EVERY_SITE_MODULES if every_site else MODULES
    for piece, _ in scan_pieces(path, cuts=cuts, every_site=every_site, placed=True):
        assert not isinstance(piece, Repeated | Unscanned)  # (asked for neither: no repeats, no words to hold)
        yield piece


def scan_whole(path: str, *, names: bool = False) -> Scan | None:
    """The scan of a regular file ``scan_pieces`` reads in one piece; None for any other (read in
    pieces, or stdin); OSError when it cannot be read."""
    if path == "-":
        return None
    st = os.stat(path)  # (one call: a read-ahead thread waits for the interpreter's lock after each)
    if not (stat.S_ISREG(st.st_mode) and 0 < st.st_size <= PIECE_BYTES):
        return None
    return scan_input(path, ScanOptions(names=names))


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
            raise error(f"{path}: {os_reason(e, path)}") from None
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


def _cutter(
    source: str | Callable[[int], bytes], names: bool, cuts: Cuts, *, every_site: bool = True, placed: bool = False
) -> Cutter:
    """The core's cutter of ``source`` (a path, or a stream's ``read``) into jobs of ``cuts.size()`` bytes or
    so (``HELD_BYTES``, ``FEED_BYTES``, ``NAMES_HELD_BYTES`` and ``READ_SIZE`` as they are set when it is
    made), each piece scanned as ``scan_pieces`` says."""
    return cutter(
        source, lines=list(cuts.lines), dump_line=DUMP_LINE, function_line=FUNCTION_LINE, repeats=cuts.repeats,
        holding=list(cuts.holding), holding_line=cuts.holding_line, piece_bytes=cuts.size(), held_bytes=HELD_BYTES,
        feed_bytes=FEED_BYTES, read_size=READ_SIZE, names=names, every_site=every_site, placed=placed,
        whole_modules=cuts.whole_modules, drain=cuts.drain, names_held=NAMES_HELD_BYTES,
    )


def _scanned(cut: Cutter, what: str, names: bool, workers: int | None) -> Iterator[Piece]:
    """The pieces ``cut`` gives, scanned on ``workers`` threads, each with how many lines come before it
    (a piece ends at a line break: the next starts on a line of its own)."""
    lines = 0
    for piece in chain.from_iterable(run_ahead(_jobs(cut, what, names), workers)):
        yield piece, lines
        lines += piece.lines


def _jobs(cut: Cutter, what: str, names: bool) -> Iterator[_Job]:
    """The jobs of a log, in order (see ``run_ahead``): each read and cut by the core, the interpreter's
    lock released meanwhile."""
    while (job := guarded(what, cut.next_job)) is not None:
        yield _Job(job, what, names)


class _Job:
    """Pieces in order, made in one call: the parts of a piece being read, or a piece to scan (or left
    unscanned), then repeated dumps."""

    def __init__(self, job: PieceJob, what: str, names: bool) -> None:
        self.job, self.what, self.names = job, what, names

    def __call__(self) -> list[Scan | Repeated | Unscanned]:
        pieces, repeats = guarded(self.what, self.job.run)
        made: list[Scan | Repeated | Unscanned] = [Unscanned(*p) if isinstance(p, tuple) else p for p in pieces]
        return made + [Repeated(text, lines, self.names) for text, lines in repeats]


__all__ = ["DUMP_LINE", "FUNCTION_LINE", "HELD_BYTES", "HLO_MODULE_LINE", "MODULES", "MODULE_LINE", "PIECE_BYTES",
           "SMALL_PIECE_BYTES", "Cuts", "Piece", "Repeated", "Unscanned", "is_skip", "placed_scans", "read_pieces",
           "scan_pieces", "scan_whole"]
