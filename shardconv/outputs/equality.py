"""Whether two shardings are equal as XLA's ``HloSharding::operator==`` says (jaxlib 0.10.2), and why not.

``--expect`` compares a plugin's report with the module this way, so a report passes exactly when XLA
would take it for the module's sharding. The rules, each checked against jaxlib in
tests/outputs/test_outputs_pjrt.py (docs/pjrt.md lists them):

- metadata never counts; V1 and V2 spellings of one device array are equal;
- tile dims, device array, subgroup types and shard group must all agree (``[2,2]`` is not ``[4,1]``,
  a manual subgroup is not a replicated one, ``{maximal device=0}`` is not ``{replicated}``);
- a V3 sharding against a V2 one: the V3 one is first converted to its tile array;
- two V3 shardings are compared structurally: mesh axis sizes and device order (not the axis names),
  each dim's axes and whether it is closed, unreduced and manual axes (explicit ``replicated`` axes
  do not count); so ``mesh['a'=2,'b'=4]`` with ``{'a'}`` is not ``mesh['a'=8]`` with ``{'a':(1)2}``,
  although both place the data alike; any two fully replicated V3 shardings are equal, whatever their
  mesh or rank.
"""

from __future__ import annotations

from shardconv.convert.spellings import v3_to_v2
from shardconv.core.errors import ShardingError
from shardconv.core.model import AxisRef, HloSharding, Kind, MeshSharding
from shardconv.core.placement import placement


def _named_key(ms: MeshSharding) -> tuple[object, ...]:
    index = {n: i for i, n in enumerate(ms.mesh.axis_names)}

    def refs(axes: tuple[AxisRef, ...]) -> tuple[tuple[int, object], ...]:
        return tuple((index[a.name], a.sub_axis) for a in axes)

    dims = tuple((refs(d.axes), d.is_closed) for d in ms.dims)
    return (ms.mesh.is_maximal, ms.mesh.axis_sizes, ms.mesh.device_ids, dims, refs(ms.unreduced), refs(ms.manual))


def _fully_replicated(ms: MeshSharding) -> bool:
    return not ms.mesh.is_maximal and not ms.unreduced and not ms.manual and not any(d.axes for d in ms.dims)


def _tile_key(h: HloSharding) -> tuple[object, ...]:
    tile = None if h.tile is None else (h.tile.dims, h.tile.devices)
    return (h.kind, tile, h.subgroups, h.device, h.shard_group)


def xla_equal(a: HloSharding, b: HloSharding) -> bool:
    """``a == b`` as XLA's ``HloSharding::operator==`` answers it (module docstring)."""
    return difference(a, b) is None


def difference(a: HloSharding, b: HloSharding, num_devices: int = 1) -> str | None:
    """None when XLA holds ``a`` (the module's) and ``b`` (the report's) equal; else the first thing that
    differs, in words (for devices, the first device that holds another tile)."""
    if a.kind is Kind.TUPLE or b.kind is Kind.TUPLE:
        if a.kind is not b.kind or len(a.elements) != len(b.elements):
            return f"{_what(a)} in the module but {_what(b)} in the report"
        for i, (x, y) in enumerate(zip(a.elements, b.elements)):
            d = difference(x, y, num_devices)
            if d is not None:
                return f"tuple element {i}: {d}"
        return None
    if a.mesh_sharding is not None and b.mesh_sharding is not None:
        return _named_difference(a.mesh_sharding, b.mesh_sharding)
    a, b = v3_to_v2(a), v3_to_v2(b)
    if _tile_key(a) == _tile_key(b):
        return None
    return _tile_difference(a, b) or _first_device(a, b, num_devices)


def _what(h: HloSharding) -> str:
    if h.kind is Kind.TUPLE:
        return f"a tuple of {len(h.elements)}"
    if h.kind is Kind.TILED and h.tile is not None:
        return f"rank {h.rank}, tiled"
    return str(h.kind.value)


def _first(pairs: list[tuple[str, object, object]]) -> str | None:
    for label, x, y in pairs:
        if x != y:
            return f"{label}: {x} in the module, {y} in the report"
    return None


