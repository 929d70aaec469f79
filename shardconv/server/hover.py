"""What a hover on a sharding, a mesh or a mesh reference says, as Markdown: the device grid ``show``
draws, every spelling on the module's mesh (sdy, HLO V2, V3, partition spec), and an HLO string's axes
on the configured global mesh. Pure: the document's line and outline in, text out."""

from __future__ import annotations

import re
from collections.abc import Callable

from shardconv.convert import to_hlo, to_partition_spec, to_sdy, to_v2, to_v3
from shardconv.core.errors import NotExpressibleError, ShardingError
from shardconv.core.model import HloSharding, Mesh, TensorSharding, TensorShardingPerValue
from shardconv.core.placement import placement
from shardconv.core.records import record
from shardconv.formats.sdy.write import print_mesh
from shardconv.scan.api import Site, scan_text
from shardconv.ui.tiles import placement_text

GRID_WIDTH = 100  # columns the device grid may take in a hover
MESH_REF = re.compile(rb"@[A-Za-z_][\w.$-]*")


@record
class Target:
    """What the cursor is on: a value site of its line, or a ``@mesh`` reference (byte columns, 0-based)."""

    start: int
    end: int
    site: Site | None
    mesh_ref: str | None  # the name, without ``@``


def target_at(line_text: bytes, line: int, byte_col: int) -> Target | None:
    """The mesh reference, else the value site, under byte column ``byte_col`` of 1-based ``line``
    (the line is scanned alone: a hover never waits for the whole document)."""
    for m in MESH_REF.finditer(line_text):
        if m.start() <= byte_col < m.end():
            return Target(m.start(), m.end(), None, m.group()[1:].decode("utf-8", "replace"))
    for s in scan_text(line_text, path=f"<line {line}>"):
        if s.line == 1 and s.col - 1 <= byte_col < (s.end_col - 1 if s.end_line == 1 else len(line_text)):
            return Target(s.col - 1, s.end_col - 1 if s.end_line == 1 else len(line_text), s, None)
    return None


def hover_markdown(
    target: Target, line: int, global_mesh: Mesh | None, mesh_of: Callable[[str, int], Mesh | None], *, reading: bool
) -> str | None:
    """The hover for ``target`` on 1-based ``line``; ``mesh_of(name, line)`` gives a declared mesh
    (``reading``: the document's meshes are not known yet)."""
    if target.mesh_ref is not None:
        mesh = mesh_of(target.mesh_ref, line)
        return _mesh_text(target.mesh_ref, mesh) if mesh is not None else None
    site = target.site
    if site is None:
        return None
    if site.error is not None:
        return f"**{site.attribute}** does not parse: {site.error.message}"
    value = site.value
    if isinstance(value, Mesh):
        return _mesh_text((site.name or "@mesh").lstrip("@"), value)
    if isinstance(value, HloSharding):
        return _hlo_text(value, site.static_shape(0), global_mesh)
    if isinstance(value, TensorSharding):
        return _sdy_text(value, site.static_shape(0), mesh_of, line, reading)
    if isinstance(value, TensorShardingPerValue):
        return "\n\n---\n\n".join(
            f"**result {i}**\n\n" + _sdy_text(s, site.static_shape(i), mesh_of, line, reading)
            for i, s in enumerate(value.shardings)
        )
    return None


def _mesh_text(name: str, mesh: Mesh) -> str:
    n = mesh.num_devices
    axes = ", ".join(f"`{a.name}`={a.size}" for a in mesh.axes) or "none"
    ids = "iota" if mesh.explicit_device_ids is None else ", ".join(map(str, mesh.explicit_device_ids))
    decl = print_mesh(mesh, form="bare")
    return f"**mesh @{name}**: {n} device{'s' if n != 1 else ''}; axes {axes}; device ids {ids}\n\n```\n{decl}\n```"


def _hlo_text(hlo: HloSharding, shape: tuple[int, ...] | None, global_mesh: Mesh | None) -> str:
    rank = len(shape) if shape is not None else None
    n = global_mesh.num_devices if global_mesh is not None else None
    out = [f"**HLO sharding** `{hlo}`", _grid(hlo, shape, n)]
    rows: list[tuple[str, Callable[[], object]]] = [("HLO V2", lambda: to_v2(hlo))]
    if global_mesh is None:
        out.append("no global mesh configured: set `mesh` in `[tool.shardconv]` to see its axes")
    else:
        sdy = _attempt(lambda: to_sdy(hlo, global_mesh, rank=rank))
        out.append(f"**axes on the global mesh** `{global_mesh.shape_str()}`")
        rows = [
            ("sdy", lambda: _value(sdy)),
            *rows,
            ("HLO V3", lambda: to_v3(_one(_value(sdy)), global_mesh)),
            ("spec", lambda: to_partition_spec(_one(_value(sdy)), global_mesh)),
        ]
    out.append(_table(rows))
    return "\n\n".join(out)


def _sdy_text(
    sharding: TensorSharding,
    shape: tuple[int, ...] | None,
    mesh_of: Callable[[str, int], Mesh | None],
    line: int,
    reading: bool,
) -> str:
    name = sharding.mesh_name
    mesh = mesh_of(name.lstrip("@"), line) if name is not None else sharding.resolve_mesh()
    if mesh is None:
        why = "the document is still being read" if reading else "it is not declared in this module"
        return f"**sdy sharding** `{sharding}`\n\nno mesh @{name} to show it on: {why}"
    hlo = _attempt(lambda: to_hlo(sharding, mesh))
    grid = _grid(hlo, shape, mesh.num_devices) if isinstance(hlo, HloSharding) else ""
    rows: list[tuple[str, Callable[[], object]]] = [
        ("sdy", lambda: sharding),
        ("HLO V2", lambda: _value(hlo)),
        ("HLO V3", lambda: to_v3(sharding, mesh)),
        ("spec", lambda: to_partition_spec(sharding, mesh)),
    ]
    head = f"**sdy sharding** on mesh `{mesh.shape_str()}`"
    return "\n\n".join(x for x in (head, grid, _table(rows)) if x)


def _grid(hlo: HloSharding, shape: tuple[int, ...] | None, num_devices: int | None) -> str:
    """The grid ``shardconv show`` draws, in a code block (no colour)."""
    if hlo.is_tuple:
        return ""
    try:
        place = placement(hlo, shape=shape, num_devices=num_devices, rank=len(shape) if shape is not None else None)
    except ShardingError as e:
        return f"no placement: {e.message}"
    return f"```text\n{placement_text(place, width=GRID_WIDTH)}\n```"


def _table(rows: list[tuple[str, Callable[[], object]]]) -> str:
    lines = ["| spelling | |", "|---|---|"]
    for label, make in rows:
        got = _attempt(make)
        cell = f"not expressible: {got.message}" if isinstance(got, ShardingError) else f"`{got}`"
        lines.append(f"| {label} | {cell.replace('|', '&#124;')} |")
    return "\n".join(lines)


def _attempt(make: Callable[[], object]) -> object:
    try:
        return make()
    except ShardingError as e:
        return e


def _value(got: object) -> object:
    if isinstance(got, ShardingError):
        raise got
    return got


def _one(got: object) -> TensorSharding:
    if not isinstance(got, TensorSharding):
        raise NotExpressibleError(f"{got} is not one sharding")
    return got


__all__ = ["Target", "hover_markdown", "target_at"]
