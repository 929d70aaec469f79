"""Inputs: a path as the command line names it (``-`` is stdin) scanned by the native core."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from shardconv.scan.native import scan_path, scan_stream

if TYPE_CHECKING:
    from shardconv._native import Scan


def scan_input(path: str, *, names: bool = False) -> Scan:
    """Scan ``path``, or standard input for ``-``; OSError when it cannot be read."""
    if path == "-":
        return scan_stream(sys.stdin.buffer, names=names)
    return scan_path(path, names=names)


__all__ = ["scan_input"]
