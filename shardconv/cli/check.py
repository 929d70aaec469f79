"""``shardconv check``: scan IR dumps for sharding problems; a pre-commit / CI gate with ``--fix``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from shardconv.check.findings import RULES, FileReport

if TYPE_CHECKING:
    from shardconv.check.checker import CheckOptions

FORMATS = ("text", "json", "github", "sarif")

EPILOG = """\b
Examples:
  shardconv check dumps/ --mesh batch=2,model=4
  shardconv check module.mlir --allowed-meshes 1x8,2x4 --format github
  shardconv check ir.mlir --mesh batch=2,model=4 --fix --dry-run   # show the diff
  shardconv check ir.mlir --mesh batch=2,model=4 --fix             # rewrite in place
  cat dump.txt | shardconv check - --format sarif > check.sarif

\b
Rules: """ + ", ".join(RULES) + """
Exit status: 0 clean, 1 findings (errors not downgraded by --warn-only), 2 usage error.
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
@click.option("--fix", is_flag=True, help="Rewrite synthetic meshes onto --mesh and canonicalise mhlo.sharding strings, in place.")
@click.option("--dry-run", is_flag=True, help="With --fix: print a unified diff instead of writing.")
@click.option("--include", multiple=True, metavar="GLOB", help="Files to check inside directories (default: *.mlir *.hlo *.txt *.log *.dump).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Paths to skip (repeatable).")
@click.option("--warn-only", multiple=True, metavar="RULE", help="Report RULE as a warning that does not fail (repeatable, or comma-separated).")
@click.option("--ignore", multiple=True, metavar="RULE", help="Do not report RULE (repeatable, or comma-separated).")
def check(
    paths: tuple[str, ...],
    mesh_text: str | None,
    allowed_meshes: str | None,
    fmt: str,
    fix: bool,
    dry_run: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    warn_only: tuple[str, ...],
    ignore: tuple[str, ...],
) -> int:
    """Scan HLO / MLIR dumps for every sharding and check it: syntax, verifier, ranks, device ids,
    meshes (--mesh, --allowed-meshes, synthetic _axis_N meshes), expressibility and sdy/HLO round trips.

    Directories are walked recursively; '-' reads stdin. Findings inside lit tests that expect an
    error (expected-error) are reported as expected, not as failures.
    """
    from shardconv.check.checker import CheckOptions
    from shardconv.check.findings import Skipped
    from shardconv.check.run import Selection, check_file, iter_files
    from shardconv.check.report import FORMATTERS, print_text
    from shardconv.formats.detect import parse_mesh_option

    if dry_run and not fix:
        raise click.UsageError("--dry-run only makes sense with --fix")
    if fix and "-" in paths:
        raise click.UsageError("--fix cannot rewrite stdin")
    opts = CheckOptions(
        mesh=parse_mesh_option(mesh_text) if mesh_text else None,
        allowed_meshes=_allowed(allowed_meshes),
        warn_only=_rules(warn_only, "--warn-only"),
        ignore=_rules(ignore, "--ignore"),
    )
    reports: list[FileReport] = []
    skipped: list[Skipped] = []
    diffs: list[str] = []
    for item in iter_files(paths, Selection(include, exclude)):
        if isinstance(item, Skipped):
            skipped.append(item)
            continue
        if item != "-" and not _exists(item):
            raise click.UsageError(f"no such file or directory: {item}")
        result = check_file(item, opts)
        if isinstance(result, Skipped):
            skipped.append(result)
            continue
        if fix and result.kind != "unreadable":
            result = _fix(item, opts, dry_run, result, diffs)
        reports.append(result)
    out = sys.stdout
    for d in diffs:
        out.write(d)
    if fmt == "text":
        print_text(reports, skipped, out)
    else:
        out.write(FORMATTERS[fmt](reports, skipped))
    return 1 if any(f.fails for r in reports for f in r.findings) else 0


def _exists(path: str) -> bool:
    import os

    return os.path.exists(path)


def _fix(path: str, opts: CheckOptions, dry_run: bool, result: FileReport, diffs: list[str]) -> FileReport:
    """Plan the file's edits; keep them as a diff (--dry-run) or apply them and re-check the file."""
    from shardconv.check.fixer import FixError, apply, unified_diff
    from shardconv.check.run import check_file, plan_file

    edits = plan_file(path, opts)
    if not edits:
        return result
    if dry_run:
        diffs.append(unified_diff(path, edits))
        return result
    try:
        apply(path, edits)
    except FixError as e:
        sys.stderr.write(f"{path}: error: {e.message}\n")
        return result
    sys.stderr.write(f"{path}: fixed {len(edits)} value(s)\n")
    again = check_file(path, opts)
    return again if isinstance(again, FileReport) else result
