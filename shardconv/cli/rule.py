"""``shardconv rule``: what a check rule catches, why it matters, an example that fails and its fix."""

from __future__ import annotations

import click

from shardconv.check.registry import RULES
from shardconv.check.rule_docs import explain
from shardconv.cli.check import complete_rules
from shardconv.cli.options import text_or_json
from shardconv.core.errors import did_you_mean, suggestion_lines


@click.command(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="\b\nExamples:\n  shardconv rule distorted-mesh\n  shardconv rule --all > rules.md\n"
    "  shardconv rule --format json",
)
@click.argument("rule", required=False, metavar="RULE", shell_complete=complete_rules)
@click.option("--all", "show_all", is_flag=True, help="Explain every rule.")
@text_or_json("text (Markdown) for people, json for scripts")
def rule(rule: str | None, show_all: bool, fmt: str) -> None:
    """Explain RULE (or, with no RULE, list the rules): what it catches, why it matters, an example that
    fails and its fix."""
    if rule is not None and rule not in RULES:
        tips = suggestion_lines(did_you_mean(rule, RULES, spelled="{}"))
        raise click.UsageError(
            f"unknown rule {rule!r}" + (f"\n{tips}" if tips else "") + f"\nrules: {', '.join(RULES)}"
        )
    chosen = list(RULES) if show_all else [rule] if rule else []
    if fmt == "json":
        from shardconv.check.emit import rule_uri
        from shardconv.ui.jsonout import document, dumps

        rows = [
            {
                "id": r,
                "severity": RULES[r].severity,
                "summary": RULES[r].summary,
                "why": RULES[r].why,
                "fails": RULES[r].bad,
                "fixed": RULES[r].good,
                "args": list(RULES[r].args),
                "fix": RULES[r].how,
                "help_uri": rule_uri(r),
            }
            for r in (chosen or RULES)
        ]
        click.echo(dumps(document("rule", rules=rows)))
        return
    if not chosen:
        width = max(map(len, RULES))
        for r in RULES.values():
            click.echo(f"{r.id:<{width}}  {r.severity:<7}  {r.summary}")
        return
    click.echo("\n".join(explain(r) for r in chosen), nl=False)
