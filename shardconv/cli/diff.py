"""``shardconv diff A B``: two dumps or modules (HLO or MLIR, any mix) compared value by value by
placement, then decided, mesh and spelling; or a ``shardconv snapshot`` baseline and a dump. Exit 1 when
any value's data moved."""

from __future__ import annotations

import click

from shardconv.cli.options import all_grids_option, file_error, usage_error
from shardconv.snapshot.baseline import looks_like_baseline
from shardconv.text.files import refuse_special
from shardconv.trace.report import GRIDS_SHOWN, emit
from shardconv.trace.run import diff_paths, value_filter
from shardconv.ui.console import make_console
from shardconv.ui.jsonout import document, dumps

EPILOG = """\b
Values are paired as shardconv trace pairs them: function arguments and results by
position (arg[0], result[0]), else by SSA or HLO instruction name (%r:in[0]: a
manual computation's), and only when of the same type. Placements are computed on
each dump's own mesh, so renamed axes are a mesh change, not a placement change; a
value both define alike but only B shards was decided, one only A shards lost its
sharding (a placement change).

\b
When A is a baseline written by shardconv snapshot (a .json file), B is held
against it: a value whose placement changed, or that gained or lost its sharding,
fails (exit 1) and both grids are shown; a respelling on the same placement does
not. --update rewrites the baseline with B's values instead (atomically).

\b
Examples:
  shardconv diff lowered.mlir after_import.mlir
  shardconv diff module.before_optimizations.txt module.after_optimizations.txt
  shardconv diff lowered.mlir compiled.txt --format json
  shardconv diff shardings.json lowered.mlir
"""


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option("--value", "values", multiple=True, metavar="NAME",
              help="Compare only this value (arg[0], result[1], %3, dot.2, @f:arg[0], %r:in[0]); repeatable.")
@all_grids_option()
@click.option("--format", "-f", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for people, json for scripts (dumps and changes).")
@click.option("--update", is_flag=True, help="A is a baseline: rewrite it with B's values (exit 0).")
def diff(a: str, b: str, values: tuple[str, ...], all_grids: bool, fmt: str, update: bool) -> int:
    """Do two dumps place each sharded value on the same devices?"""
    refuse_special([a, b], usage_error)  # before any read: a FIFO named here would block it
    if looks_like_baseline(a):
        if values:
            raise click.UsageError("--value compares two dumps; a baseline is held whole")
        return against_baseline(a, b, fmt, update)
    if update:
        raise click.UsageError("--update rewrites a baseline: A must be one (shardconv snapshot -o FILE.json)")

    return emit("diff", diff_paths(a, b, value_filter(values)), fmt, None if all_grids else GRIDS_SHOWN)


def against_baseline(baseline: str, dump: str, fmt: str, update: bool) -> int:
    """Print how ``dump`` differs from ``baseline`` (or rewrite it): 1 when a placement moved."""
    from shardconv.snapshot.gate import against_baseline as held
    from shardconv.snapshot.gate import report_json, report_text
    from shardconv.snapshot.gate import update as rewrite

    try:
        verdict = held(baseline, dump)
    except OSError as e:
        raise file_error(e) from None
    if update:
        try:
            rewrite(verdict)
        except OSError as e:
            raise file_error(e, baseline) from None
        click.echo(f"{baseline}: rewritten from {dump} ({len(verdict.changes)} value(s) changed)", err=True)
        return 0
    if fmt == "json":
        click.echo(dumps(document("diff", **report_json(verdict))))
    else:
        console = make_console()
        console.print(report_text(verdict, width=console.width), soft_wrap=True, highlight=False, markup=False)
    return 1 if verdict.failing else 0
