"""Split: one large file cut at module starts into parts that worker processes check side by side. Each
part holds whole modules (every rule looks at one module at a time), so checking the parts gives what
checking the file gives; a file with no module start past its first is one part."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import BinaryIO

from shardconv.check.extract import MODULE_START
from shardconv.check.lines import Resume
from shardconv.check.sniff import SNIFF_BYTES, sniff

PART_BYTES = 16 << 20  # a part is at least this large: a worker's start-up and hand-back cost less
_WINDOW = 1 << 20
_OVERLAP = 256  # longer than the part of a line ``_CANDIDATE`` and ``MODULE_START`` look at
# A line that may start a module (``MODULE_START`` confirms it): the byte after its newline.
_CANDIDATE = re.compile(rb"\n(?=[ \t]*(?:HloModule\s|module\b|//[ \t]*-----))")


@dataclass(frozen=True)
class Part:
    """Bytes ``[resume.offset, end)`` of a file (``resume`` None: from its start, sniffed as usual;
    ``end`` None: to its end)."""

    resume: Resume | None = None
    end: int | None = None

    @property
    def start(self) -> int:
        return self.resume.offset if self.resume is not None else 0


WHOLE = Part()


def split_file(f: BinaryIO, size: int, parts: int, min_part: int = PART_BYTES) -> list[Part]:
    """``f`` (``size`` bytes, seekable) in up to ``parts`` parts of about ``min_part`` bytes or more, each
    starting at a module start. Reads a window after each cut, and counts the newlines before the last."""
    head = f.read(SNIFF_BYTES)
    kind = sniff(head)
    n = min(parts, size // min_part)
    if kind.skipped or n < 2:
        return [WHOLE]
    starts = [0]
    for k in range(1, n):
        cut = _module_start(f, max(k * size // n, starts[-1] + 1), size)
        if cut is not None and cut - starts[-1] >= min_part // 2 and size - cut >= min_part // 2:
            starts.append(cut)
    if len(starts) == 1:
        return [WHOLE]
    lines = _lines_before(f, starts[1:])
    ends: list[int | None] = [*starts[2:], None]
    return [Part(None, starts[1]), *(Part(Resume(s, ln, kind), e) for s, ln, e in zip(starts[1:], lines, ends))]


def _module_start(f: BinaryIO, at: int, size: int) -> int | None:
    """Offset of the first line at or after ``at`` that starts a module, searched a window at a time."""
    pos = at - 1  # from the byte before: a line starting at ``at`` counts
    while pos < size:
        f.seek(pos)
        data = f.read(_WINDOW)
        for m in _CANDIDATE.finditer(data):
            line_end = data.find(b"\n", m.end())
            if MODULE_START.match(data, m.end(), line_end if line_end >= 0 else len(data)):
                return pos + m.end()
        if len(data) < _WINDOW:
            return None
        pos += _WINDOW - _OVERLAP  # a candidate cut at the window's end is searched again in the next
    return None


def _lines_before(f: BinaryIO, offsets: list[int]) -> list[int]:
    """The line number at each of ``offsets`` (ascending line starts)."""
    f.seek(0)
    out, line, pos = [], 1, 0
    for off in offsets:
        while pos < off:
            data = f.read(min(8 << 20, off - pos))
            if not data:
                break
            line += data.count(b"\n")
            pos += len(data)
        out.append(line)
    return out


class PartReader:
    """A binary stream over bytes ``[start, end)`` of ``f``: what the reader of one part sees."""

    def __init__(self, f: BinaryIO, start: int, end: int | None) -> None:
        f.seek(start)
        self.f = f
        self.left = -1 if end is None else end - start

    def read(self, n: int = -1, /) -> bytes:
        if self.left < 0:
            return self.f.read(n)
        n = self.left if n < 0 else min(n, self.left)
        data = self.f.read(n)
        self.left -= len(data)
        return data


__all__ = ["PART_BYTES", "WHOLE", "Part", "PartReader", "split_file"]
