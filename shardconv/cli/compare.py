"""``shardconv compare A B --mesh M``: do two shardings, in any forms, place the same data on the same
devices? Exit 0 if so, 1 if not (naming the devices), 2 on bad input."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from shardconv.backends.base import Example, fmt_box
from shardconv.cli.examples import pick_backends
from shardconv.cli.options import MESH_HELP, text_argument
from shardconv.core.errors import ShardingValidationError
from shardconv.core.model import Mesh, TensorShardingPerValue
from shardconv.formats.detect import anchored_in, parse_input, parse_mesh_option, parse_shape
from shardconv.ui.console import make_console

if TYPE_CHECKING:
    from rich.console import Console

    from shardconv.backends.base import BackendResult

EPILOG = """\b
Examples:
  shardconv compare "P(None, 'model')" '{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}' --mesh batch=2,model=4
  shardconv compare '<@mesh, [{}, {"model"}]>' '{devices=[1,4,2]<=[8] last_tile_dim_replicate}' -m batch=2,model=4
  shardconv compare '{devices=[4,2]<=[8]}' "P('batch', 'model')" -m batch=2,model=4 --backend jax --shape 7x5
"""


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option(
    "--mesh", "-m", "mesh_text", metavar="MESH",
    help=MESH_HELP + " Optional when a side carries its mesh inline (#sdy.sharding<mesh<[...]>, ...>).",
)
@click.option("--backend", "-b", type=click.Choice(["reference", "jax"]), default="reference", show_default=True,
              help="reference: pure Python; jax: place real data with XLA on CPU devices.")
@click.option(
    "--shape", "-s", "shape_text", metavar="SHAPE",
    help="Tensor shape, e.g. 8x8, or one per value of a tuple, e.g. '8x8;16' (default, per value: the smallest "
    "shape every tile count divides, times 2).",
)
@click.option("--format", "-f", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def compare(a: str, b: str, mesh_text: str | None, backend: str, shape_text: str | None, fmt: str) -> int:
    """Compare two shardings (HLO, Shardy, partition spec or OpSharding proto) device by device. A or B
    '-' reads that side from standard input."""
    if a == b == "-":
        raise click.UsageError("only one of A and B can be read from standard input ('-')")
    a, b = text_argument(a), text_argument(b)
    mesh = parse_mesh_option(mesh_text) if mesh_text is not None else inline_mesh(a, b)
    shapes = None if shape_text is None else tuple(parse_shape(text) for text in shape_text.split(";"))
    shape, per_value = (shapes[0], None) if shapes is not None and len(shapes) == 1 else (None, shapes)
    (runner,) = pick_backends(backend)
    result = runner.run(Example(name="compare", mesh=mesh, sharding=a, other=b, shape=shape, shapes=per_value))
    agree = next((c for c in result.checks if c.name.startswith("same data on every device")), None)
    if agree is None:  # one side could not be placed at all: that is bad input, not a difference
        why = "; ".join(f"{c.name}: {c.detail}" for c in result.checks if c.failed)
        raise ShardingValidationError(f"cannot compare: {why}")
    if fmt == "json":
        sys.stdout.write(_json(result, a, b, mesh_text if mesh_text is not None else str(mesh)) + "\n")
    else:
        _text(result, a, b, make_console())
    return 0 if result.ok else 1


def inline_mesh(*texts: str) -> Mesh:
    """The mesh to compare on when none is given: the first one a side carries inline
    (``#sdy.sharding<mesh<[...]>, ...>``). Each side keeps its own inline mesh; they must span one
    device count."""
    found: list[tuple[str, Mesh]] = []
    for text in texts:
        with anchored_in(text):
            value = parse_input(text).value
        items = value.shardings if isinstance(value, TensorShardingPerValue) else (value,)
        found += [(text, m) for m in dict.fromkeys(getattr(x, "mesh", None) for x in items) if isinstance(m, Mesh)]
    if not found:
        raise click.UsageError("--mesh is needed: neither side carries its mesh inline")
    first = found[0][1]
    for text, m in found[1:]:
        if m.num_devices != first.num_devices:
            raise ShardingValidationError(
                f"the inline meshes span {first.num_devices} and {m.num_devices} devices ({first} and {m}); "
                "pass --mesh with the global mesh",
                text=text,
                pos=0,
            )
    return first


def _text(result: BackendResult, a: str, b: str, console: Console) -> None:
    from rich.markup import escape
    from rich.table import Table

    console.print(f"A ({result.forms[0]}): {escape(a)}\nB ({result.forms[1]}): {escape(b)}")
    for i, (sa, sb) in enumerate(zip(result.slices, result.other)):
        which = f", value {i}" if len(result.slices) > 1 else ""
        title = f"shape {'x'.join(map(str, sa.shape))}, backend {result.backend}{which}"
        table = Table(title=title, title_justify="left")
        for col in ("device", "A holds", "B holds", ""):
            table.add_column(col, no_wrap=True)
        bad = set(sa.differing(sb))
        for d in sa.devices:
            mark = "[red]differs[/red]" if d in bad else "[green]same[/green]"
            table.add_row(str(d), fmt_box(sa.held(d)), fmt_box(sb.held(d)), mark)
        console.print(table)
    for c in result.checks:
        if c.failed and not c.name.startswith("same data on every device"):
            console.print(f"[red]✗[/red] {escape(c.name)}: {escape(c.detail)}")
    if result.ok:
        console.print("[green]same placement:[/green] every device holds the same data under A and B")
    elif result.differing_devices:
        devs = ", ".join(map(str, result.differing_devices))
        console.print(f"[red]different placement:[/red] the data differ on device(s) {devs}")
    else:
        console.print("[red]the placements agree, but a check failed (see above)[/red]")


def _json(result: BackendResult, a: str, b: str, mesh_text: str) -> str:
    from shardconv.ui.jsonout import document, dumps

    def held(s: Any, d: int) -> list[list[int]] | None:
        box = s.held(d)
        return None if box is None else [list(r) for r in box]

    def side(slices: Any) -> list[dict[str, Any]]:
        return [{"shape": list(s.shape), "devices": {str(d): held(s, d) for d in s.devices}} for s in slices]

    doc = document(
        "compare",
        a={"text": a, "form": result.forms[0], "values": side(result.slices)},
        b={"text": b, "form": result.forms[1], "values": side(result.other)},
        mesh=mesh_text,
        backend=result.backend,
        same=result.ok,
        differing_devices=list(result.differing_devices),
        checks=[
            {"name": c.name, "status": c.status, "detail": c.detail, "devices": list(c.devices)} for c in result.checks
        ],
        summary=[f"device {d}: A {fmt_box(result.slices[0].held(d))} vs B {fmt_box(result.other[0].held(d))}"
                 for d in result.differing_devices] if result.slices and result.other else [],
    )
    return dumps(doc)
