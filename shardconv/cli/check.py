"""``shardconv check``: scan IR dumps for sharding problems; a pre-commit / CI gate with ``--fix``."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import IO, TYPE_CHECKING

import click

from shardconv.check.context import CheckOptions
from shardconv.check.diagnostics import FileReport, Skipped
from shardconv.check.registry import RULES
from shardconv.cli.options import ALLOWED_MESHES_HELP, CHECK_MESH_HELP, file_error
from shardconv.core.limits import within

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

    from shardconv.check.config import ProjectConfig, Setting
    from shardconv.core.limits import Limits

FORMATS = ("text", "concise", "json", "github", "sarif")
PROGRESS_FILES = 20  # a run over at least this many files, or ...
PROGRESS_BYTES = 16 << 20  # ... this many bytes, shows a progress bar on a terminal

EPILOG = (
    """\b
Examples:
  shardconv check dumps/ --mesh batch=2,model=4
  shardconv check module.mlir --allowed-meshes 1x8,2x4 --format github
  shardconv check ir.mlir --mesh batch=2,model=4 --diff | git apply   # fix through git
  shardconv check ir.mlir --mesh batch=2,model=4 --fix                # rewrite in place
  shardconv check dumps/ --statistics                                 # counts by rule
  cat dump.txt | shardconv check - --format sarif > check.sarif

\b
Settings also come from [tool.shardconv] in pyproject.toml or from shardconv.toml, found from each
file's folder upwards (flags win; `shardconv config` shows them). A comment holding
`shardconv: ignore[RULE, ...]` silences RULE on its line and the next. `shardconv rule RULE` explains a rule.

\b
Rules: """
    + ", ".join(RULES)
    + """
Exit status: 0 clean, 1 findings (errors not downgraded by --warn-only), 2 usage error or no IR found.
"""
)


def complete_rules(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Shell completion of rule names, after any already typed (``--ignore syntax,ve<TAB>``)."""
    from click.shell_completion import CompletionItem

    done, _, last = incomplete.rpartition(",")
    head = done + "," if done else ""
    return [CompletionItem(head + r.id, help=r.summary) for r in RULES.values() if r.id.startswith(last)]


def _rules(values: tuple[str, ...], opt: str) -> frozenset[str]:
    from shardconv.check.config import parse_rules

    try:
        return parse_rules(values)
    except ValueError as e:
        raise click.UsageError(f"{opt}: {e}") from None


def _allowed(text: str) -> tuple[tuple[int, ...], ...]:
    from shardconv.check.config import parse_shapes

    try:
        return parse_shapes(text.split(","))
    except ValueError as e:
        raise click.UsageError(f"--allowed-meshes: {e}") from None


def flag_settings(
    mesh_text: str | None,
    allowed_meshes: str | None,
    warn_only: tuple[str, ...],
    ignore: tuple[str, ...],
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    replicated_threshold: str | None = None,
) -> dict[str, Setting]:
    """The settings the command line gives (each wins over the config's)."""
    from shardconv.check.config import Setting

    out: dict[str, Setting] = {}
    if mesh_text:
        from shardconv.formats.detect import parse_mesh_option

        out["mesh"] = Setting(parse_mesh_option(mesh_text), "--mesh", mesh_text)
    if allowed_meshes is not None:
        out["allowed-meshes"] = Setting(_allowed(allowed_meshes), "--allowed-meshes", allowed_meshes)
    for key, values in (("warn-only", warn_only), ("ignore", ignore)):
        if values:
            out[key] = Setting(_rules(values, "--" + key), "--" + key, ",".join(values))
    if replicated_threshold is not None:
        from shardconv.check.config import parse_size

        try:
            size = parse_size(replicated_threshold)
        except ValueError as e:
            raise click.UsageError(f"--replicated-threshold: {e}") from None
        out["replicated-threshold"] = Setting(size, "--replicated-threshold", replicated_threshold)
    for key, globs in (("include", include), ("exclude", exclude)):
        if globs:
            out[key] = Setting(globs, "--" + key, ",".join(globs))
    return out


