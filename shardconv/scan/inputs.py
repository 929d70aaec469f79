"""Inputs: a path as the command line names it (``-`` is stdin) scanned by the native core."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from shardconv.scan.native import same_bytes, scan_path, scan_stream, sniff, sniff_bytes
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


__all__ = ["same_contents", "scan_input", "skip_reason", "sniff_path"]
