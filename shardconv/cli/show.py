"""``shardconv show``: which device holds which tile, the replication groups, and every spelling."""

from __future__ import annotations

from dataclasses import KW_ONLY, replace
from typing import TYPE_CHECKING, Any

import click

from shardconv.cli.options import FORMAT_HELP, context, mesh_option, shared_options, text_argument, xla_version_option
from shardconv.cli.spell import render_target
from shardconv.convert import resolve
from shardconv.convert.resolve import import_verdict, needs_sdy
from shardconv.core.arguments import rank_list
from shardconv.core.errors import LimitExceededError, ShardingError
from shardconv.core.model import HloSharding, Kind, Mesh, TensorSharding, TensorShardingPerValue
from shardconv.core.placement import placement
from shardconv.core.records import record
from shardconv.formats.detect import HLO, SDY, Input, anchored_in
from shardconv.formats.sdy.write import print_mesh
from shardconv.formats.xla_versions import DEFAULT_XLA_VERSION
from shardconv.ui.console import make_console, use_color, wrap_width
from shardconv.ui.device_ids import compress_ids
from shardconv.ui.tiles import render_placement
from shardconv.ui.wrap import wrapped

if TYPE_CHECKING:
    from shardconv.cli.options import Context
    from shardconv.convert.resolve import OnMesh, Outcome
    from shardconv.core.placement import Placement

# (label, --to target) of the spellings ``show`` lists, in order.
SPELLINGS = (
    ("sdy", "sdy"),
    ("HLO V2", "v2"),
    ("HLO V1", "v1"),
    ("HLO V3", "v3"),
    ("spec", "spec"),
    ("proto", "proto-hex"),
)
JSON_KEYS = {"sdy": "sdy", "v2": "hlo_v2", "v1": "hlo_v1", "v3": "hlo_v3", "spec": "spec", "proto-hex": "proto_hex"}


@record
class Shown:
    """Everything ``show`` prints for one (non-tuple) sharding."""

    _: KW_ONLY
    input: Input
    hlo: HloSharding
    mesh: Mesh | None
    synthetic: bool  # the mesh is the one XLA's importer invented (no --mesh)
    placement: Placement
    spellings: tuple[tuple[str, Outcome], ...]  # (target, text or why not)
    xla: OnMesh | ShardingError | None


def build(inp: Input, ctx: Context, xla_version: str = DEFAULT_XLA_VERSION) -> Shown:
    """Compute the placement and spellings of ``inp`` on ``ctx.mesh`` (pure), spelled as XLA
    ``xla_version`` writes them."""
    rank = resolve.input_rank(inp, ctx.rank)
    hlo = resolve.as_hlo(inp, ctx.mesh, rank=rank)
    n = ctx.mesh.num_devices if ctx.mesh is not None else None
    if inp.kind == "sdy" and n is None:
        n = resolve.sdy_mesh(resolve.value_as(inp, TensorSharding), None).num_devices
    refuse_undrawable(hlo, n)
    shape = ctx.shape if ctx.shape is not None else inp.shape  # a JAX type states its shape
    place = placement(hlo, shape=shape, num_devices=n, rank=rank if isinstance(rank, int) else None)
    on: OnMesh | ShardingError
    try:
        on = resolve.as_sdy(inp, ctx.mesh, rank=rank)
    except ShardingError as e:
        on = e
    spellings: list[tuple[str, Outcome]] = []
    for _, target in SPELLINGS:
        if needs_sdy(inp, target, ctx.mesh) and isinstance(on, ShardingError):
            spellings.append((target, on))
            continue
        spellings.append((target, resolve.attempt(render_target, inp, target, ctx, on, rank, xla_version=xla_version)))
    xla: OnMesh | ShardingError | None = None
    if hlo.is_tiled or hlo.kind.value in ("replicated", "maximal", "unknown"):
        try:
            xla = resolve.xla_view(hlo, rank=rank)
        except ShardingError as e:
            xla = e
    mesh = ctx.mesh if ctx.mesh is not None else (on.mesh if not isinstance(on, ShardingError) else None)
    synthetic = ctx.mesh is None and not isinstance(on, ShardingError) and on.synthetic
    return Shown(
        input=inp, hlo=hlo, mesh=mesh, synthetic=synthetic, placement=place, spellings=tuple(spellings), xla=xla
    )


MAX_DRAWN = 1 << 16  # devices show draws, a tile or device a line: about 2 s and 50 MB


def refuse_undrawable(hlo: HloSharding, num_devices: int | None) -> None:
    """Refuse a sharding over more devices than ``show`` draws, before anything is drawn."""
    count = max([num_devices or 0] + [h.tile.num_devices for h in (hlo.elements or (hlo,)) if h.tile is not None])
    if count > MAX_DRAWN:
        raise LimitExceededError(
            f"{hlo} spans {count:,} devices; show draws at most {MAX_DRAWN:,}, one a line "
            "(convert takes it)"
        )


