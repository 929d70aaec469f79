"""``shardconv check``: scan IR dumps for sharding problems; a pre-commit / CI gate with ``--fix``."""

from __future__ import annotations

import os
import sys
from typing import IO, TYPE_CHECKING

import click

from shardconv.check.diagnostics import RULES

if TYPE_CHECKING:
    from shardconv.check.context import CheckOptions
    from shardconv.check.diagnostics import FileReport, Skipped

FORMATS = ("text", "json", "github", "sarif")

EPILOG = """\b
Examples:
  shardconv check dumps/ --mesh batch=2,model=4
  shardconv check module.mlir --allowed-meshes 1x8,2x4 --format github
  shardconv check ir.mlir --mesh batch=2,model=4 --diff | git apply   # fix through git
  shardconv check ir.mlir --mesh batch=2,model=4 --fix                # rewrite in place
  cat dump.txt | shardconv check - --format sarif > check.sarif

\b
Rules: """ + ", ".join(RULES) + """
Exit status: 0 clean, 1 findings (errors not downgraded by --warn-only), 2 usage error or no IR found.
"""


def _rules(values: tuple[str, ...], opt: str) -> frozenset[str]:
    out = {r.strip() for v in values for r in v.split(",") if r.strip()}
    unknown = sorted(out - set(RULES))
    if unknown:
        raise click.UsageError(f"{opt}: unknown rule {', '.join(unknown)} (rules: {', '.join(RULES)})")
    return frozenset(out)


def _allowed(text: str | None) -> tuple[tuple[int, ...], ...] | None:
    if text is None:
        return None
    shapes = []
    for part in text.split(","):
        part = part.strip().lower()
        if not part:
            continue
        try:
            dims = tuple(int(x) for x in part.split("x"))
        except ValueError:
            raise click.UsageError(f"--allowed-meshes: {part!r} is not a shape like 2x4") from None
        if not dims or any(d < 1 for d in dims):
            raise click.UsageError(f"--allowed-meshes: {part!r} is not a shape like 2x4")
        shapes.append(dims)
    return tuple(shapes)


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--mesh", "-m", "mesh_text", metavar="MESH", help="The real global mesh, e.g. batch=2,model=4 or '<[\"batch\"=2, \"model\"=4]>'.")
@click.option("--allowed-meshes", metavar="SHAPES", help="Mesh shapes the backend accepts, e.g. 1x8,2x4.")
@click.option("--format", "-f", "fmt", type=click.Choice(FORMATS), default="text", show_default=True, help="Output format.")
@click.option("--fix", is_flag=True, help="Apply the fixes the findings carry (synthetic meshes moved onto --mesh, mhlo.sharding canonicalised), in place.")
@click.option("--diff", "--dry-run", "diff", is_flag=True, help="Print the fixes as a unified diff (for git apply) on stdout; write nothing.")
@click.option("--include", multiple=True, metavar="GLOB", help="Only these files inside folders (default: every file whose content is IR).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Paths to skip (repeatable).")
@click.option("--warn-only", multiple=True, metavar="RULE", help="Report RULE as a warning that does not fail (repeatable, or comma-separated).")
@click.option("--ignore", multiple=True, metavar="RULE", help="Do not report RULE (repeatable, or comma-separated).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Files checked in parallel (default: the number of cores).")
@click.option("--verbose", "-v", is_flag=True, help="Also list the files skipped as not IR.")
def check(
    paths: tuple[str, ...],
    mesh_text: str | None,
    allowed_meshes: str | None,
    fmt: str,
    fix: bool,
    diff: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    warn_only: tuple[str, ...],
    ignore: tuple[str, ...],
    jobs: int | None,
    verbose: bool,
) -> int:
    """Scan HLO / MLIR dumps for every sharding and check it: syntax, verifier, ranks, device ids and
    counts, meshes (--mesh, --allowed-meshes, synthetic _axis_N meshes, the mesh XLA's import of HLO
    shardings would invent), expressibility and sdy/HLO round trips.

    Folders are walked recursively and every file is sniffed by content (XLA's *.txt dumps,
    torch-xla's tensors.txt.0, ...); '-' reads stdin. Findings inside lit tests that expect an error
    (expected-error) are reported as expected, not as failures.
    """
    from shardconv.check.context import CheckOptions
    from shardconv.check.diagnostics import Skipped
    from shardconv.check.emit import FORMATTERS, print_text
    from shardconv.check.engine import (
        Selection,
        check_files,
        iter_files,
        merge_dump_variants,
    )
    from shardconv.formats.detect import parse_mesh_option

    if (fix or diff) and "-" in paths:
        raise click.UsageError("--fix and --diff cannot rewrite stdin")
    opts = CheckOptions(
        mesh=parse_mesh_option(mesh_text) if mesh_text else None,
        allowed_meshes=_allowed(allowed_meshes),
        warn_only=_rules(warn_only, "--warn-only"),
        ignore=_rules(ignore, "--ignore"),
    )
    files: list[str] = []
    skipped: list[Skipped] = []
    for item in iter_files(paths, Selection(include, exclude)):
        if isinstance(item, Skipped):
            skipped.append(item)
        elif item != "-" and not os.path.exists(item):
            raise click.UsageError(f"no such file or directory: {item}")
        else:
            files.append(item)
    reports: list[FileReport] = []
    for result in merge_dump_variants(check_files(files, opts, jobs or os.cpu_count() or 1)):
        (skipped if isinstance(result, Skipped) else reports).append(result)  # type: ignore[arg-type]
    if not reports:
        raise click.UsageError(_nothing_checked(paths, skipped))
    diffs: list[str] = []
    if fix or diff:
        reports = [_fix(r, opts, diff, diffs) for r in reports]
    out: IO[str] = sys.stdout
    if diffs:
        sys.stdout.write("".join(diffs))
        out = sys.stderr  # the diff owns stdout, so `| git apply` gets nothing else
    if fmt == "text":
        print_text(reports, skipped, out, verbose=verbose)
    else:
        out.write(FORMATTERS[fmt](reports, skipped))
    return 1 if any(f.fails for r in reports for f in r.findings) else 0


