"""``shardconv convert``: one sharding (or one per stdin line) into another spelling.

stdout carries only the answer, one line per input, so ``$(shardconv convert ...)`` captures it;
explanations go to stderr (on a terminal, or with ``--explain``) or into the JSON.
"""

from __future__ import annotations

import re
import sys
from dataclasses import KW_ONLY, replace
from typing import TYPE_CHECKING, Any

import click

from shardconv.cli.options import common_options, context, mesh_option, xla_version_option
from shardconv.cli.spell import TARGETS, render_target
from shardconv.convert import resolve
from shardconv.convert.xla_import import open_dims
from shardconv.core.errors import ShardingError
from shardconv.core.model import TensorSharding
from shardconv.core.records import record
from shardconv.formats.detect import anchored_in, stdin_items
from shardconv.formats.sdy.write import print_mesh
from shardconv.formats.xla_versions import DEFAULT_XLA_VERSION
from shardconv.ui.console import is_tty, width

if TYPE_CHECKING:
    from shardconv.cli.options import Context
    from shardconv.convert.notes import Note
    from shardconv.convert.resolve import OnMesh
    from shardconv.formats.detect import Input

@record
class Converted:
    """The answer for one input and what the user should know about it."""

    _: KW_ONLY
    input: Input
    target: str
    output: str
    on: OnMesh | None  # the Shardy side, when it was computed
    xla: OnMesh | ShardingError | None  # what XLA's importer makes of an HLO input
    notes: tuple[Note, ...]


def convert_item(
    inp: Input,
    target: str,
    ctx: Context,
    *,
    explain: bool = True,
    xla_version: str = DEFAULT_XLA_VERSION,
    unspecified_dims: tuple[int, ...] = (),
) -> Converted:
    """Convert one parsed input to ``target`` on ``ctx.mesh`` (pure: no I/O), HLO text spelled as XLA
    ``xla_version`` writes it; ``unspecified_dims`` (a Sharding custom call's) are open in the Shardy
    answer. Without ``explain`` the XLA-importer view and the notes are skipped (the plain answer path
    stays fast)."""
    rank = resolve.input_rank(inp, ctx.rank)
    on: OnMesh | None = None
    if resolve.needs_sdy(inp, target, ctx.mesh):
        on = resolve.as_sdy(inp, ctx.mesh, rank=rank)
        if unspecified_dims:
            on = replace(on, sharding=open_dims(on.sharding, unspecified_dims))
    output = render_target(inp, target, ctx, on, rank, xla_version=xla_version)
    if not explain:
        return Converted(input=inp, target=target, output=output, on=on, xla=None, notes=())
    from shardconv.convert.notes import notes_for, xla_view_of

    xla = xla_view_of(inp, rank) if inp.is_hlo and on is not None else None
    return Converted(input=inp, target=target, output=output, on=on, xla=xla, notes=notes_for(inp, target, on, xla))


def explain_text(c: Converted, width: int = 80) -> str:
    """The notes for stderr: messages wrapped to ``width``, values indented and never wrapped."""
    import textwrap

    out = []
    for n in c.notes:
        msg = f"note: {n.message}" + (":" if n.values else "")
        out.append(textwrap.fill(msg, width=width, subsequent_indent="      ", break_on_hyphens=False))
        out.extend(f"        {v}" for v in n.values)
    return "\n".join(out)


def json_doc(
    c: Converted | None, *, err: ShardingError | None = None, line: int | None = None, text: str = ""
) -> dict[str, Any]:
    """The ``convert`` JSON document for one item (see docs/cli-json-schema.md)."""
    from shardconv.ui import jsonout

    doc: dict[str, Any] = jsonout.document("convert")
    if line is not None:
        doc["line"] = line
    if c is None:
        assert err is not None
        doc.update(input={"text": text, "kind": None}, to=None, output=None, error=jsonout.error_dict(err))
        return doc
    xla: Any = None
    if isinstance(c.xla, ShardingError):
        xla = {"error": jsonout.error_dict(c.xla)}
    elif c.xla is not None:
        xla = {"mesh": jsonout.mesh_dict(c.xla.mesh, synthetic=True), "sharding": str(c.xla.sharding)}
    doc.update(
        input={"text": c.input.text, "kind": c.input.kind},
        to=c.target,
        output=c.output,
        mesh=jsonout.mesh_dict(c.on.mesh, synthetic=c.on.synthetic) if c.on else None,
        xla_import=xla,
        notes=[{"code": n.code, "message": n.message, "values": list(n.values)} for n in c.notes],
        error=None,
    )
    return doc


def _mesh_line(c: Converted) -> str | None:
    """The declaration of the answer's mesh: ``sdy.mesh @m = <...>``, or for ``--to shard`` its grid."""
    if c.on is None:
        return None
    if c.target == "shard":
        from shardconv.convert.shard_dialect import mesh_grid

        named = c.on.sharding.mesh if isinstance(c.on.sharding, TensorSharding) else None
        return str(mesh_grid(c.on.mesh, named if isinstance(named, str) else None))
    return print_mesh(c.on.mesh, form="decl")