def json_doc(s: Shown) -> dict[str, Any]:
    from shardconv.ui import jsonout

    return jsonout.document(
        "show",
        input={"text": s.input.text, "kind": s.input.kind},
        hlo=str(s.hlo),
        mesh=jsonout.mesh_dict(s.mesh, synthetic=s.synthetic) if s.mesh is not None else None,
        placement=jsonout.placement_dict(s.placement),
        spellings={
            JSON_KEYS[t]: {"text": o, "error": None} if isinstance(o, str) else {"text": None, "error": o.message}
            for t, o in s.spellings
        },
        xla_import=_xla_json(s),
    )


def _mesh_is_synthetic(s: Shown) -> bool:
    return s.synthetic


def _xla_json(s: Shown) -> dict[str, Any] | None:
    from shardconv.ui import jsonout

    if s.xla is None:
        return None
    if isinstance(s.xla, ShardingError):
        return {"error": jsonout.error_dict(s.xla)}
    return {
        "mesh": jsonout.mesh_dict(s.xla.mesh, synthetic=True),
        "sharding": str(s.xla.sharding),
        "differs_from_mesh": s.mesh is not None and import_verdict(s.hlo, s.xla.mesh, s.mesh).distorted,
    }


# --------------------------------------------------------------------------------------------------
# text output
# --------------------------------------------------------------------------------------------------


def summary_line(s: Shown) -> str:
    """``rank 2 · 4 tiles × 2 replicas · 8 devices · shape 32x32`` and a ``mesh ...`` line."""
    p = s.placement
    parts = [f"rank {p.rank}"]
    if p.kind == "tiled":
        reps = len(p.tiles[0].devices) if p.tiles else 0
        parts.append(f"{len(p.tiles)} tiles" + (f" × {reps} replicas" if reps > 1 else ""))
    else:
        parts.append(p.kind)
    n = p.num_devices
    parts.append(f"{n} device{'s' if n != 1 else ''}" if n else "every device")
    if p.shape is not None:
        parts.append("shape " + "x".join(map(str, p.shape)))
    line = " · ".join(parts)
    if s.mesh is not None:
        line += f"\nmesh {s.mesh.shape_str() or '<[]>'}" + (" (synthetic: XLA's importer)" if s.synthetic else "")
    return line


def groups_text(p: Placement, limit: int = 16) -> str:
    """``4 groups of 2: {0,1} {2,3} ...`` (or 'none' when every device holds distinct data)."""
    sizes = {len(g) for g in p.groups}
    if sizes == {0}:
        return "one: every device holds the whole tensor"
    if sizes == {1}:
        if len(p.groups) == 1:
            return f"none (device {p.groups[0][0]} holds the whole tensor)"
        return "none (every device holds different data)"
    size = f"of {sizes.pop()}" if len(sizes) == 1 else "of mixed sizes"
    shown = " ".join("{" + compress_ids(g) + "}" for g in p.groups[:limit])
    more = f" … (+{len(p.groups) - limit})" if len(p.groups) > limit else ""
    n = len(p.groups)
    return f"{n} group{'s' if n != 1 else ''} {size}: {shown}{more}"


def render_text(s: Shown, console: Any) -> None:
    """Print ``s`` on a rich console. Values wrap only at separators, and only on a terminal."""
    from rich.text import Text

    color = use_color(console.file)
    wrap = wrap_width(console.file)

    def say(text: str, style: str = "", *, indent: int = 0) -> None:
        console.print(Text(wrapped(text, wrap, indent=indent), style=style if color else ""), soft_wrap=True)

    say(str(s.hlo), "bold")
    say(summary_line(s), "dim")
    console.print()
    for r in render_placement(s.placement, width=console.width, color=color, wrap=wrap):
        console.print(r, crop=False, soft_wrap=True)
    groups = "replication groups "
    console.print(
        Text(groups, style="bold" if color else "") + Text(wrapped(groups_text(s.placement), wrap, first=len(groups))),
        soft_wrap=True,
    )
    console.print()
    console.print(Text("spellings", style="bold underline" if color else ""))
    label_width = max(len(label) for label, _ in SPELLINGS)
    lead = 2 + label_width + 2
    for label, target in SPELLINGS:
        outcome = dict(s.spellings)[target]
        if isinstance(outcome, str):
            value, style = outcome or '"" (the empty proto: replicated)', ""
        else:
            value, style = f"not expressible: {outcome.message}", "yellow"
        row = Text(f"  {label:<{label_width}}  ", style="bold" if color else "")
        row.append(wrapped(value, wrap, indent=lead, first=lead), style=style if color else "")
        console.print(row, soft_wrap=True)
    if s.xla is None or _mesh_is_synthetic(s):
        if _mesh_is_synthetic(s):
            console.print()
            console.print("no --mesh: sdy, V3 and spec are on the mesh XLA's importer would invent;")
            console.print("pass --mesh (e.g. --mesh batch=2,model=4) to see them on your real mesh")
        return
    console.print()
    if isinstance(s.xla, ShardingError):
        say(f"XLA's importer: cannot convert this ({s.xla.message})")
        return

    assert s.mesh is not None  # a synthetic mesh returned above
    verdict = import_verdict(s.hlo, s.xla.mesh, s.mesh)
    say(verdict.headline, "bold red" if verdict.distorted else "bold")
    say("  " + print_mesh(s.xla.mesh, form="decl"), indent=4)
    say("  " + str(s.xla.sharding), indent=4)


