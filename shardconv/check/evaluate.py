"""Evaluate: the rules over one module's values, each result a ``CheckFinding`` at its value's first
place, under the per-rule cap (the first ``max_per_rule`` of each rule in a file are kept)."""

from __future__ import annotations

from collections.abc import Mapping

from shardconv.check.context import CheckOptions, build_context
from shardconv.check.diagnostics import CheckFinding
from shardconv.check.registry import RULES, Rule
from shardconv.check.rules import RuleResult
from shardconv.check.stages import Stage
from shardconv.core.positions import caret_excerpt
from shardconv.scan.modules import ModuleValues


def module_findings(
    path: str, module: ModuleValues, opts: CheckOptions, stage: Stage, earlier: Mapping[str, int] | None = None
) -> tuple[list[CheckFinding], dict[str, int]]:
    """The findings of one module of the file ``path`` (whose name says ``stage``), in the registry's
    order, within the per-rule cap, and how many results each rule has had in the file so far
    (``earlier``: the counts of its earlier modules). A rule the options ignore is not run; a result
    beyond the cap is counted and never built."""
    ctx = build_context(path, module, opts, stage)
    counts = dict(earlier or {})
    found: list[CheckFinding] = []
    for rule in RULES.values():
        if rule.check is None or rule.id in opts.ignore:
            continue
        for r in rule.check(ctx):
            counts[rule.id] = counts.get(rule.id, 0) + 1
            if within_cap(counts[rule.id], opts.max_per_rule):
                found.append(_finding(path, rule, r, opts, module.expected_lines))
    return found, counts


def within_cap(n: int, limit: int) -> bool:
    """Whether a rule's ``n``-th result in a file is reported (the first ``limit`` are)."""
    return n <= limit


def dropped(counts: Mapping[str, int], limit: int) -> int:
    """How many results the cap held back, from the per-rule counts of a file."""
    return sum(n - limit for n in counts.values() if not within_cap(n, limit))


def position(f: CheckFinding) -> tuple[int, int, str]:
    """The order findings are reported in."""
    return f.line, f.col, f.rule


def _finding(path: str, rule: Rule, r: RuleResult, opts: CheckOptions, expected: frozenset[int]) -> CheckFinding:
    site = r.at.site
    col = r.col if r.col is not None else site.col
    line_text = site.line_text.decode("utf-8", "replace")
    notes = r.notes + ((f"{r.at.count} places hold this value; the first is shown",) if r.at.count > 1 else ())
    return rule.finding(
        path,
        site.line,
        col,
        r.message,
        warn_only=opts.warn_only,
        end_line=site.end_line,
        end_col=site.end_col,
        source=caret_excerpt(line_text, 1, col - site.line_cut) if line_text else "",
        notes=notes,
        fix=r.fix,
        blocks_fix=r.blocks_fix,
        count=r.at.count,
        expected=site.line in expected,
        subject=site.value,
    )


__all__ = ["dropped", "module_findings", "position", "within_cap"]
