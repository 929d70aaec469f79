"""Pieces: a pass log cut at its ``// -----`` lines (one dump each), read in chunks, so a dump whose
text equals the one before it (``After A`` then ``Before B``, or a pass that changed nothing) is known
to be the same without extracting it again. Memory holds one dump and one chunk."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

SPLIT = b"// -----"
CHUNK = 8 << 20


@dataclass(frozen=True)
class Piece:
    """The text from one ``// -----`` line to the next, and where it starts."""

    line: int  # 1-based line of its first byte
    data: bytes

    @property
    def body(self) -> memoryview:
        """The text after the header line: two dumps of one module have the same body."""
        start = self.data.find(b"\n") + 1 if self.data.startswith(SPLIT) else 0
        return memoryview(self.data)[start:]


def is_pass_log(head: bytes) -> bool:
    """Whether a file that starts with ``head`` has ``// -----`` lines to cut at."""
    return head.startswith(SPLIT) or b"\n" + SPLIT in head


def pieces(stream: BinaryIO, head: bytes = b"", chunk: int = CHUNK) -> Iterator[Piece]:
    """The pieces of ``head`` followed by the rest of ``stream``, each as soon as the next begins."""
    buf = head
    line = 1
    eof = False
    start = 0  # where the current piece begins in ``buf``
    searched = 1  # where the search for the next cut resumes (a piece never starts with a cut)
    while True:
        cut = buf.find(b"\n" + SPLIT, searched)
        while cut >= 0:
            piece = buf[start : cut + 1]
            yield Piece(line, piece)
            line += piece.count(b"\n")
            start = cut + 1
            cut = buf.find(b"\n" + SPLIT, start + 1)
        if eof:
            if start < len(buf):
                yield Piece(line, buf[start:])
            return
        buf = buf[start:]
        start = 0
        searched = max(1, len(buf) - len(SPLIT))  # a cut the chunk end split in two is found next time
        data = stream.read(chunk)
        eof = not data
        buf = buf + data if buf else data


__all__ = ["CHUNK", "SPLIT", "Piece", "is_pass_log", "pieces"]
