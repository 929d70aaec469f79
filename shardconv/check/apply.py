"""Apply: writes the byte-span edits the findings' fixes carry (taken from the scan that found them)
through the one atomic writer, or renders them as a unified diff with context that ``git apply``
takes. Nothing outside the edited spans changes."""

from __future__ import annotations

import os
from collections.abc import Sequence
from itertools import pairwise
from typing import BinaryIO

from shardconv.check.context import CheckOptions
from shardconv.check.diagnostics import CheckFinding, FileReport, SpanEdit
from shardconv.check.engine import check_file
from shardconv.core.errors import ShardingError
from shardconv.text.atomic import TargetChangedError, identity, write_atomic

COPY_CHUNK = 1 << 20
CONTEXT = 3


class FixError(ShardingError):
    """The file could not be rewritten (it changed since it was scanned, or the write failed)."""


def blockers(findings: Sequence[CheckFinding]) -> list[CheckFinding]:
    """Findings that keep --fix from moving a mesh: their file is left untouched."""
    return [f for f in findings if f.blocks_fix is not None and not f.expected]


def fixed_by(findings: Sequence[CheckFinding]) -> list[CheckFinding]:
    """The findings of one file whose fixes ``--fix`` applies: those carrying a fix that a lit test does
    not expect, none when any finding blocks a fix."""
    if blockers(findings):
        return []
    return [f for f in findings if f.fix is not None and not f.expected]


def edits_of(findings: Sequence[CheckFinding]) -> list[SpanEdit]:
    """Exactly the edits the findings' fixes carry (a later fix of the same span wins), none when any
    finding blocks a fix."""
    spans = {(e.start, e.end): e for f in fixed_by(findings) if f.fix is not None for e in f.fix.edits}
    return check_edits(list(spans.values()))


def plan_file(path: str, opts: CheckOptions) -> list[SpanEdit]:
    """Check ``path`` and return the edits its findings' fixes make (what ``--fix`` would change)."""
    report = check_file(path, opts)
    return edits_of(report.findings) if isinstance(report, FileReport) else []


def check_edits(edits: list[SpanEdit]) -> list[SpanEdit]:
    """Sorted, non-overlapping edits (an overlap means a scanner bug: refuse rather than corrupt)."""
    out = sorted(edits, key=lambda e: e.start)
    for a, b in pairwise(out):
        if b.start < a.end:
            raise FixError(f"overlapping edits at bytes {a.start}-{a.end} and {b.start}-{b.end}")
    return out


def apply(path: str, edits: list[SpanEdit]) -> None:
    """Rewrite ``path`` with ``edits`` through the one atomic writer (mode, owner and group kept; a
    symlink's target rewritten only inside the symlink's folder). Verifies every replaced span still
    holds the scanned bytes and that the path still names the file read; on any failure the original stays."""
    if not edits:
        return
    edits = check_edits(edits)
    refuse_symlink_out(path)
    st = os.stat(path)
    if not st.st_mode & 0o222:
        raise FixError(f"{path} is read-only; not rewritten (make it writable to let --fix change it)")

    def splice(dst: BinaryIO) -> None:
        with open(path, "rb") as src:
            cursor = 0
            for e in edits:
                _copy(src, dst, e.start - cursor)
                if src.read(e.end - e.start) != e.old:
                    raise FixError(f"{path} changed since it was scanned (line {e.line}); nothing written")
                dst.write(e.new)
                cursor = e.end
            _copy(src, dst, None)
            now = os.fstat(src.fileno())
            if identity(now) != identity(st) or now.st_size != src.tell():
                raise FixError(f"{path} changed while it was being rewritten; nothing written")

    try:
        write_atomic(path, splice, unchanged=st)
    except TargetChangedError:
        raise FixError(f"{path} changed (or was replaced) while it was being rewritten; nothing written") from None
    except OSError as exc:
        raise FixError(f"could not rewrite {os.path.realpath(path)}: {exc}") from exc


def refuse_symlink_out(path: str) -> None:
    """--fix never writes through a symlink to a file outside the symlink's own folder: a checkout's
    ``dumps/a.mlir -> /home/me/other/a.mlir`` must not let a fix reach that file (fix the target itself)."""
    if not os.path.islink(path):
        return
    target, folder = os.path.realpath(path), os.path.realpath(os.path.dirname(path) or ".")
    if os.path.commonpath([target, folder]) != folder:
        raise FixError(f"{path} is a symlink to {target}, outside its folder; not rewritten (fix the target itself)")


def _copy(src: BinaryIO, dst: BinaryIO, n: int | None) -> None:
    left = n
    while left is None or left > 0:
        block = src.read(COPY_CHUNK if left is None else min(COPY_CHUNK, left))
        if not block:
            return
        dst.write(block)
        if left is not None:
            left -= len(block)


def unified_diff(path: str, edits: list[SpanEdit], context: int = CONTEXT) -> str:
    """A unified diff of ``edits`` with ``context`` lines around each hunk (``git apply`` takes it),
    read from the file line by line: only the lines of the hunks are held."""
    edits = check_edits(edits)
    if not edits:
        return ""
    wanted: set[int] = set()
    for e in edits:
        wanted.update(range(max(1, e.line - context), e.line + context + 1))
    old_lines: dict[int, tuple[int, bytes]] = {}  # line -> (file offset, bytes incl. newline)
    with open(path, "rb") as f:
        offset = 0
        for no, raw in enumerate(f, 1):
            if no in wanted:
                old_lines[no] = (offset, raw)
            offset += len(raw)
            if no > max(wanted):
                break
    new_lines = _apply_to_lines(old_lines, edits)
    out = [f"--- a/{path}\n", f"+++ b/{path}\n"]
    for first, last in _hunks(sorted({e.line for e in edits}), context, max(old_lines)):
        body: list[str] = []
        minus: list[str] = []
        plus: list[str] = []
        for no in range(first, last + 1):
            old = old_lines[no][1]
            new = new_lines.get(no, old)
            if old != new:  # a run of changed lines: all its old lines, then all its new ones
                minus.append("-" + _text(old))
                plus.append("+" + _text(new))
                continue
            body += minus + plus + [" " + _text(old)]
            minus, plus = [], []
        body += minus + plus
        count = last - first + 1
        out.append(f"@@ -{first},{count} +{first},{count} @@\n")
        out.extend(body)
    return "".join(out)


def _text(line: bytes) -> str:
    s = line.decode("utf-8", "surrogateescape")
    return s if s.endswith("\n") else s + "\n\\ No newline at end of file\n"


def _apply_to_lines(lines: dict[int, tuple[int, bytes]], edits: list[SpanEdit]) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    by_line: dict[int, list[SpanEdit]] = {}
    for e in edits:
        by_line.setdefault(e.line, []).append(e)
    for no, group in by_line.items():
        base, old = lines[no]
        new = bytearray()
        cursor = 0
        for e in group:
            new += old[cursor : e.start - base] + e.new
            cursor = e.end - base
        new += old[cursor:]
        out[no] = bytes(new)
    return out


def _hunks(changed: list[int], context: int, last_line: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for line in changed:
        first, last = max(1, line - context), min(last_line, line + context)
        if out and first <= out[-1][1] + 1:
            out[-1] = (out[-1][0], last)
        else:
            out.append((first, last))
    return out


__all__ = [
    "FixError",
    "SpanEdit",
    "apply",
    "blockers",
    "check_edits",
    "edits_of",
    "fixed_by",
    "plan_file",
    "refuse_symlink_out",
    "unified_diff",
]