def limits_of(cfg: ProjectConfig) -> Limits | None:
    """The ceiling this check runs under (``config_limits``, with --max-devices from the command line)."""
    from shardconv.check.config import config_limits

    return config_limits(cfg, click.get_current_context().find_root().params.get("max_devices"))


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option(
    "--mesh",
    "-m",
    "mesh_text",
    metavar="MESH",
    help=CHECK_MESH_HELP,
)
@click.option("--allowed-meshes", metavar="SHAPES", help=ALLOWED_MESHES_HELP)
@click.option(
    "--replicated-threshold",
    metavar="SIZE",
    help="replicated-large: warn of a tensor replicated over several devices above SIZE (64MiB; KiB, GiB, bytes).",
)
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="Output format (concise: one line per finding).",
)
@click.option(
    "--fix",
    is_flag=True,
    help="Apply the fixes the findings carry (synthetic meshes moved onto --mesh, mhlo.sharding "
    "canonicalised), in place.",
)
@click.option(
    "--diff",
    "--dry-run",
    "diff",
    is_flag=True,
    help="Print the fixes as a unified diff (for git apply) on stdout; write nothing.",
)
@click.option(
    "--include",
    multiple=True,
    metavar="GLOB",
    help="Only these files inside folders (default: every file whose content is IR).",
)
@click.option("--exclude", multiple=True, metavar="GLOB", help="Paths to skip (repeatable).")
@click.option(
    "--warn-only",
    multiple=True,
    metavar="RULE",
    shell_complete=complete_rules,
    help="Report RULE as a warning that does not fail (repeatable, or comma-separated).",
)
@click.option(
    "--ignore",
    multiple=True,
    metavar="RULE",
    shell_complete=complete_rules,
    help="Do not report RULE (repeatable, or comma-separated).",
)
@click.option(
    "--config",
    "config_path",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Read settings from FILE only (a pyproject.toml or shardconv.toml), not from the files' folders.",
)
@click.option("--no-config", is_flag=True, help="Ignore every config file.")
@click.option(
    "--statistics",
    is_flag=True,
    help="Print how many findings each rule has (and how many --fix fixes) instead of the findings.",
)
@click.option("--quiet", "-q", is_flag=True, help="Print the findings and nothing else (no summary, no closing line).")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Files checked in parallel, one per worker process (default: the number of cores).",
)
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Also list the files skipped as not IR, and suppressions that silence nothing.",
)
@click.option(
    "--baseline", metavar="FILE",
    help="Also hold the files to this shardconv snapshot baseline: a moved placement fails (text output).",
)
def check(
    paths: tuple[str, ...],
    mesh_text: str | None,
    allowed_meshes: str | None,
    replicated_threshold: str | None,
    fmt: str,
    fix: bool,
    diff: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    warn_only: tuple[str, ...],
    ignore: tuple[str, ...],
    config_path: str | None,
    no_config: bool,
    statistics: bool,
    quiet: bool,
    jobs: int | None,
    verbose: bool,
    baseline: str | None,
) -> int:
    """Scan HLO / MLIR dumps for every sharding and check it: syntax, verifier, ranks, device ids and
    counts, meshes (--mesh, --allowed-meshes, synthetic _axis_N meshes, the mesh XLA's import of HLO
    shardings would invent), expressibility and sdy/HLO round trips.

    Folders are walked recursively and every file is sniffed by content (XLA's *.txt dumps,
    torch-xla's tensors.txt.0, ...); '-' reads stdin. Findings inside lit tests that expect an error
    (expected-error) are reported as expected, not as failures.
    """
    from shardconv.check.config import ConfigFinder, options_of, resolve
    from shardconv.check.engine import Selection, check_files, iter_files, merge_dump_variants

    if (fix or diff) and "-" in paths:
        raise click.UsageError("--fix and --diff cannot rewrite stdin")
    if statistics and fmt != "text":
        raise click.UsageError("--statistics prints a text table; it does not combine with --format " + fmt)
    if baseline is not None and (fmt != "text" or "-" in paths or diff):
        raise click.UsageError(
            "--baseline holds named files and prints text; for JSON: shardconv diff BASELINE DUMP -f json"
        )
    finder = ConfigFinder(config_path, isolated=no_config)
    flags = flag_settings(mesh_text, allowed_meshes, warn_only, ignore, include, exclude, replicated_threshold)
    limits = limits_of(finder.for_path(paths[0]))
    click.get_current_context().with_resource(within(limits))
    base = CheckOptions(report_unused=verbose, limits=limits)  # the options carry it to worker processes

    def selection(arg: str) -> Selection:
        cfg = finder.for_path(arg)
        s = resolve(cfg.settings, flags)
        from_file = any(s[k].source not in ("default", "--" + k) for k in ("include", "exclude"))
        return Selection(s["include"].value, s["exclude"].value, root=cfg.root if from_file else None)

    configured: dict[int, tuple[ProjectConfig, CheckOptions]] = {}  # a config without overrides: its options

    def options_for(path: str) -> CheckOptions:
        cfg = finder.for_path(path)
        if cfg.overrides:
            return options_of(resolve(cfg.for_file(path), flags), base)
        got = configured.get(id(cfg))
        if got is None:
            got = configured[id(cfg)] = (cfg, options_of(resolve(cfg.settings, flags), base))
        return got[1]

    files: list[str] = []
    skipped: list[Skipped] = []
    named = set(paths)  # (a file found in a folder exists)
    for item in iter_files(paths, selection):
        if isinstance(item, Skipped):
            skipped.append(item)
        elif item in named and item != "-" and not os.path.lexists(item):
            raise click.UsageError(f"no such file or directory: {item}")
        else:
            files.append(item)
    reports: list[FileReport] = []
    with _progress(files) as advance:
        results = check_files(files, options_for, jobs or os.cpu_count() or 1, on_read=advance)
    for result in merge_dump_variants(results):
        if isinstance(result, Skipped):
            skipped.append(result)
        else:
            reports.append(result)
    if not reports:
        raise click.UsageError(_nothing_checked(paths, skipped))
    diffs: list[str] = []
    if fix or diff:
        fixed = [_fix(r, options_for(r.path), diff) for r in reports]
        reports = [r for r, _ in fixed]
        diffs = [d for _, d in fixed if d]
    _emit(reports, skipped, fmt, diffs, statistics=statistics, quiet=quiet, verbose=verbose)
    moved = baseline is not None and _held_to_baseline(baseline, [r.path for r in reports])
    return 1 if moved or any(f.fails for r in reports for f in r.findings) else 0


