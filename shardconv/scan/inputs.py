"""Inputs: a path as the command line names it (``-`` is stdin) scanned by the native core."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from shardconv.scan.native import EVERY_SITE, ScanOptions, same_bytes, scan_path, scan_stream, sniff, sniff_bytes
from shardconv.scan.sites import FileKind
from shardconv.text.files import not_regular_error, refuse_special

if TYPE_CHECKING:
    from shardconv._native import Scan


def scan_input(path: str, options: ScanOptions = EVERY_SITE) -> Scan:
    """Scan ``path``, or standard input for ``-``; OSError when it cannot be read (a FIFO or a device
    named as a path too: reading it would block)."""
    if path == "-":
        return scan_stream(sys.stdin.buffer, options)
    refuse_special([path], not_regular_error)
    return scan_path(path, options)


@contextmanager
def stdin_copy() -> Iterator[str]:
    """Standard input copied whole to a temporary file, removed after: a reader that reads lines of its
    input again by their bytes (an op's regions, its results' names) reads stdin as it reads a file."""
    import shutil
    import tempfile

    fd, copy = tempfile.mkstemp(prefix="shardconv-stdin-", suffix=".mlir")
    try:
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
        yield copy
    finally:
        os.unlink(copy)


def sniff_path(path: str) -> FileKind:
    """What the head of the file at ``path`` is (the one sniff the scan uses), reading only its first
    ``SNIFF_BYTES``: a binary or huge non-IR file is known before anyone reads it whole."""
    with open(path, "rb") as f:
        head = f.read(sniff_bytes())
    return FileKind(*sniff(head))


_HLO_PROTO = ".hlo.pb"  # XLA's --xla_dump_hlo_as_proto: a binary HloModuleProto


def skip_reason(path: str, reason: str) -> str:
    """Why the file at ``path`` is not read (the sniffer's ``reason``); for an HLO module proto XLA dumped,
    what it is and which flag writes the text beside it."""
    if path.endswith(_HLO_PROTO) and reason.startswith("binary file"):
        return "an HLO module proto (--xla_dump_hlo_as_proto): shardconv reads the text --xla_dump_hlo_as_text writes"
    return reason


def same_contents(a: str, b: str) -> bool:
    """Whether two regular files hold the same bytes (an XLA pass that changed nothing dumps the module
    it was given again); False for stdin and for a file that cannot be read. The core compares them in
    one call: a read-ahead thread making a dozen calls in Python here would wait for the interpreter's
    lock after each, while the dump before is followed."""
    return a != "-" and b != "-" and same_bytes(a, b)


__all__ = ["same_contents", "scan_input", "skip_reason", "sniff_path", "stdin_copy"]