EPILOG = """\b
Examples:
  shardconv show '{devices=[1,4,2]<=[8] last_tile_dim_replicate}' --mesh batch=2,model=4
  shardconv show '#sdy.sharding<@mesh, [{}, {"model"}]>' --mesh batch=2,model=4 --shape 32x32
  shardconv show '{devices=[2,2,2]<=[8]}' --shape 4x4x4
  shardconv show "P('batch', None)" --mesh @model.mlir --format json
  shardconv show '{devices=[2,4]<=[8]}' --shape 16x64 --format svg > grid.svg
"""
PICTURE_FORMATS = ("svg", "html")


@click.command(epilog=EPILOG, context_settings={"max_content_width": 100})
@click.argument("text")
@mesh_option()
@shared_options(
    ("text", "json", *PICTURE_FORMATS),
    f"{FORMAT_HELP}; svg or html: the device grid as a picture (cells sized by --shape)",
)
@xla_version_option()
def show(
    text: str, mesh_text: str | None, from_kind: str, rank: int | None, shape_text: str | None, fmt: str,
    xla_version: str,
) -> int:
    """Show what each device holds: a tile grid for any rank (in the style of
    jax.debug.visualize_sharding), the replication groups, the slice each device owns (with --shape),
    every equivalent spelling, and the mesh XLA's importer would invent. TEXT '-' reads it from
    standard input.
    """
    ctx = context(mesh_text, rank, shape_text)
    text = text_argument(text)
    with anchored_in(text):
        inp = resolve.parse_on_mesh(text, from_kind, ctx.mesh)
        parts = elements(inp)
        shown = [build(p, c, xla_version) for p, c in zip(parts, element_contexts(ctx, len(parts)))]
    if fmt == "json":
        from shardconv.ui import jsonout

        drop = ("schema", "command")
        doc = json_doc(shown[0]) if parts == [inp] else jsonout.document(
            "show",
            input={"text": inp.text, "kind": inp.kind},
            elements=[{k: v for k, v in json_doc(s).items() if k not in drop} for s in shown],
        )
        click.echo(jsonout.dumps(doc))
        return 0
    if fmt in PICTURE_FORMATS:
        click.echo(picture(shown, fmt), nl=False)
        return 0

    console = make_console()
    for i, one in enumerate(shown):
        if parts != [inp]:
            console.rule(f"element {i}", align="left")
        render_text(one, console)
    return 0


def element_contexts(ctx: Context, count: int) -> list[Context]:
    """``--rank 2,0``: element i of a tuple is shown at rank i; a single rank applies to every element."""
    if not isinstance(ctx.rank, tuple):
        return [ctx] * count
    return [replace(ctx, rank=r) for r in rank_list(ctx.rank, count, "show")]


def picture(shown: list[Shown], fmt: str) -> str:
    """``--format svg``: the one sharding's grid; ``html``: a page with a grid per element."""
    from shardconv.ui.picture import html_fragment, html_page, svg

    def caption(s: Shown) -> str:
        shape = s.placement.shape
        return str(s.hlo) + (f" on shape {'x'.join(map(str, shape))}" if shape is not None else "")

    if fmt == "svg":
        if len(shown) != 1:
            raise click.UsageError(f"--format svg draws one sharding and this one has {len(shown)}: use --format html")
        return svg(shown[0].placement, caption=caption(shown[0]))
    if len(shown) == 1:
        return html_page(shown[0].placement, caption=caption(shown[0]))
    page = html_page(shown[0].placement, caption=caption(shown[0]))
    more = "".join(html_fragment(s.placement, caption=f"element {i}: {caption(s)}") for i, s in enumerate(shown[1:], 1))
    return page.replace("</body>", more + "</body>", 1)


def elements(inp: Input) -> list[Input]:
    """A tuple / per-value sharding is shown element by element; anything else as itself."""
    v = inp.value
    if isinstance(v, TensorShardingPerValue):
        return [Input(str(s), SDY, s) for s in v.shardings]
    if isinstance(v, HloSharding) and v.kind is Kind.TUPLE:
        return [Input(str(e), HLO, e) for e in v.elements]
    return [inp]