def _held_to_baseline(baseline: str, files: list[str]) -> bool:
    """Print each checked file against ``baseline`` as ``diff BASELINE FILE`` does; whether any moved."""
    from shardconv.snapshot.gate import against_baseline_all, report_text
    from shardconv.ui.console import make_console

    try:
        verdicts = against_baseline_all(baseline, files)
    except OSError as e:
        raise file_error(e) from None
    console = make_console()
    for v in verdicts:
        console.print(report_text(v, width=console.width), soft_wrap=True, highlight=False, markup=False)
    return any(v.failing for v in verdicts)


def _progress(files: list[str]) -> AbstractContextManager[Callable[[int], None]]:
    """A bar over the bytes to read, for runs long enough to want one (on a terminal only)."""
    from shardconv.ui.progress import progress, shows_progress

    if not shows_progress(sys.stderr):
        return progress("checking", 0)
    sizes = [os.path.getsize(f) for f in files if f != "-" and os.path.isfile(f)]
    big = len(files) >= PROGRESS_FILES or sum(sizes) >= PROGRESS_BYTES
    return progress("checking", sum(sizes) if big and "-" not in files else 0, unit="bytes")


def _emit(
    reports: list[FileReport],
    skipped: list[Skipped],
    fmt: str,
    diffs: list[str],
    *,
    statistics: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """Findings on stdout; when stdout holds a diff or a machine format, the closing line goes to stderr."""
    from shardconv.check.emit import (
        FORMATTERS,
        MACHINE_FORMATS,
        closing_line,
        format_sarif,
        format_statistics,
        json_pieces,
        print_text,
    )

    out: IO[str] = sys.stdout
    if diffs:
        sys.stdout.write("".join(diffs))
        out = sys.stderr  # the diff owns stdout, so `| git apply` gets nothing else
    if statistics:
        out.write(format_statistics(reports, skipped))
    elif fmt == "text":
        print_text(reports, skipped, out, verbose=verbose, quiet=quiet)
        return
    elif fmt == "sarif":
        out.write(format_sarif(reports, skipped))
    elif fmt == "json":
        out.writelines(json_pieces(reports, skipped))
    else:
        out.write(FORMATTERS[fmt](reports, skipped))
    if not quiet:
        closing = sys.stderr if fmt in MACHINE_FORMATS else out
        closing.write(closing_line(reports, skipped) + "\n")


def _nothing_checked(paths: tuple[str, ...], skipped: list[Skipped]) -> str:
    """Why a run checked nothing: the paths, and the first few files skipped and why."""
    shown = "".join(f"\n  {s.path}: {s.reason}" for s in skipped[:5])
    more = f"\n  ... and {len(skipped) - 5} more" if len(skipped) > 5 else ""
    return f"no IR found in {', '.join(paths)}" + (f"; skipped:{shown}{more}" if skipped else " (no files)")


def _fix(report: FileReport, opts: CheckOptions, dry_run: bool) -> tuple[FileReport, str]:
    """Apply (or, with ``dry_run``, diff) exactly the fixes the report's findings carry, unless a
    finding blocks them; after a write the file is checked again. Returns the report and the diff
    (empty unless ``dry_run``)."""
    from shardconv.check.apply import FixError, apply, blockers, edits_of, unified_diff
    from shardconv.check.engine import check_file

    path = report.path
    for b in blockers(report.findings):
        sys.stderr.write(f"{path}: not fixed: {b.blocks_fix} (the {b.rule} finding at line {b.line})\n")
    edits = edits_of(report.findings)
    if not edits:
        return report, ""
    if dry_run:
        return report, unified_diff(path, edits)
    try:
        apply(path, edits)
    except FixError as e:
        sys.stderr.write(f"{path}: error: {e.message}\n")
        why = f"not fixed: --fix could not write the file ({e.message})"
        return replace(
            report,
            findings=tuple(
                replace(f, fix=None, notes=(*f.notes, why)) if f.fix is not None else f for f in report.findings
            ),
        ), ""
    sys.stderr.write(f"{path}: fixed {len(edits)} value(s)\n")
    again = check_file(path, opts)
    return (again if isinstance(again, FileReport) else report), ""
