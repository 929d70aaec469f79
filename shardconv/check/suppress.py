"""Inline suppressions: a comment holding ``shardconv: ignore[rule, ...]`` (``//`` in MLIR, ``/* */`` in
HLO text) silences those rules on its own line and the line below. The native scan finds the markers in
the same pass as the values, so no second pass is needed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY
from typing import TYPE_CHECKING

from shardconv.check.diagnostics import CheckFinding
from shardconv.check.ids import RuleId
from shardconv.check.registry import RULES
from shardconv.core.errors import did_you_mean
from shardconv.core.positions import caret_excerpt
from shardconv.core.records import record
from shardconv.scan.table import table

if TYPE_CHECKING:
    from shardconv.scan.table import Scan

@record
class Suppression:
    _: KW_ONLY
    line: int
    col: int
    rules: tuple[str, ...]
    source: str  # the comment's line (as far as it was read)
    source_col: int  # the marker's column in ``source``


def suppressions_of(scan: Scan) -> list[Suppression]:
    """The suppression comments the scan found, in file order."""
    return [
        Suppression(
            line=m.line,
            col=m.col,
            rules=_rules(m.inside),
            source=m.source.decode("utf-8", "backslashreplace"),
            source_col=m.source_col,
        )
        for m in table(scan).markers()
    ]


def _rules(inside: bytes) -> tuple[str, ...]:
    return tuple(r.strip() for r in inside.decode("utf-8", "replace").split(",") if r.strip())


def apply_suppressions(
    findings: Sequence[CheckFinding], found: Sequence[Suppression], path: str, *, report_unused: bool
) -> list[CheckFinding]:
    """The findings no suppression silences, plus (with ``report_unused``) an ``unused-suppression``
    finding for each rule named in a suppression that silenced nothing."""
    if not found:
        return list(findings)
    by_line: dict[int, list[tuple[int, str]]] = {}
    for i, s in enumerate(found):
        for r in s.rules:
            by_line.setdefault(s.line, []).append((i, r))
            by_line.setdefault(s.line + 1, []).append((i, r))
    used: set[tuple[int, str]] = set()
    kept = []
    for f in findings:
        hits = [(i, r) for i, r in by_line.get(f.line, ()) if r == f.rule]
        used.update(hits)
        if not hits:
            kept.append(f)
    if report_unused:
        kept.extend(u for i, s in enumerate(found) if (u := _unused(s, i, used, path)) is not None)
    return sorted(kept, key=lambda f: (f.line, f.col, f.rule))


def _unused(s: Suppression, i: int, used: set[tuple[int, str]], path: str) -> CheckFinding | None:
    idle = [r for r in s.rules if (i, r) not in used]
    if not idle:
        return None

    notes = tuple(
        f"{r!r} is not a rule" + "".join(f" ({t.description})" for t in did_you_mean(r, RULES, spelled="{}"))
        for r in idle
        if r not in RULES
    )
    return RULES[RuleId.UNUSED_SUPPRESSION].finding(
        path,
        s.line,
        s.col,
        f"suppression of {', '.join(idle)} silences nothing here",
        source=caret_excerpt(s.source, 1, s.source_col),
        notes=notes,
    )


__all__ = ["Suppression", "apply_suppressions", "suppressions_of"]
