"""A rule's documentation as Markdown: what ``shardconv rule RULE`` prints and docs/rules.md holds
(generated from ``registry.RULES``; a test runs every example through the checker)."""

from __future__ import annotations

from shardconv.check.registry import RULES


def explain(rule: str) -> str:
    """The text ``shardconv rule RULE`` prints (Markdown, as in docs/rules.md)."""
    r = RULES[rule]
    flags = (" " + " ".join(r.args)) if r.args else ""
    out = [f"## {r.id}", "", f"**{r.severity}**: {r.summary}.", "", f"Why it matters: {r.why}", ""]
    if r.bad:
        out += [f"Fails (`shardconv check{flags}`):", "", "```", r.bad.rstrip("\n"), "```", ""]
        out += ["Fixed:", "", "```", r.good.rstrip("\n"), "```", ""]
    out += [f"Fix: {r.how}", ""]
    if r.stages:
        out += [f"Checks: {r.stages}.", ""]
    return "\n".join(out)


def rules_markdown() -> str:
    """docs/rules.md: every rule, in the registry's order."""
    head = [
        "# shardconv check rules",
        "",
        "Generated from `shardconv/check/registry.py` (`shardconv rule --all` prints the same); a test runs",
        "every example below through the checker. Silence a rule on one line with a comment holding",
        "`shardconv: ignore[RULE]` on that line or the line above, or everywhere with `ignore` in the config.",
        "",
    ]
    return "\n".join(head) + "\n" + "\n".join(explain(r) for r in RULES)


__all__ = ["explain", "rules_markdown"]