def _nothing_checked(paths: tuple[str, ...], skipped: list[Skipped]) -> str:
    """Why a run checked nothing: the paths, and the first few files skipped and why."""
    shown = "".join(f"\n  {s.path}: {s.reason}" for s in skipped[:5])
    more = f"\n  ... and {len(skipped) - 5} more" if len(skipped) > 5 else ""
    return f"no IR found in {', '.join(paths)}" + (f"; skipped:{shown}{more}" if skipped else " (no files)")


def _fix(report: FileReport, opts: CheckOptions, dry_run: bool, diffs: list[str]) -> FileReport:
    """Apply (or, with ``dry_run``, diff) exactly the fixes the report's findings carry, unless a
    finding blocks them; after a write the file is checked again."""
    from shardconv.check.apply import (
        FixError,
        apply,
        blockers,
        plan,
        rewrites_of,
        unified_diff,
    )
    from shardconv.check.diagnostics import FileReport as Report
    from shardconv.check.engine import check_file

    path = report.path
    for b in blockers(report.findings):
        sys.stderr.write(f"{path}: not fixed: {b.blocks_fix} (the {b.rule} finding at line {b.line})\n")
    edits = plan(path, rewrites_of(report.findings)) if report.kind != "unreadable" else []
    if not edits:
        return report
    if dry_run:
        diffs.append(unified_diff(path, edits))
        return report
    try:
        apply(path, edits)
    except FixError as e:
        sys.stderr.write(f"{path}: error: {e.message}\n")
        return report
    sys.stderr.write(f"{path}: fixed {len(edits)} value(s)\n")
    again = check_file(path, opts)
    return again if isinstance(again, Report) else report
