"""Drives a check over paths: walks directories, applies --include/--exclude, scans and checks each
file in a streaming pass, and plans/applies fixes. The I/O edge of the dumps package."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from shardconv.check.checker import CheckOptions, FileChecker
from shardconv.check.findings import FileReport, Finding, Skipped
from shardconv.check.fixer import Edit, apply, plan
from shardconv.check.scanner import ScanOptions, open_input, scan_stream

DEFAULT_INCLUDE = ("*.mlir", "*.hlo", "*.txt", "*.log", "*.dump")
SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache"})


@dataclass(frozen=True)
class Selection:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def excluded(self, path: str) -> bool:
        return any(_match(path, g) for g in self.exclude)

    def included(self, path: str) -> bool:
        return any(_match(path, g) for g in (self.include or DEFAULT_INCLUDE))


def _match(path: str, glob: str) -> bool:
    norm = path.replace(os.sep, "/")
    return fnmatch.fnmatch(norm, glob) or fnmatch.fnmatch(os.path.basename(norm), glob) or fnmatch.fnmatch(norm, "*/" + glob)


def iter_files(paths: Sequence[str], sel: Selection) -> Iterator[str | Skipped]:
    """Files to check, in a stable order: named files always (unless excluded), directories walked
    recursively for files matching --include (default: dump extensions)."""
    for p in paths:
        if p == "-":
            yield p
        elif os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not sel.excluded(os.path.join(root, d)))
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if sel.included(full) and not sel.excluded(full):
                        yield full
        elif sel.excluded(p):
            yield Skipped(p, "excluded")
        else:
            yield p


def check_file(path: str, opts: CheckOptions, scan: ScanOptions = ScanOptions()) -> FileReport | Skipped:
    """Scan and check one file (``-`` is stdin) in one streaming pass."""
    try:
        with open_input(path) as f:
            checker = FileChecker(path, "", opts)
            kind, occs = scan_stream(f, path, scan, gate=checker.gate, vouch=checker.vouch)
            if kind.skipped:
                return Skipped(path, kind.reason)
            checker.kind = kind.kind
            return checker.add_all(occs)
    except OSError as e:
        reason = e.strerror or str(e)
        return FileReport(path, "unreadable", (Finding("io-error", "error", path, 1, 1, f"cannot read {path}: {reason}"),))


def plan_file(path: str, opts: CheckOptions, scan: ScanOptions = ScanOptions()) -> list[Edit]:
    """The edits ``--fix`` would make to ``path`` (a second streaming pass)."""
    with open_input(path) as f:
        kind, occs = scan_stream(f, path, scan)
        return [] if kind.skipped else list(plan(occs, opts.mesh))


def fix_file(path: str, opts: CheckOptions) -> list[Edit]:
    """Plan and atomically apply the fixes for ``path``; returns what changed."""
    edits = plan_file(path, opts)
    apply(path, edits)
    return edits


__all__ = ["DEFAULT_INCLUDE", "Selection", "check_file", "fix_file", "iter_files", "plan_file"]
