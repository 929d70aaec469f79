"""Inline suppressions: a comment holding ``shardconv: ignore[rule, ...]`` (``//`` in MLIR, ``/* */`` in
HLO text) silences those rules on its own line and the line below. The markers are collected while the
engine reads the file (a wrapper around its stream, ``bytes.find`` per chunk), so no second pass is needed."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import BinaryIO

from shardconv.check.suppress import Suppression


MARKER = b"shardconv:"
_SUPPRESSION = re.compile(rb"shardconv:[ \t]*ignore\[([^\]\n]{0,400})\]")
_TAIL = 512  # bytes of an unfinished last line kept for the next chunk: longer than any marker


class SuppressionScanner:
    """A read-only stream over ``inner`` that records the suppressions in what passes through it and
    reports how many bytes it has read (for a progress bar)."""

    def __init__(self, inner: BinaryIO, on_read: Callable[[int], None] | None = None, line: int = 1) -> None:
        self.inner = inner
        self.on_read = on_read
        self.found: list[Suppression] = []
        self._pending = b""  # the unfinished last line (its tail only, when it is long)
        self._line = line  # line number at _pending[0] (``line``: where the stream starts in its file)
        self._col = 0  # column of _pending[0] in its line (non-zero once a long line's head was dropped)
        self._comment = False  # the dropped head of the current line opened a comment

    def read(self, n: int = -1) -> bytes:
        data = self.inner.read(n)
        if self.on_read is not None and data:
            self.on_read(len(data))
        self._scan(self._pending + data if self._pending else data, final=not data)
        return data

    def _scan(self, buf: bytes, final: bool) -> None:
        last_nl = buf.rfind(b"\n")
        cut = len(buf) if final else max(last_nl + 1, len(buf) - _TAIL)
        if buf.find(MARKER) >= 0:
            line, at = self._line, 0
            for m in _SUPPRESSION.finditer(buf):
                if m.start() >= cut:
                    break
                line += buf.count(b"\n", at, m.start())
                at = m.start()
                start = buf.rfind(b"\n", 0, at) + 1
                head = buf[start:at]
                if b"//" in head or b"/*" in head or (start == 0 and self._comment):
                    end = buf.find(b"\n", at)
                    rules = tuple(r.strip() for r in m.group(1).decode("utf-8", "replace").split(",") if r.strip())
                    text = buf[start : end if end >= 0 else len(buf)].decode("utf-8", "backslashreplace")
                    col = at - start + 1 + (self._col if start == 0 else 0)
                    self.found.append(
                        Suppression(line=line, col=col, rules=rules, source=text, source_col=at - start + 1)
                    )
        nl = buf.rfind(b"\n", 0, cut)
        if nl >= 0:
            self._line += buf.count(b"\n", 0, cut)
            self._col, self._comment = cut - nl - 1, False
        else:
            self._col += cut
        head = buf[nl + 1 : cut]
        self._comment = self._comment or b"//" in head or b"/*" in head
        self._pending = buf[cut:]


__all__ = ["MARKER", "Suppression", "SuppressionScanner"]
