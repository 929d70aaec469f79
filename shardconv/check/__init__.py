"""Finding and checking shardings in IR dumps (HLO text, MLIR): scanner, checks, fixes, reports."""

from shardconv.check.escapes import Encoding
from shardconv.check.occurrences import FileKind, Kind, Occurrence, Shape
from shardconv.check.scanner import ScanOptions, scan_path, scan_stream

__all__ = ["Encoding", "FileKind", "Kind", "Occurrence", "ScanOptions", "Shape", "scan_path", "scan_stream"]
