"""``shardconv roundtrip``: through the other format and back on the real mesh, with the mesh XLA's
importer would rebuild. Exit 0 when the round trip holds, 1 on a finding, 2 on bad input."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from shardconv.cli.options import common_options, context, mesh_option, text_argument
from shardconv.convert import resolve, v3_to_v2
from shardconv.convert import roundtrip as run_roundtrip
from shardconv.formats.detect import SHARD, SPEC_KINDS, anchored_in
from shardconv.ui.console import make_console, use_color

if TYPE_CHECKING:
    from shardconv.backends.base import BackendResult
    from shardconv.cli.options import Context
    from shardconv.convert import RoundTripReport
    from shardconv.formats.detect import Input

LEVEL_MARK = {"error": ("✗", "red"), "warning": ("!", "yellow"), "note": ("·", "cyan")}
MESH_VERDICT_STYLE = {"same": "green", "coarsened": "yellow", "refined": "yellow", "distorted": "bold red"}


def report_for(inp: Input, ctx: Context) -> RoundTripReport:
    """The library's round trip of ``inp`` on ``ctx.mesh`` (a partition spec starts on the Shardy side)."""
    mesh = resolve.need_mesh(ctx.mesh, "roundtrip")
    rank = resolve.input_rank(inp, ctx.rank)
    value: Any = inp.value
    if inp.kind in (*SPEC_KINDS, SHARD):  # brought to the Shardy side on the mesh
        value = resolve.as_sdy(inp, mesh, rank=rank).sharding
    elif inp.is_hlo:
        value = v3_to_v2(value)
    return run_roundtrip(value, mesh, rank=rank)


def run_backend(name: str, inp: Input, ctx: Context) -> BackendResult:
    """Place real (or reference) data for the input and its conversion, device by device."""
    from shardconv.backends.base import Example
    from shardconv.cli.examples import pick_backends

    (backend,) = pick_backends(name)
    assert ctx.mesh is not None
    sharding: Any = inp.value
    if inp.kind == SHARD:  # the backends place Shardy and HLO shardings
        sharding = resolve.as_sdy(inp, ctx.mesh, rank=ctx.rank).sharding
    return backend.run(Example(name="roundtrip", mesh=ctx.mesh, sharding=sharding, shape=ctx.shape))


def holds(report: RoundTripReport, result: BackendResult | None) -> bool:
    return report.ok and (result is None or result.ok)


def json_doc(inp: Input, report: RoundTripReport, result: BackendResult | None) -> dict[str, Any]:
    from shardconv.ui import jsonout

    backend = None
    if result is not None:
        backend = {
            "name": result.backend,
            "ok": result.ok,
            "forms": list(result.forms),
            "checks": [
                {"name": c.name, "status": c.status, "detail": c.detail, "devices": list(c.devices)}
                for c in result.checks
            ],
        }
    return jsonout.document(
        "roundtrip",
        input={"text": inp.text, "kind": inp.kind},
        report=report.to_dict(),
        backend=backend,
        verdict="holds" if holds(report, result) else "finding",
    )


