"""``shardconv explain PATH``: why a value is sharded the way it is, from Shardy's propagation records:
per axis of each dim, its origin, the steps that carried it, and where origins met. Exit 1 when the dump
carries no records (the message says which flag writes them)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

from shardconv.cli.options import usage_error
from shardconv.explain import render
from shardconv.explain.build import explain_paths
from shardconv.text.files import refuse_special
from shardconv.ui.console import use_color

if TYPE_CHECKING:
    from shardconv.explain.model import Explanation

EPILOG = """\b
PATH is a Shardy stage dump written with
  XLA_FLAGS='--xla_dump_to=DIR --xla_dump_hlo_pass_re=shardy-verbose'
(DIR/shardy/<module>/02.after_propagation.mlir), or DIR itself: there, each
module's after-propagation stage is read; or - for standard input, read as that
file is. Without a selector, every result of the entry function is explained.
dot, svg and html draw the propagation graph of the value restricted to its
origins (svg and html need no graphviz).

\b
Examples:
  shardconv explain DIR --result 0
  shardconv explain DIR/shardy/module_0000.jit_f/02.after_propagation.mlir --value %7
  shardconv explain DIR --arg 1 --format json
  shardconv explain DIR --line 12 --format html > why.html
"""


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("path", metavar="PATH")
@click.option("--value", metavar="NAME",
              help="The value to explain: an SSA name (%7 or 7; each result of an op of several).")
@click.option("--arg", type=click.IntRange(0), metavar="N", help="Argument N of the entry function.")
@click.option("--result", type=click.IntRange(0), metavar="N", help="Result N of the entry function.")
@click.option("--line", type=click.IntRange(1), metavar="L", help="The value defined on dump line L.")
@click.option("--format", "-f", "fmt", type=click.Choice(["text", "json", "dot", "svg", "html"]), default="text",
              show_default=True, help="text for people, json for scripts, dot/svg/html for the graph.")
def explain(path: str, value: str | None, arg: int | None, result: int | None, line: int | None, fmt: str) -> int:
    """Why is a value sharded the way it is? Its axes' origins and propagation paths."""
    if sum(x is not None for x in (value, arg, result, line)) > 1:
        raise click.UsageError("give at most one of --value, --arg, --result, --line")
    refuse_special([path], usage_error)  # a FIFO named here would block the read
    without: list[Explanation] = []  # values explained without Shardy's records: exit 1
    found = _noting(explain_paths(path, value=value, arg=arg, result=result, line=line), without)
    out = sys.stdout
    if fmt == "json":  # (text and JSON are written as each module is explained)
        from shardconv.ui import jsonout

        out.writelines(jsonout.dumps_streamed("explain", "explanations", (render.to_dict(e) for e in found)))
        out.write("\n")
    elif fmt == "text":
        out.writelines(render.texts(found, color=use_color(out)))
    else:  # a picture of them all
        every = list(found)
        if fmt == "dot":
            out.write(render.dot(every))
        elif fmt == "svg":
            out.write("".join(render.svg(e) for e in every[:1]))
            if len(every) > 1:
                click.echo(f"note: svg draws the first of {len(every)} values; use --format html for all", err=True)
        else:
            out.write(render.html(every))
    return 1 if without else 0


def _noting(found: Iterator[Explanation], without: list[Explanation]) -> Iterator[Explanation]:
    """``found`` as it comes, each explained without records noted in ``without`` (the exit code)."""
    for e in found:
        if not e.records:
            without.append(e)
        yield e
