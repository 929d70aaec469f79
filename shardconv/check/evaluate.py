"""Evaluate: the rules over one module's values, each result a ``CheckFinding`` at its value's first
place, under the per-rule cap (the first ``max_per_rule`` of each rule in a file are kept)."""

from __future__ import annotations

from shardconv.check.context import CheckOptions, build_context
from shardconv.scan.modules import ModuleValues
from shardconv.check.diagnostics import CheckFinding
from shardconv.check.registry import RULES, Rule
from shardconv.check.rules import RuleResult
from shardconv.core.positions import caret_excerpt


class RuleCap:
    """The per-rule cap over a file's modules as they come; ``dropped`` counts what it held back."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.seen: dict[str, int] = {}
        self.dropped = 0

    def admit(self, rule: str) -> bool:
        n = self.seen[rule] = self.seen.get(rule, 0) + 1
        if n > self.limit:
            self.dropped += 1
        return n <= self.limit


def module_findings(path: str, module: ModuleValues, opts: CheckOptions, cap: RuleCap) -> list[CheckFinding]:
    """The findings of one module, in the registry's order, as far as ``cap`` admits them (a rule
    the options ignore is not run)."""
    ctx = build_context(path, module, opts)
    return [
        _finding(path, rule, r, opts, module.expected_lines)
        for rule in RULES.values()
        if rule.check is not None and rule.id not in opts.ignore
        for r in rule.check(ctx)
        if cap.admit(rule.id)
    ]


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
        source=caret_excerpt(line_text, 1, col) if line_text else "",
        notes=notes,
        fix=r.fix,
        blocks_fix=r.blocks_fix,
        count=r.at.count,
        expected=site.line in expected,
        subject=site.value,
    )


__all__ = ["RuleCap", "module_findings", "position"]
