"""Which module of a file ``outputs`` reads: a pass log (MLIR's IR printing, XLA's modules one after
another, ``// -----`` splits) holds many, and the last is the one after every pass. The module starts
are the scan's (``scan/``), found a piece at a time; of the last module, an HLO module's reader reads a few
lines (``entry_lines``), and memory holds those, not the module (an MLIR module is read whole)."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import TYPE_CHECKING, BinaryIO

from shardconv.core.records import record
from shardconv.scan.hlo_module import entry_lines, is_hlo_module
from shardconv.scan.native import scan_bytes
from shardconv.scan.pieces import Cuts, Repeated, Unscanned, scan_pieces
from shardconv.scan.sites import SiteKind
from shardconv.scan.table import table

if TYPE_CHECKING:
    from shardconv.scan.table import Scan

_DUMP_LINE = b"// -----"  # an MLIR pass log's ``// -----// IR Dump ...`` line, or a split marker
_CUT_BEFORE = (b"\n// -----// IR Dump", b"\nmodule ", b"\nHloModule ")  # where a long file is cut in pieces
_HEAD = 1 << 20  # what is read of a module to tell whether it is HLO text


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


class _Starts:
    """The module starts met so far: how many, and the last (byte offset, line, its first line's bytes);
    a pass log's dump line and the module printed under it count once."""

    def __init__(self) -> None:
        self.count = 0
        self.last: tuple[int, int, bytes] | None = None

    def add(self, scan: Scan, offset: int, lines: int) -> None:
        """The module starts of ``scan``, a piece of the file ``offset`` bytes and ``lines`` lines in."""
        t = table(scan)
        starts, line_of = t.col.start, t.col.line
        for i in t.sites_holding(t.of_kind({SiteKind.MODULE_START})):
            line = lines + line_of[i]
            if self.last is not None and self.last[1] == line - 1 and self.last[2].startswith(_DUMP_LINE):
                continue  # the module printed under its dump line
            self.count += 1
            self.last = (offset + starts[i], line, t.kept_line(i))

    def dump(self, rest: str) -> Dump:
        """The last module, whose text (to the end of the file) is ``rest``."""
        assert self.last is not None
        _, line, head = self.last
        header = head.decode("utf-8", "surrogateescape").strip() if head.startswith(_DUMP_LINE) else None
        text = "\n" * (line - 1) + rest
        return Dump(text=text, number=self.count, count=self.count, line=line, header=header)


def _whole(text: str) -> Dump:
    return Dump(text=text, number=1, count=1, line=1, header=None)


def _decoded(data: bytes | bytearray) -> str:
    return data.decode("utf-8", "surrogateescape")


def last_dump(data: bytes) -> Dump:
    """The last module of ``data`` (the whole of it when the scan finds one module, or none)."""
    found = _Starts()
    found.add(scan_bytes(data), 0, 0)
    if found.last is None or found.count < 2:
        return _whole(_decoded(data))
    return found.dump(_decoded(data[found.last[0] :]))


def last_dump_in(path: str) -> Dump:
    """The last module of the file at ``path``, found in pieces (memory holds one piece's scan, of the first
    site of each value) and then read alone (``_module_text``); OSError when the file cannot be read."""
    found, offset = _Starts(), 0
    for piece, lines in scan_pieces(path, cuts=Cuts(lines=_CUT_BEFORE), every_site=False):
        if isinstance(piece, Repeated | Unscanned):  # (asked for neither: no repeats, no words to hold)
            raise AssertionError("outputs scans every piece")
        found.add(piece, offset, lines)
        offset += piece.size
    with open(path, "rb") as f:
        if found.last is None or found.count < 2:
            return _whole(_module_text(f))
        f.seek(found.last[0])
        return found.dump(_module_text(f))


def _module_text(f: BinaryIO) -> str:
    """The text of the module ``f`` holds from where it stands to its end: an HLO module's as its reader
    reads it (``entry_lines``: the lines it never reads emptied, in bounded memory), any other's whole."""
    at = f.tell()
    head = f.read(_HEAD)
    if not is_hlo_module(_decoded(head)):  # (a leading comment longer than the head: read whole)
        return _decoded(head + f.read())
    f.seek(at)
    kept = bytearray()  # (one buffer: a list of its millions of lines would hold far more than their bytes)
    for line in entry_lines(f):
        kept += line
    return _decoded(kept)
