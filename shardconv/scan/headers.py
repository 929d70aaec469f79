"""Dump headers: the lines a scan cuts a log's dumps on (a pass log's ``// -----// IR Dump ...`` line, an
``HloModule`` or ``module`` line, a ``// -----`` split), each read once here for what it says: the pass
and when the dump was taken, or the module it names."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shardconv.core.records import record
from shardconv.scan.sites import SiteKind
from shardconv.scan.table import table

if TYPE_CHECKING:
    from shardconv._native import Scan

# ``// -----// IR Dump After AnalyzeMeshPass Failed (analyze-mesh) ('builtin.module' operation: @m) //----- //``
# (older MLIR) and ``// -----// IR Dump Before CanonicalizerPass: canonicalize{...} //----- //`` (newer).
_MLIR_HEADER = re.compile(r"//\s*-----//\s*IR Dump (?P<when>Before|After) (?P<pass>[^\s:(]+)(?P<failed> Failed)?")
_MLIR_OPERATION = re.compile(r"\('(?P<op>[^']*)' operation(?:: (?P<name>[^)]*))?\)")
_MLIR_MODULE = re.compile(r"^\s*module\b(?:\s+@(?P<name>[\w$.\-]+|\"[^\"]*\"))?")
_HLO_MODULE = re.compile(r"^\s*HloModule\s+(?P<name>[^\s,]+)")


@record
class PassLine:
    """What a pass log's ``// -----// IR Dump ...`` line says: the pass, whether the dump is from before
    or after it, whether it failed, and the module the line names (when it dumps a ``builtin.module``)."""

    pass_name: str
    when: str  # "before" | "after"
    failed: bool
    module: str | None


@record
class Header:
    """A module header site (``HloModule``, ``module``, ``// -----``): its index in the scan, its line
    and that line's text."""

    index: int
    line: int
    text: bytes

    @property
    def said(self) -> str:
        return self.text.decode("utf-8", "replace")


def pass_line(text: str) -> PassLine | None:
    """What the ``// -----// IR Dump ...`` line ``text`` says; None for any other line."""
    m = _MLIR_HEADER.search(text)
    if m is None:
        return None
    op = _MLIR_OPERATION.search(text, m.end())
    on_module = op is not None and op.group("op") == "builtin.module"  # else the module line names it
    op_name = (op.group("name") or "").strip().lstrip("@").strip('"') or None if op and on_module else None
    return PassLine(m.group("pass"), m.group("when").lower(), m.group("failed") is not None, op_name)


def module_name(text: str) -> str | None:
    """The module an ``HloModule`` or ``module`` line names (None for another line, or a nameless module)."""
    m = _HLO_MODULE.match(text) or _MLIR_MODULE.match(text)
    if m is None:
        return None
    return (m.group("name") or "").strip('"') or None


def module_headers(scan: Scan, lines: int = 0) -> list[Header]:
    """The scan's module header sites, read off its columns (``lines``: before the scanned piece)."""
    t = table(scan)
    line = t.col.line
    return [Header(i, line[i] + lines, t.kept_line(i)) for i in t.sites_holding(t.of_kind((SiteKind.MODULE_START,)))]


__all__ = ["Header", "PassLine", "module_headers", "module_name", "pass_line"]
