"""``shardconv trace LOG...``: follow every sharded value through a compiler's passes and report the
dumps where its data moved, a pass decided its sharding, or its mesh or only its spelling changed. Exit 1
only when data moved between two decided placements."""

from __future__ import annotations

import click

from shardconv.cli.options import all_grids_option, usage_error
from shardconv.scan.inputs import stdin_copy
from shardconv.text.files import refuse_special
from shardconv.trace.report import GRIDS_SHOWN, emit
from shardconv.trace.run import trace_paths, value_filter

EPILOG = """\b
LOG is an MLIR pass log (-mlir-print-ir-before-all / -after-all, with or without
-mlir-print-ir-module-scope), a folder of XLA per-pass dumps (--xla_dump_to=DIR
--xla_dump_hlo_pass_re=.*, ordered by step), any HLO or MLIR file, or - for stdin.
Several LOGs that are not XLA step files are followed as one sequence, in order.
Values are followed by position (arg[0], result[0] of the entry function), else by
SSA or HLO instruction name (%r:in[0] / %r:out[0]: a manual computation's operands
and results; %r: every result of the op, %r#1 its second), while both dumps define it
as the same op on the same operands with the same result type. placement: data moved
between two decided placements, or a sharding that pinned it was lost (exit 1);
decided: a pass gave a value a sharding or filled its open {?} dims; the dump where
the module became per device says "partitioned". A step file that cannot be read is
skipped and named in the summary (exit 2 unless data moved).

\b
Examples:
  shardconv trace passes.log
  shardconv trace xla_dump/ --value arg[0]
  shardconv trace lowered.mlir torch_xla_passes.log --format json
"""


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@click.option("--value", "values", multiple=True, metavar="NAME",
              help="Follow only this value (arg[0], result[1], %3, dot.2, @f:arg[0], %r:in[0]); repeatable.")
@all_grids_option()
@click.option("--format", "-f", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for people, json for scripts (dumps and changes).")
def trace(logs: tuple[str, ...], values: tuple[str, ...], all_grids: bool, fmt: str) -> int:
    """Which pass changed where a sharded value lives? Follow it through a pass log."""
    grids = None if all_grids else GRIDS_SHOWN

    refuse_special(logs, usage_error)
    if "-" not in logs:
        return emit("trace", trace_paths(logs, value_filter(values)), fmt, grids)

    with stdin_copy() as copy:  # (stdin as a file: a value's name is read again off its op's line)
        return emit("trace", trace_paths([copy if p == "-" else p for p in logs], value_filter(values)), fmt, grids)
