"""Emit: renders check results as compiler-style text (+ a rich summary table), GitHub annotations,
JSON and SARIF 2.1.0. Pure functions from reports to strings, except ``print_text`` which owns the console."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any

from shardconv.check.apply import fixed_by
from shardconv.check.diagnostics import CheckFinding, FileReport, Skipped
from shardconv.check.ids import Severity
from shardconv.check.registry import RULES
from shardconv.core.version import VERSION as __version__
from shardconv.ui.console import is_tty, make_console, use_color

if TYPE_CHECKING:
    from shardconv.check.diagnostics import SpanEdit

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/shardconv/shardconv"


def label(f: CheckFinding) -> str:
    return f"expected {f.severity.value}" if f.expected else f.severity.value


Styled = tuple[tuple[str, str], ...]  # one line as (text, rich style) pieces; "" is unstyled
_SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow"}


def head(f: CheckFinding) -> Styled:
    """A finding's head line, ``file:line:col: error: message [rule]``: the one place it is written (the
    plain text joins the pieces, the terminal styles them)."""
    return (
        (f"{f.path}:{f.line}:{f.col}: ", "bold"),
        (f"{label(f)}:", "cyan" if f.expected else _SEVERITY_STYLE.get(f.severity, "")),
        (f" {f.message} ", ""),
        (f"[{f.rule}]", "dim"),
    )


def plain(line: Styled) -> str:
    return "".join(text for text, _ in line)


def format_concise(reports: Sequence[FileReport], skipped: Sequence[Skipped]) -> str:
    """One line per finding (``--format concise``): ``file:line:col: error: message [rule]``."""
    return "".join(plain(head(f)) + "\n" for r in reports for f in r.findings)


def fixable(reports: Sequence[FileReport]) -> list[CheckFinding]:
    """The findings ``--fix`` would fix (``apply.fixed_by`` of each file)."""
    return [f for r in reports for f in fixed_by(r.findings)]


def format_statistics(reports: Sequence[FileReport], skipped: Sequence[Skipped]) -> str:
    """``--statistics``: per rule, how many findings and how many --fix fixes, most frequent first."""
    counts = Counter(f.rule for r in reports for f in r.findings if not f.expected)
    fixes = Counter(f.rule for f in fixable(reports))
    width = max((len(str(n)) for n in counts.values()), default=1)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return "".join(
        f"{n:>{width}}  {rule:<24} {'[*] ' if fixes[rule] else '    '}{RULES[rule].summary}\n" for rule, n in rows
    )


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def closing_line(reports: Sequence[FileReport], skipped: Sequence[Skipped]) -> str:
    """``1 file(s) checked, ...: 3 errors, 1 warning; 2 fixable with --fix`` (or ``clean``)."""
    sm = summary(reports, skipped)
    parts = [_count(sm[k], k[:-1]) for k in ("errors", "warnings") if sm[k]]
    if sm["expected"]:
        parts.append(f"{sm['expected']} expected")
    verdict = ", ".join(parts) or "clean"
    if sm["errors"] == 0 and parts:
        verdict = "clean (" + verdict + ")"
    n_fix = len(fixable(reports))
    if n_fix:
        verdict += f"; {n_fix} fixable with --fix"
    n_skip = sm["files_skipped"]
    # (a skipped file is never among the clean: the line says what it was and where to see it)
    skipped_part = f"{n_skip} skipped, not checked (-v says why)" if n_skip else "0 skipped"
    return (
        f"{sm['files_checked']} file(s) checked, {skipped_part}, "
        f"{sm['occurrences']} sharding value(s) scanned ({sm['distinct']} distinct): {verdict}"
    )


def summary(reports: Sequence[FileReport], skipped: Sequence[Skipped]) -> dict[str, Any]:
    findings = [f for r in reports for f in r.findings]
    by_rule: dict[str, Counter[str]] = {}
    for f in findings:
        by_rule.setdefault(f.rule.value, Counter())["expected" if f.expected else f.severity.value] += 1
    return {
        "files_checked": len(reports),
        "files_skipped": len(skipped),
        "occurrences": sum(r.values for r in reports),
        "distinct": sum(r.distinct for r in reports),
        "errors": sum(1 for f in findings if f.fails),
        "warnings": sum(1 for f in findings if f.severity is Severity.WARNING and not f.expected),
        "notes": sum(1 for f in findings if f.severity is Severity.NOTE and not f.expected),
        "expected": sum(1 for f in findings if f.expected),
        "dropped": sum(r.dropped for r in reports),
        "by_rule": {k: dict(v) for k, v in sorted(by_rule.items())},
    }


def print_text(
    reports: Sequence[FileReport],
    skipped: Sequence[Skipped],
    stream: IO[str],
    *,
    verbose: bool = False,
    quiet: bool = False,
) -> None:
    """Findings (coloured only on a TTY without NO_COLOR), skipped files (with ``verbose``), a summary
    table and the closing line (not with ``quiet``). On a pipe the same text is written without rich,
    whose import would be half of a pre-commit run's start-up."""
    if not (use_color(stream) or is_tty(stream)):
        lines = plain_lines(reports, skipped, verbose=verbose, quiet=quiet)
        stream.write("".join(line.rstrip() + "\n" for line in lines))
        return

    print_rich(reports, skipped, make_console(stream), verbose=verbose, quiet=quiet)


