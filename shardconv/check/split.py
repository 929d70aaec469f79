"""Split: one large file cut into parts that worker processes check side by side. A cut falls at a module
start where one is near, else (in HLO) at an instruction line inside a module: that module's values
from both sides are joined before any rule sees them (``dedup.joined``), so checking the parts gives
what checking the file gives."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import BinaryIO

from shardconv.check.keywords import MODULE_START
from shardconv.check.lines import Resume
from shardconv.check.sites import FileKind
from shardconv.check.sniff import SNIFF_BYTES, sniff

PART_BYTES = 16 << 20  # a part is at least this large: a worker's start-up and hand-back cost less
_WINDOW = 1 << 20
_OVERLAP = 256  # longer than the part of a line the patterns below look at
# A line that may start a module (``MODULE_START`` confirms it): the byte after its newline.
_MODULE_LINE = re.compile(rb"\n(?=[ \t]*(?:HloModule\s|module\b|//[ \t]*-----))")
# An HLO instruction line with a sharding (``%name = f32[8]{0} op(...), sharding={...}``), through its
# newline: a cut after it falls inside a computation, where nothing from the lines before is open (HLO
# text has no multi-line values), in a module that already holds a value (so a module header after the
# cut starts a new module, as it would in one pass).
_SHARDED_INSTRUCTION = re.compile(
    rb"\n[ \t]*(?:ROOT[ \t]+)?%[\w.\-]+ = (?:\(|[a-z][a-z0-9]*\[)[^\n]*?[ ,]sharding=\{[^\n]*\n"
)


@dataclass(frozen=True)
class Part:
    """Bytes ``[resume.offset, end)`` of a file (``resume`` None: from its start, sniffed as usual;
    ``end`` None: to its end). ``opens_inside``: it starts inside a module the part before began;
    ``ends_inside``: the part after starts inside this part's last module."""

    resume: Resume | None = None
    end: int | None = None
    opens_inside: bool = False
    ends_inside: bool = False

    @property
    def start(self) -> int:
        return self.resume.offset if self.resume is not None else 0


WHOLE = Part()


def split_file(f: BinaryIO, size: int, parts: int, min_part: int = PART_BYTES) -> list[Part]:
    """``f`` (``size`` bytes, seekable) in up to ``parts`` parts of about ``min_part`` bytes or more.
    Reads a window or two after each cut, and counts the newlines before the last cut."""
    kind = sniff(f.read(SNIFF_BYTES))
    n = min(parts, size // min_part)
    if kind.skipped or n < 2:
        return [WHOLE]
    cuts: list[tuple[int, bool]] = []  # (offset, inside a module)
    last = 0
    for k in range(1, n):
        at = max(k * size // n, last + 1)
        cut = _cut(f, at, size, min_part // 2, kind)
        if cut is not None and cut[0] - last >= min_part // 2 and size - cut[0] >= min_part // 2:
            cuts.append(cut)
            last = cut[0]
    if not cuts:
        return [WHOLE]
    starts = [0, *(c for c, _ in cuts)]
    inside = [False, *(i for _, i in cuts), False]  # inside[k]: part k starts inside a module
    lines = _lines_before(f, starts[1:])
    resumes = [Resume(0, 1, kind), *(Resume(s, line, kind) for s, line in zip(starts[1:], lines))]  # sniffed once
    ends = [*starts[1:], None]
    return [Part(resumes[k], ends[k], inside[k], inside[k + 1]) for k in range(len(starts))]


def _cut(f: BinaryIO, at: int, size: int, reach: int, kind: FileKind) -> tuple[int, bool] | None:
    """Where to cut at or after ``at``: a module start within ``reach``, else (in HLO) the line after
    the next sharded instruction; (offset, whether it is inside a module)."""
    module = _first_line(f, at, min(size, at + reach), _MODULE_LINE, MODULE_START)
    if module is not None:
        return module, False
    if kind.kind not in ("hlo", "mixed"):
        return None
    after = _first_line(f, at, min(size, at + reach), _SHARDED_INSTRUCTION)
    if after is None or after >= size:
        return None
    f.seek(after)
    return after, MODULE_START.match(f.read(_OVERLAP)) is None  # the line after may start a module


def _first_line(
    f: BinaryIO, at: int, stop: int, line: re.Pattern[bytes], confirm: re.Pattern[bytes] | None = None
) -> int | None:
    """Where the first match of ``line`` that starts a line in ``[at, stop)`` ends (and ``confirm``
    matches on the line there), searched a window at a time."""
    pos = at - 1  # from the byte before: a line starting at ``at`` counts
    while pos < stop:
        f.seek(pos)
        data = f.read(_WINDOW)
        for m in line.finditer(data):
            if pos + m.end() >= stop:
                return None
            line_end = data.find(b"\n", m.end())
            if confirm is None or confirm.match(data, m.end(), line_end if line_end >= 0 else len(data)):
                return pos + m.end()
        if len(data) < _WINDOW:
            return None
        pos += _WINDOW - _OVERLAP  # a line cut at the window's end is searched again in the next
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
