"""What a check run produces: the ``CheckFinding`` each violation gives (under a rule of
``registry.RULES``), the fix it may carry, and per-file reports."""

from __future__ import annotations

from dataclasses import KW_ONLY

from shardconv.check.ids import RuleId, Severity
from shardconv.core.records import record


@record
class Rewrite:
    """What a rule asks: every site of ``module`` whose kind and decoded value are ``kind`` / ``old``
    holds ``new`` instead (the engine turns it into byte edits from the scan that found them)."""

    module: int
    kind: str
    old: bytes
    new: bytes


@record
class SpanEdit:
    """Replace bytes ``start:end`` of the file (``old``) with ``new``; ``line`` is where they start."""

    _: KW_ONLY
    start: int
    end: int
    old: bytes
    new: bytes
    line: int


@record
class Fix:
    """What ``--fix`` does for one finding: every edit, or none of them. ``edits`` are byte spans of
    the scanned file, filled in from the same scan that found the finding."""

    description: str
    rewrites: tuple[Rewrite, ...]
    edits: tuple[SpanEdit, ...] = ()
    # ruff's applicability: safe keeps what every device holds as the file states it; unsafe rests on
    # something the file cannot show (the --mesh a user gave), so an editor offers it but never prefers it
    safe: bool = True


@record
class CheckFinding:
    """One problem at one place (the first of ``count`` identical ones). ``source`` is the caret excerpt."""

    _: KW_ONLY
    rule: RuleId
    severity: Severity
    path: str
    line: int
    col: int
    message: str
    end_line: int | None = None
    end_col: int | None = None
    source: str = ""
    notes: tuple[str, ...] = ()
    fix: Fix | None = None
    blocks_fix: str | None = None  # the mesh (``@name``) this finding keeps --fix from moving
    count: int = 1
    expected: bool = False  # inside a lit test that expects an error here
    subject: str | None = None  # the value it is about: "%param.1", "@mesh", "module"

    @property
    def fails(self) -> bool:
        return self.severity is Severity.ERROR and not self.expected


@record
class Skipped:
    """A path that was not checked, and why (not IR, binary, excluded)."""

    path: str
    reason: str


@record
class FileReport:
    _: KW_ONLY
    path: str
    kind: str
    findings: tuple[CheckFinding, ...] = ()
    values: int = 0  # sharding values scanned
    distinct: int = 0  # distinct (value, tensor type) pairs checked
    dropped: int = 0  # findings beyond the per-rule cap (counted, not stored)


__all__ = ["CheckFinding", "FileReport", "Fix", "Rewrite", "Skipped", "SpanEdit"]
