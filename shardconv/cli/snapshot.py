"""``shardconv snapshot DUMP... -o shardings.json``: the baseline ``shardconv diff`` holds a later
lowering against, one sorted line per sharded value."""

from __future__ import annotations

import sys

import click

from shardconv.cli.options import file_error, usage_error
from shardconv.snapshot.baseline import render
from shardconv.snapshot.take import snapshot_paths
from shardconv.text.files import refuse_special

EPILOG = """\b
Each entry argument and result, sharding constraint and named value gets one line:
its dump, its name (@main:%arg0, @main:result[1], @main:%2), what it is, its
placement (the HLO V2 sharding of its tiles, on its device count), its shape, its
mesh and its sharding as written. The file is sorted and carries a schema version;
the same dumps always give the same bytes. Commit it, and in CI regenerate the
dump and run: shardconv diff shardings.json DUMP (exit 1 when a placement moved).

\b
Examples:
  shardconv snapshot lowered.mlir -o shardings.json
  shardconv diff shardings.json lowered.mlir
  shardconv diff shardings.json lowered.mlir --update
"""


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("dumps", nargs=-1, required=True, metavar="DUMP...")
@click.option("--output", "-o", metavar="FILE", help="Write the baseline here (atomically); default: stdout.")
def snapshot(dumps: tuple[str, ...], output: str | None) -> int:
    """Write where each sharded value of the dumps lives: a baseline for CI."""
    refuse_special(dumps, usage_error)
    if "-" in dumps:
        raise click.UsageError("a snapshot names its dumps by path; stdin (-) has none")
    try:
        data = render(snapshot_paths(dumps))
    except OSError as e:
        raise file_error(e) from None
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    from shardconv.text.atomic import write_atomic

    try:
        write_atomic(output, data)
    except OSError as e:
        raise file_error(e, output) from None
    return 0