EPILOG = """\b
Examples:
  shardconv convert '{devices=[1,4,2]<=[8] last_tile_dim_replicate}' --mesh batch=2,model=4
  shardconv convert '#sdy.sharding<@mesh, [{}, {"model"}]>' --mesh batch=2,model=4
  shardconv convert "P(None, 'model')" --mesh batch=2,model=4 --to v1
  shardconv convert 08031a0301040230014a02020452020100 --mesh batch=2,model=4
  shardconv convert '{devices=[2,4]<=[8]}' --to proto-hex
  shardconv convert "{mesh['a'=2,'b'=4], [{'a'}, {}]}" --to proto-v2
  shardconv convert - --mesh @model.mlir < shardings.txt
  shardconv convert '#sdy.sharding<mesh<["a"=2]>, [{"a"}]>' --to v3 --xla-version head
  shardconv convert 'shard.sharding @grid split_axes = [[1], []]' --mesh a=2,b=4 --to sdy

\b
--to defaults to sdy for HLO/proto input and to hlo otherwise. Without --mesh an
HLO input lands on the synthetic _axis_N mesh XLA's importer would invent; it is
printed inline in the sharding (and as XLA writes it on stderr).
\b
proto-hex, proto-base64 and textproto give XLA's proto of the input: a V3 input
(or tuple element) stays the named proto, as XLA serializes it. proto-v2 and
proto-v3 (hex) choose: the tile-array proto, or the named one.
\b
TEXT '-' reads stdin, one item per line (blank lines and '// ...' skipped). Each
line gets one output line; a bad line prints an empty line, reports
'error: line N: ...' on stderr, and the run goes on, exiting 2 at the end.
With --format json, batch output is JSON Lines, one object per item.
"""


@click.command(epilog=EPILOG, context_settings={"max_content_width": 100})
@click.argument("text")
@mesh_option()
@click.option(
    "--to", "-t", "target", type=click.Choice(TARGETS), help="Output format (default: sdy for HLO input, else hlo)."
)
@common_options
@click.option(
    "--explain/--no-explain", default=None, help="Explanations on stderr (default: when stderr is a terminal)."
)
@click.option(
    "--with-mesh",
    is_flag=True,
    help="Print the mesh declaration line before an sdy answer (its shard.grid before a shard one).",
)
@click.option(
    "--unspecified-dims",
    "unspecified_text",
    metavar="DIMS",
    help="Dims a Sharding custom call leaves to propagation (1,2 or its backend_config "
    "'unspecified_dims=[1]'): open in the sdy answer, as XLA's import makes them.",
)
@xla_version_option()
def convert(
    text: str,
    mesh_text: str | None,
    target: str | None,
    from_kind: str,
    rank: int | None,
    shape_text: str | None,
    fmt: str,
    explain: bool | None,
    with_mesh: bool,
    unspecified_text: str | None,
    xla_version: str,
) -> int:
    """Convert a sharding between HLO (V1/V2/V3), Shardy, partition specs and OpSharding protos.

    TEXT is detected automatically: '{...}' HLO, '#sdy.sharding<...>' / '<@mesh, [...]>' /
    '[{...}]' Shardy, "P(None, 'model')" partition spec, 'shard.sharding @grid split_axes = [[0]]'
    (MLIR's shard dialect: grid axis i is --mesh's axis i), hex or base64 OpSharding proto.
    """
    ctx = context(mesh_text, rank, shape_text)
    if explain is None:
        explain = is_tty(sys.stderr)
    batch = text == "-"
    if batch and with_mesh:
        raise click.UsageError("--with-mesh prints two lines per item; it cannot be combined with '-'")
    unspecified = _unspecified_dims(unspecified_text)
    if unspecified and target not in (None, "sdy", "json"):
        raise click.UsageError(
            f"--unspecified-dims opens dims of the sdy answer; --to {target} has no spelling for them"
        )
    items = stdin_items(sys.stdin) if batch else iter([(None, text)])
    failed = 0
    for line, item in items:
        if batch and not item:  # a blank or comment line: an empty line keeps output line N = input line N
            if fmt != "json":
                click.echo("")
            continue
        try:
            with anchored_in(item):
                inp = resolve.parse_on_mesh(item, from_kind, ctx.mesh)
                to = target or resolve.default_target(inp)
                if unspecified and to not in ("sdy", "json"):
                    raise click.UsageError(f"--unspecified-dims opens dims of an sdy answer, not of --to {to}")
                c = convert_item(
                    inp, to, ctx, explain=explain or fmt == "json", xla_version=xla_version,
                    unspecified_dims=unspecified,
                )
        except ShardingError as e:
            failed += 1
            _report_error(e, line, item, fmt, batch)
            continue
        _emit(c, line, fmt, explain, with_mesh)
    return 2 if failed else 0


_UNSPECIFIED = re.compile(r"\s*(?:unspecified_dims\s*=\s*)?\[?\s*(\d+(?:\s*,\s*\d+)*)?\s*\]?\s*")


def _unspecified_dims(text: str | None) -> tuple[int, ...]:
    """``--unspecified-dims``: ``1,2``, ``[1,2]`` or the custom call's ``unspecified_dims=[1,2]``."""
    if text is None:
        return ()
    m = _UNSPECIFIED.fullmatch(text)
    if m is None:
        raise click.BadParameter(f"{text!r} is not a list of dims such as 1,2 or unspecified_dims=[1,2]")
    return tuple(int(d) for d in re.split(r"\s*,\s*", m.group(1))) if m.group(1) else ()


def _emit(c: Converted, line: int | None, fmt: str, explain: bool, with_mesh: bool) -> None:
    if fmt == "json":
        from shardconv.ui import jsonout

        click.echo(jsonout.dumps(json_doc(c, line=line), lines=line is not None))
        return
    if with_mesh and c.on is not None and not c.on.synthetic:
        click.echo(_mesh_line(c))
    click.echo(c.output)
    if explain and c.notes:
        click.echo(explain_text(c, width(sys.stderr)), err=True)


def _report_error(e: ShardingError, line: int | None, item: str, fmt: str, batch: bool) -> None:
    where = f"line {line}: " if line is not None else ""
    click.echo(f"error: {where}{e}", err=True)
    if fmt == "json":
        from shardconv.ui import jsonout

        click.echo(jsonout.dumps(json_doc(None, err=e, line=line, text=item), lines=batch))
    elif batch:
        click.echo("")