def print_rich(
    reports: Sequence[FileReport], skipped: Sequence[Skipped], con: Any, *, verbose: bool = False, quiet: bool = False
) -> None:
    """``print_text`` on a terminal: the same lines through a rich Console, styled."""
    from rich.text import Text

    for line in finding_lines(reports, skipped, verbose=verbose):
        text = Text(line[0][0], style=line[0][1]) if len(line) == 1 else Text.assemble(*line)
        con.print(text, soft_wrap=True)
    if not quiet:
        con.print(summary_table(reports, skipped))
        con.print(closing_line(reports, skipped), soft_wrap=True, markup=False, highlight=False)


def plain_lines(
    reports: Sequence[FileReport], skipped: Sequence[Skipped], *, verbose: bool = False, quiet: bool = False
) -> list[str]:
    """What ``print_text`` shows, as plain lines: the rich rendering without colour, line for line."""
    out = [plain(line) for line in finding_lines(reports, skipped, verbose=verbose)]
    if not quiet:
        out.extend(summary_lines(reports, skipped))
        out.append(closing_line(reports, skipped))
    return out


def finding_lines(reports: Sequence[FileReport], skipped: Sequence[Skipped], *, verbose: bool) -> list[Styled]:
    """The text format's lines above the summary: each finding (head, source line, caret, notes), what
    the per-rule cap held back, and (with ``verbose``) the skipped files."""
    out: list[Styled] = []
    for r in reports:
        for f in r.findings:
            out.append(head(f))
            if f.source:
                line, caret = f.source.split("\n", 1)
                out += [((line, ""),), ((caret, "bold green"),)]
            out += [((f"  note: {n}", "dim"),) for n in f.notes]
        if r.dropped:
            out.append(((f"{r.path}: {r.dropped} more findings not shown (per-rule limit)", "dim"),))
    out += [((f"{s.path}: note: skipped: {s.reason}", "dim"),) for s in (skipped if verbose else ())]
    return out


def summary_rows(reports: Sequence[FileReport], skipped: Sequence[Skipped]) -> list[tuple[str, str, str, str]]:
    """The summary table's cells, header first and the total last (laid out by ``summary_table`` on a
    terminal and by ``summary_lines`` on a pipe)."""
    sm = summary(reports, skipped)
    return [
        ("rule", "errors", "warnings", "expected"),
        *(
            (rule, str(c.get("error", 0)), str(c.get("warning", 0)), str(c.get("expected", 0)))
            for rule, c in sm["by_rule"].items()
        ),
        ("total", str(sm["errors"]), str(sm["warnings"]), str(sm["expected"])),
    ]