def render_text(inp: Input, report: RoundTripReport, result: BackendResult | None, console: Any) -> None:
    """Steps, mesh comparison, what was dropped, findings, backend checks, and one verdict line."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    color = use_color(console.file)

    def styled(text: str, style: str) -> Text:
        return Text(text, style=style if color else "")

    cmp = report.mesh
    direction = report.direction.replace("->", " → ")
    console.print(styled(f"round trip {direction}", "bold"), f"on {cmp.global_mesh.shape_str()}")
    steps = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    steps.add_column("step", no_wrap=True, style="bold" if color else "")
    steps.add_column("value", overflow="fold")
    for s in report.steps:
        steps.add_row(s.label, s.text)
    console.print(steps)
    console.print()

    meshes = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, title="mesh", title_justify="left")
    for col in ("axis", "global", "to_sdy", "XLA import"):
        meshes.add_column(col, no_wrap=True)
    for row in cmp.rows():
        meshes.add_row(str(row["index"]), row["global"] or "-", row["to_sdy"] or "-", row["xla_import"] or "-")
    console.print(meshes)
    verdict_style = MESH_VERDICT_STYLE.get(cmp.verdict, "")
    explanation = Text(f" — {cmp.explanation}" if cmp.explanation else "")
    console.print(Text("mesh: ") + styled(cmp.verdict, verdict_style) + explanation)
    console.print()

    if report.dropped:
        console.print(styled("dropped (HLO cannot carry it)", "bold"))
        for d in report.dropped:
            console.print(f"  {d}")
    else:
        console.print("dropped: nothing")
    shown = {cmp.explanation, "HLO cannot carry: " + "; ".join(report.dropped)}  # already printed above
    findings = [f for f in report.findings if f.message not in shown]
    if findings:
        console.print()
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        for f in findings:
            mark, style = LEVEL_MARK.get(f.level, ("?", ""))
            grid.add_row(styled(f"{mark} {f.level}", style), f.message)
        console.print(grid)
    if result is not None:
        console.print()
        checks = Table(
            box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False,
            title=f"backend {result.backend}", title_justify="left",
        )
        checks.add_column("check", overflow="fold")
        checks.add_column("status", no_wrap=True)
        checks.add_column("detail", overflow="fold")
        for c in result.checks:
            checks.add_row(c.name, styled(c.status, {"pass": "green", "fail": "red"}.get(c.status, "yellow")), c.detail)
        console.print(checks)
    console.print()
    console.print(verdict_line(report, result, color))


def verdict_line(report: RoundTripReport, result: BackendResult | None, color: bool = False) -> Any:
    """``verdict: holds`` or ``verdict: finding — ...`` naming what failed."""
    from rich.text import Text

    if holds(report, result):
        return Text("verdict: holds", style="bold green" if color else "")
    why = []
    if report.mesh.verdict == "distorted":
        why.append("distorted mesh")
    errors = [f for f in report.findings if f.level == "error" and f.message != report.mesh.explanation]
    if errors:
        why.append(f"{len(errors)} error(s)")
    if result is not None and not result.ok:
        why.append(f"backend {result.backend} check failed")
    return Text("verdict: finding — " + ", ".join(why or ["see above"]), style="bold red" if color else "")


EPILOG = """\b
Examples:
  shardconv roundtrip '{devices=[1,4,2]<=[8] last_tile_dim_replicate}' --mesh batch=2,model=4
  shardconv roundtrip '#sdy.sharding<@mesh, [{"batch", ?}, {"model"}p1]>' --mesh batch=2,model=4
  shardconv roundtrip "P(None, 'model')" --mesh @model.mlir --backend jax --shape 32x32

\b
Exit status: 0 the round trip holds, 1 a finding (changed device assignment,
a mesh XLA would distort, a failed backend check), 2 bad input.
"""


@click.command(epilog=EPILOG, context_settings={"max_content_width": 100})
@click.argument("text")
@mesh_option(required=True)
@common_options
@click.option(
    "--backend", "-b", type=click.Choice(["reference", "jax"]),
    help="Also place data with this backend (jax: real XLA on CPU devices) and check every device.",
)
def roundtrip(
    text: str, mesh_text: str, from_kind: str, rank: int | None, shape_text: str | None, fmt: str, backend: str | None
) -> int:
    """Round-trip a sharding through the other format on the real mesh: HLO → sdy → HLO, or
    sdy → HLO → sdy. Shows each step, what was dropped and why, and how XLA's mesh-less importer
    would rebuild the mesh (the "distorted mesh"). TEXT '-' reads it from standard input.
    """
    ctx = context(mesh_text, rank, shape_text)
    assert ctx.mesh is not None
    text = text_argument(text)
    with anchored_in(text):
        inp = resolve.parse_on_mesh(text, from_kind, ctx.mesh)
        report = report_for(inp, ctx)
        result = run_backend(backend, inp, ctx) if backend else None
    if fmt == "json":
        from shardconv.ui import jsonout

        click.echo(jsonout.dumps(json_doc(inp, report, result)))
    else:
        render_text(inp, report, result, make_console())
    return 0 if holds(report, result) else 1
