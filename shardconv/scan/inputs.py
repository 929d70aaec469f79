"""Inputs: a path as the command line names it (``-`` is stdin) scanned by the native core."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from shardconv.scan.native import scan_path, scan_stream, sniff, sniff_bytes
from shardconv.scan.sites import FileKind

if TYPE_CHECKING:
    from shardconv._native import Scan


def scan_input(path: str, *, names: bool = False, every_site: bool = True) -> Scan:
    """Scan ``path``, or standard input for ``-``; OSError when it cannot be read."""
    if path == "-":
        return scan_stream(sys.stdin.buffer, names=names, every_site=every_site)
    return scan_path(path, names=names, every_site=every_site)


def sniff_path(path: str) -> FileKind:
    """What the head of the file at ``path`` is (the one sniff the scan uses), reading only its first
    ``SNIFF_BYTES``: a binary or huge non-IR file is known before anyone reads it whole."""
    with open(path, "rb") as f:
        head = f.read(sniff_bytes())
    return FileKind(*sniff(head))


_COMPARE_BYTES = 1 << 20
HELD_CONTENTS = 8 << 20  # a file up to this size is held whole, for the comparison with the file after it


class SameContents:
    """Whether two regular files hold the same bytes (an XLA pass that changed nothing dumps the module
    it was given again), asked of files in a chain, each against the one before it: the last file read
    whole is held, so a run of equal step files is read once each. False when either cannot be read."""

    def __init__(self) -> None:
        self._held: tuple[str, bytes] | None = None

    def __call__(self, a: str, b: str) -> bool:
        try:
            if a == "-" or b == "-" or (size := os.path.getsize(a)) != os.path.getsize(b):
                return False
            if size > HELD_CONTENTS:
                return _compared(a, b)
            was = self._held[1] if self._held is not None and self._held[0] == a else _whole(a)
            self._held = (b, _whole(b))
            return was == self._held[1]
        except OSError:
            return False


def _whole(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _compared(a: str, b: str) -> bool:
    """Two files of one size compared block by block."""
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while block := fa.read(_COMPARE_BYTES):
            if block != fb.read(_COMPARE_BYTES):
                return False
        return not fb.read(1)


__all__ = ["HELD_CONTENTS", "SameContents", "scan_input", "sniff_path"]
