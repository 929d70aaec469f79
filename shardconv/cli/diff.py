"""``shardconv diff A B``: two dumps or modules (HLO or MLIR, any mix) compared value by value by
placement, then decided, mesh and spelling. Exit 1 when any value's data moved."""

from __future__ import annotations

import click

EPILOG = """\b
Values are paired as shardconv trace pairs them: function arguments and results by
position (arg[0], result[0]), else by SSA or HLO instruction name (%r:in[0]: a
manual computation's), and only when of the same type. Placements are computed on
each dump's own mesh, so renamed axes are a mesh change, not a placement change; a
value both define alike but only B shards was decided, one only A shards lost its
sharding (a placement change).

\b
Examples:
  shardconv diff lowered.mlir after_import.mlir
  shardconv diff module.before_optimizations.txt module.after_optimizations.txt
  shardconv diff lowered.mlir compiled.txt --format json
"""


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option("--value", "values", multiple=True, metavar="NAME",
              help="Compare only this value (arg[0], result[1], %3, dot.2, @f:arg[0], %r:in[0]); repeatable.")
@click.option("--format", "-f", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for people, json for scripts (dumps and changes).")
def diff(a: str, b: str, values: tuple[str, ...], fmt: str) -> int:
    """Do two dumps place each sharded value on the same devices?"""
    from shardconv.cli.options import refuse_special
    from shardconv.trace.report import emit
    from shardconv.trace.run import diff_paths, value_filter

    refuse_special([a, b])
    return emit("diff", diff_paths(a, b, value_filter(values)), fmt)