def summary_lines(reports: Sequence[FileReport], skipped: Sequence[Skipped]) -> list[str]:
    """``summary_table`` as rich lays it out on a pipe (heavy header rule, no outer edge)."""
    head_row, *rows = summary_rows(reports, skipped)
    widths = [max(len(row[i]) for row in (head_row, *rows)) for i in range(4)]

    def cells(row: tuple[str, ...], sep: str) -> str:
        return sep.join(f" {c.ljust(w) if i == 0 else c.rjust(w)} " for i, (c, w) in enumerate(zip(row, widths)))

    return [
        "shardconv check",
        cells(head_row, "┃"),
        "╇".join("━" * (w + 2) for w in widths),
        *(cells(row, "│") for row in rows),
    ]


def summary_table(reports: Sequence[FileReport], skipped: Sequence[Skipped]) -> Any:
    """The rich table of counts by rule under the findings."""
    from rich.table import Table
    from rich.text import Text

    head_row, *rows, total = summary_rows(reports, skipped)
    table = Table(title="shardconv check", title_justify="left", show_edge=False)
    for i, name in enumerate(head_row):
        table.add_column(name, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*row)
    table.add_row(Text(total[0], style="bold"), *total[1:], end_section=True)
    return table


def _gh_escape(s: str, prop: bool = False) -> str:
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return s.replace(":", "%3A").replace(",", "%2C") if prop else s


def format_github(reports: Sequence[FileReport], skipped: Sequence[Skipped]) -> str:
    """GitHub Actions workflow commands: one ``::error file=...,line=...,col=...::`` per finding."""
    lines = []
    for r in reports:
        for f in r.findings:
            level = "notice" if f.expected or f.severity is Severity.NOTE else f.severity.value
            props = f"file={_gh_escape(f.path, True)},line={f.line},col={f.col}"
            if f.end_line is not None and f.end_col is not None:
                props += f",endLine={f.end_line},endColumn={f.end_col}"
            props += f",title={_gh_escape('shardconv ' + f.rule.value, True)}"
            body = f.message + "".join(f"\n{n}" for n in f.notes)
            lines.append(f"::{level} {props}::{_gh_escape(body)}")
    return "\n".join(lines) + ("\n" if lines else "")


def finding_dict(f: CheckFinding) -> dict[str, Any]:
    return {
        "rule": f.rule.value,
        "severity": f.severity.value,
        "expected": f.expected,
        "path": f.path,
        "line": f.line,
        "column": f.col,
        "end_line": f.end_line,
        "end_column": f.end_col,
        "message": f.message,
        "notes": list(f.notes),
        "fixable": f.fix is not None,
        "fix": f.fix.description if f.fix else None,
        "count": f.count,
        "source": f.source.split("\n", 1)[0][2:] if f.source else "",
    }


def format_json(reports: Sequence[FileReport], skipped: Sequence[Skipped]) -> str:
    return "".join(json_pieces(reports, skipped))


def json_pieces(reports: Sequence[FileReport], skipped: Sequence[Skipped]) -> Iterator[str]:
    """``format_json`` in pieces, a file or finding at a time: a run over 100,000 files never holds its
    document, nor its text, whole."""
    from shardconv.ui.jsonout import document_pieces

    yield from document_pieces(
        "check",
        files=(
            {"path": r.path, "kind": r.kind, "occurrences": r.values, "distinct": r.distinct, "dropped": r.dropped}
            for r in reports
        ),
        skipped=({"path": s.path, "reason": s.reason} for s in skipped),
        findings=(finding_dict(f) for r in reports for f in r.findings),
        rules=[{"id": r.id, "severity": r.severity, "summary": r.summary} for r in RULES.values()],
        summary=summary(reports, skipped),
    )
    yield "\n"


