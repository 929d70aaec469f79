"""Finding and checking shardings in IR dumps (HLO text, MLIR): scanner, checks, fixes, reports."""

from .escapes import Encoding
from .occurrences import FileKind, Kind, Occurrence, Shape
from .scanner import ScanOptions, scan_path, scan_stream

__all__ = ["Encoding", "FileKind", "Kind", "Occurrence", "ScanOptions", "Shape", "scan_path", "scan_stream"]