def _named_difference(a: MeshSharding, b: MeshSharding) -> str | None:
    if _fully_replicated(a) and _fully_replicated(b):
        return None
    if _named_key(a) == _named_key(b):
        return None
    if a.mesh.is_maximal or b.mesh.is_maximal:
        return f"{_v3_what(a)} in the module but {_v3_what(b)} in the report"
    found = _first(
        [
            (
                "mesh axis sizes (XLA compares two V3 meshes axis by axis, not by placement)",
                list(a.mesh.axis_sizes),
                list(b.mesh.axis_sizes),
            ),
            ("mesh device order", list(a.mesh.device_ids), list(b.mesh.device_ids)),
            ("rank", len(a.dims), len(b.dims)),
        ]
    )
    if found is not None:
        return found
    for i, (x, y) in enumerate(zip(a.dims, b.dims)):
        if _named_key(_only_dim(a, i)) != _named_key(_only_dim(b, i)):
            opened = "" if x.is_closed == y.is_closed else " (an open dim is not a closed one)"
            return f"dim {i}: {_dim_text(a, i)} in the module, {_dim_text(b, i)} in the report{opened}"
    return _first([("unreduced axes", _refs_text(a, a.unreduced), _refs_text(b, b.unreduced)),
                   ("manual axes", _refs_text(a, a.manual), _refs_text(b, b.manual))])


def _v3_what(ms: MeshSharding) -> str:
    return f"maximal on device {ms.mesh.device_ids[0]}" if ms.mesh.is_maximal else "a V3 sharding on a mesh"


def _only_dim(ms: MeshSharding, i: int) -> MeshSharding:
    return MeshSharding(mesh=ms.mesh, dims=(ms.dims[i],))


def _refs_text(ms: MeshSharding, refs: tuple[AxisRef, ...]) -> str:
    return "{" + ", ".join(f"axis {ms.mesh.axis_names.index(r.name)}{_sub(r)}" for r in refs) + "}"


def _sub(r: AxisRef) -> str:
    return "" if r.sub_axis is None else f":({r.sub_axis.pre_size}){r.sub_axis.size}"


def _dim_text(ms: MeshSharding, i: int) -> str:
    d = ms.dims[i]
    body = _refs_text(ms, d.axes)
    return body if d.is_closed else body[:-1] + (", ?}" if d.axes else "?}")


def _tile_difference(a: HloSharding, b: HloSharding) -> str | None:
    if a.kind is not b.kind:
        return f"{_what(a)} in the module but {_what(b)} in the report"
    if a.kind is Kind.MAXIMAL:
        return f"device {a.device} in the module, device {b.device} in the report"
    if a.tile is not None and b.tile is not None and a.rank != b.rank:
        return f"rank {b.rank} reported for a rank-{a.rank} sharding"
    found = _first(
        [
            ("tile dims", list(a.tile.dims) if a.tile else None, list(b.tile.dims) if b.tile else None),
            ("last_tile_dims", [t.value for t in a.subgroups], [t.value for t in b.subgroups]),
            ("shard group", _group(a), _group(b)),
        ]
    )
    return found


def _group(h: HloSharding) -> str:
    return "none" if h.shard_group is None else f"{h.shard_group.kind} {h.shard_group.id}"


def _first_device(a: HloSharding, b: HloSharding, num_devices: int) -> str:
    """``device 1 holds tile [0, 1] per the module but tile [1, 0] per the report`` for the first device
    that differs."""
    def where(h: HloSharding) -> dict[int, tuple[int, ...]]:
        try:
            p = placement(h, num_devices=max(num_devices, h.tile.num_devices if h.tile else 1))
        except ShardingError:
            return {}
        return {d: t.index for t in p.tiles for d in t.devices}

    wa, wb = where(a), where(b)
    for d in sorted(set(wa) | set(wb)):
        if wa.get(d) != wb.get(d):
            fa = "no tile" if d not in wa else f"tile {list(wa[d])}"
            fb = "no tile" if d not in wb else f"tile {list(wb[d])}"
            return f"device {d} holds {fa} per the module but {fb} per the report"
    return "same tiles on the same devices, in another order within a replica group"