def rule_uri(rule: str) -> str:
    """Where a rule's documentation lives (``shardconv rule RULE`` prints the same text)."""
    return f"{INFO_URI}/blob/main/docs/rules.md#{rule}"


def sarif_fix(f: CheckFinding, edits: Sequence[SpanEdit]) -> dict[str, Any]:
    """A SARIF ``fix``: the byte spans --fix replaces for this finding."""
    return {
        "description": {"text": f.fix.description if f.fix else ""},
        "artifactChanges": [
            {
                "artifactLocation": {"uri": _uri(f.path)},
                "replacements": [
                    {
                        "deletedRegion": {"byteOffset": e.start, "byteLength": e.end - e.start},
                        "insertedContent": {"text": e.new.decode("utf-8", "backslashreplace")},
                    }
                    for e in edits
                ],
            }
        ],
    }


def format_sarif(reports: Sequence[FileReport], skipped: Sequence[Skipped]) -> str:
    """A SARIF 2.1.0 log with one run; expected lit findings carry an in-source suppression, and fixable
    findings carry ``fixes``: the byte edits their fix makes."""
    ids = list(RULES)
    results = []
    for r in reports:
        for f in r.findings:
            res: dict[str, Any] = {
                "ruleId": f.rule.value,
                "ruleIndex": ids.index(f.rule),
                "level": Severity.NOTE.value if f.severity is Severity.NOTE else f.severity.value,
                "message": {"text": f.message + "".join(f"\n{n}" for n in f.notes)},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": _uri(f.path)},
                            "region": _region(f),
                        }
                    }
                ],
            }
            edits = f.fix.edits if f.fix is not None and not f.expected else ()
            if edits:
                res["fixes"] = [sarif_fix(f, edits)]
            if f.expected:
                res["suppressions"] = [{"kind": "inSource", "justification": "lit test expects this error"}]
            results.append(res)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "shardconv",
                        "version": __version__,
                        "informationUri": INFO_URI,
                        "rules": [
                            {
                                "id": rule.id,
                                "name": rule.id,
                                "shortDescription": {"text": rule.summary},
                                "helpUri": rule_uri(rule.id),
                                "defaultConfiguration": {"level": rule.severity},
                            }
                            for rule in RULES.values()
                        ],
                    }
                },
                "results": results,
                "invocations": [
                    {
                        "executionSuccessful": True,
                        "toolExecutionNotifications": [
                            {"level": "note", "message": {"text": f"{s.path}: skipped: {s.reason}"}} for s in skipped
                        ],
                    }
                ],
            }
        ],
    }
    import json  # only the SARIF format pays for it

    from shardconv.ui.jsonout import escape_surrogates

    return escape_surrogates(json.dumps(log, indent=2, ensure_ascii=False)) + "\n"


def _uri(path: str) -> str:
    from urllib.parse import quote

    return quote(path.replace("\\", "/")) if path != "-" else "stdin"


def _region(f: CheckFinding) -> dict[str, int]:
    region = {"startLine": f.line, "startColumn": f.col}
    if f.end_line is not None and f.end_col is not None and (f.end_line, f.end_col) > (f.line, f.col):
        region.update(endLine=f.end_line, endColumn=f.end_col)
    return region


FORMATTERS: dict[str, Callable[[Sequence[FileReport], Sequence[Skipped]], str]] = {
    "concise": format_concise,
    "github": format_github,
    "json": format_json,
    "sarif": format_sarif,
}
MACHINE_FORMATS = frozenset({"github", "json", "sarif"})

__all__ = [
    "FORMATTERS",
    "MACHINE_FORMATS",
    "closing_line",
    "finding_dict",
    "finding_lines",
    "fixable",
    "format_concise",
    "format_github",
    "format_json",
    "format_sarif",
    "format_statistics",
    "head",
    "json_pieces",
    "plain",
    "plain_lines",
    "print_rich",
    "print_text",
    "rule_uri",
    "summary",
    "summary_lines",
    "summary_rows",
    "summary_table",
]
