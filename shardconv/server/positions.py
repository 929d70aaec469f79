"""The one mapping between the scan's byte positions and LSP positions (0-based lines, columns in the
encoding the session agreed on: UTF-16 unless the editor offers another): findings, fixes, hovers and
symbols all go through it, so they count columns the same way."""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right

_NEWLINE = re.compile(b"\n")


class LineIndex:
    """Where each line of a document's bytes starts; columns are converted one line at a time, so a
    50 MB document costs one pass to find its newlines and nothing per character until asked."""

    def __init__(self, data: bytes, encoding: str = "utf-16") -> None:
        self.data = data
        self.encoding = encoding
        self.starts = array("q", [0, *(m.end() for m in _NEWLINE.finditer(data))])

    @property
    def lines(self) -> int:
        return len(self.starts)

    def line_bytes(self, line: int) -> bytes:
        """Line ``line`` (0-based) without its newline; empty past the end."""
        if not 0 <= line < len(self.starts):
            return b""
        start = self.starts[line]
        end = self.starts[line + 1] - 1 if line + 1 < len(self.starts) else len(self.data)
        return self.data[start:end]

    def position(self, offset: int) -> tuple[int, int]:
        """(line, UTF-16 column) of byte ``offset``."""
        offset = max(0, min(offset, len(self.data)))
        line = bisect_right(self.starts, offset) - 1
        return line, units(self.data[self.starts[line] : offset], self.encoding)

    def at(self, line: int, col: int) -> tuple[int, int]:
        """(line, UTF-16 column) of the scan's 1-based ``line`` and 1-based byte column ``col``."""
        row = line - 1
        if not 0 <= row < len(self.starts):
            return max(row, 0), 0
        return row, units(self.line_bytes(row)[: max(col - 1, 0)], self.encoding)

    def offset(self, line: int, character: int) -> int:
        """The byte offset of an LSP position (a column inside a character, or past the line's end, is
        taken as the nearest character boundary before it)."""
        if line >= len(self.starts):
            return len(self.data)
        data = self.line_bytes(line)
        if self.encoding == "utf-8" or data.isascii():
            cut = min(character, len(data))
            while 0 < cut < len(data) and data[cut] & 0xC0 == 0x80:  # inside a UTF-8 sequence
                cut -= 1
            return self.starts[line] + cut
        text = data.decode("utf-8", "surrogateescape")
        count = 0
        for i, ch in enumerate(text):
            count += 2 if self.encoding == "utf-16" and ord(ch) > 0xFFFF else 1
            if count > character:
                return self.starts[line] + len(text[:i].encode("utf-8", "surrogateescape"))
        return self.starts[line] + len(data)


def units(data: bytes, encoding: str = "utf-16") -> int:
    """How many code units of ``encoding`` (``utf-8``, ``utf-16``, ``utf-32``) the UTF-8 ``data`` takes
    (a byte that is not UTF-8 counts as one character)."""
    if encoding == "utf-8" or data.isascii():
        return len(data)
    text = data.decode("utf-8", "surrogateescape")
    if encoding == "utf-32":
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


__all__ = ["LineIndex", "units"]
