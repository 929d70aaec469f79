"""What to say about a conversion beyond its answer: the verdicts ``shardconv convert`` prints as notes
(synthetic or distorted meshes, XLA's import, near-misses, lost details), here so that the library
reaches the same ones (``conversion_notes``); the CLI only formats them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shardconv.convert.resolve import (
    OnMesh,
    as_sdy,
    default_target,
    import_verdict,
    input_rank,
    needs_sdy,
    parse_on_mesh,
    value_as,
    whole_axis_alternative,
    xla_view,
)
from shardconv.core.arguments import require_text
from shardconv.core.errors import ShardingError
from shardconv.core.model import HloSharding, Mesh, TensorSharding
from shardconv.core.placement import compress_ids, placement
from shardconv.core.records import record
from shardconv.formats.coerce import as_mesh
from shardconv.formats.detect import parse_mesh_option
from shardconv.formats.sdy.write import print_mesh

if TYPE_CHECKING:
    from shardconv.convert.to_sdy import RankArg
    from shardconv.formats.detect import Input


@record
class Note:
    """One explanation: a stable ``code`` for scripts, a sentence, and the values it refers to."""

    code: str
    message: str
    values: tuple[str, ...] = ()


def conversion_notes(
    text: str, *, mesh: Mesh | str | None = None, to: str | None = None, rank: RankArg = None
) -> tuple[Note, ...]:
    """The notes ``shardconv convert TEXT [--mesh MESH] [--to TO] [--rank RANK]`` prints with ``--explain``
    (``to`` defaults as there: sdy for HLO input, hlo otherwise)."""
    m: Mesh | None
    if isinstance(mesh, str):
        m = parse_mesh_option(mesh)
    else:
        m = None if mesh is None else as_mesh(mesh, "conversion_notes")
    inp = parse_on_mesh(require_text(text, "conversion_notes"), "auto", m)
    target = to or default_target(inp)
    r = input_rank(inp, rank)
    on = as_sdy(inp, m, rank=r) if needs_sdy(inp, target, m) else None
    xla = xla_view_of(inp, r) if inp.is_hlo and on is not None else None
    return notes_for(inp, target, on, xla)


def xla_view_of(inp: Input, rank: RankArg) -> OnMesh | ShardingError:
    """What XLA's importer makes of an HLO input alone, or why it cannot."""
    try:
        return xla_view(value_as(inp, HloSharding), rank=rank)
    except ShardingError as e:
        return e


def notes_for(inp: Input, target: str, on: OnMesh | None, xla: OnMesh | ShardingError | None) -> tuple[Note, ...]:
    """What the answer of converting ``inp`` to ``target`` alone does not say: synthetic or distorted
    meshes, near-misses, lost details. ``on`` is its Shardy side, ``xla`` XLA's import of an HLO input."""
    notes: list[Note] = []
    if on is not None and on.synthetic:
        notes.append(
            Note(
                "synthetic-mesh",
                "no --mesh: this is on the synthetic mesh XLA's importer would invent",
                (print_mesh(on.mesh, form="decl"), str(on.sharding)),
            )
        )
    elif isinstance(xla, ShardingError) and on is not None:
        notes.append(Note("xla-import-fails", f"XLA's importer cannot convert this input: {xla.message}"))
    elif xla is not None and on is not None and not isinstance(xla, ShardingError):
        vals = (print_mesh(xla.mesh, form="decl"), str(xla.sharding))
        verdict = import_verdict(value_as(inp, HloSharding), xla.mesh, on.mesh)
        notes.append(Note(verdict.rule, verdict.headline, vals))
    hlo = value_as(inp, HloSharding) if inp.is_hlo else None
    alt = whole_axis_alternative(hlo, on) if hlo is not None and on is not None else None
    if alt is not None and hlo is not None:
        notes.append(
            Note(
                "whole-axis-alternative",
                f"{alt[0].to_text(attribute=False)} (whole axes) is a different device order",
                (str(alt[1]), f"its tiles: {_tiles_on(alt[1])}", f"yours:     {_tiles_on(hlo)}"),
            )
        )
    if on is not None and on.manual_axes:
        names = ", ".join(f'"{a}"' for a in on.manual_axes)
        notes.append(
            Note(
                "manual-axes",
                f"the input is manual over {{{names}}}: those axes belong to the enclosing "
                "sdy.manual_computation (manual_axes), not to this sharding",
            )
        )
    if not inp.is_hlo and inp.kind == "sdy":
        dims = value_as(inp, TensorSharding).dims
        if target == "v3":  # V3 keeps open dims (XLA's NamedSharding has them), not priorities
            if any(d.priority is not None for d in dims):
                notes.append(Note("dropped", "HLO V3 has no priorities; they were dropped"))
        elif target != "sdy" and any(not d.is_closed or d.priority is not None for d in dims):
            notes.append(Note("dropped", "HLO has no open dims or priorities; they were dropped"))
    return tuple(notes)


def _tiles_on(hlo: HloSharding) -> str:
    """``{0,1} {2,3} ...``: the devices of each tile in tile order."""
    tiles = placement(hlo).tiles
    shown = " ".join("{" + compress_ids(t.devices) + "}" for t in tiles[:8])
    return shown + (" ..." if len(tiles) > 8 else "")


__all__ = ["Note", "conversion_notes", "notes_for", "xla_view_of"]
