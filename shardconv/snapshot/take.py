"""What a snapshot records of a dump: each entry argument and result, sharding constraint and named
value, with its sharding as written, its mesh and its placement as a canonical HLO V2 string."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import KW_ONLY, replace

from shardconv.core.errors import ShardingError
from shardconv.core.model import HloSharding, Mesh, TensorSharding
from shardconv.core.records import record
from shardconv.scan.api import Site, scan_path
from shardconv.scan.placed import elements_of, placing_hlo
from shardconv.scan.sites import Shape, SiteKind

SHARDING_KINDS = frozenset({SiteKind.HLO, SiteKind.SDY_SHARDING, SiteKind.SDY_SHARDING_BARE, SiteKind.SDY_PER_VALUE})
CONSTRAINT_OPS = frozenset({"sdy.sharding_constraint", "sdy.reshard", "mhlo.sharding_constraint"})


@record
class Entry:
    """One sharded value of one dump. ``placement`` is the V2 HLO sharding of its tiles on ``devices``
    devices (None, with ``error``, when it has none); two entries with equal placements hold the same
    data on the same devices whatever their spelling."""

    _: KW_ONLY
    dump: str
    value: str  # "@main:%arg0", "@main:result[1]", "@main:%2", "@main:%r#1"
    kind: str  # "argument" | "result" | "constraint" | "value"
    sharding: str  # as written
    mesh: str | None  # the mesh an sdy sharding refers to, as declared
    placement: str | None
    devices: int | None
    shape: Shape | None
    error: str | None = None


def snapshot_paths(paths: Sequence[str], labels: Sequence[str] | None = None) -> tuple[Entry, ...]:
    """Every entry of every dump, sorted by dump and value; ``labels`` name the dumps (default: their
    paths). OSError when a dump cannot be read."""
    out: list[Entry] = []
    for path, label in zip(paths, labels or paths):
        out.extend(dump_entries(path, label))
    return tuple(sorted(out, key=lambda e: (e.dump, e.value)))


def dump_entries(path: str, label: str) -> list[Entry]:
    """The entries of one dump, in file order; a value named twice keeps its first reading."""
    sites = list(scan_path(path))
    meshes = _meshes(sites)
    devices = _devices(sites, meshes)
    entries: dict[str, Entry] = {}
    for s in sites:
        if s.kind not in SHARDING_KINDS or s.name is None:
            continue
        base = (f"@{s.function}:" if s.function else "") + s.name
        if s.name == "module":
            base += f":{s.attribute}"
        for suffix, text, value, shape in _tensors(s):
            key = base + suffix
            if key not in entries:
                entries[key] = _entry(label, key, _kind(s, key), text, value, shape, meshes, devices, s.error)
    return list(entries.values())


def _tensors(s: Site) -> list[tuple[str, str, HloSharding | TensorSharding | None, Shape | None]]:
    """(key suffix, text, value, shape) per tensor the site shards: ``#i`` per element of a tuple."""
    shapes = s.shapes or ()
    elements = elements_of(s.value)
    if elements is None or len(elements) == 1:
        text, value = elements[0] if elements else (s.text, s.value)
        single = value if isinstance(value, (HloSharding, TensorSharding)) else None
        return [("", text, single, shapes[0] if len(shapes) == 1 else None)]
    return [
        (f"#{i}", text, value, shapes[i] if len(shapes) == len(elements) else None)
        for i, (text, value) in enumerate(elements)
    ]


def _kind(s: Site, key: str) -> str:
    if (s.name is not None and s.name.startswith("%arg") and s.op == "func.func") or s.op == "parameter":
        return "argument"
    if "result[" in key:
        return "result"
    return "constraint" if s.op in CONSTRAINT_OPS else "value"


def _entry(
    dump: str, key: str, kind: str, text: str, value: HloSharding | TensorSharding | None, shape: Shape | None,
    meshes: dict[str, Mesh], devices: int | None, error: ShardingError | None,
) -> Entry:
    from shardconv.convert.spellings import to_v2

    mesh = None
    if isinstance(value, TensorSharding):
        mesh = value.mesh if isinstance(value.mesh, Mesh) else meshes.get(value.mesh)
    if isinstance(value, TensorSharding) and mesh is not None and mesh.axes:
        devices = mesh.num_devices
    declared = None if mesh is None else f"@{mesh.name} = {mesh}" if mesh.name else str(mesh)
    entry = Entry(
        dump=dump, value=key, kind=kind, sharding=text, mesh=declared, placement=None, devices=devices, shape=shape
    )
    if value is None:
        return replace(entry, error=error.message if error is not None else "not a sharding")
    try:
        return replace(entry, placement=str(to_v2(placing_hlo(value, mesh))))
    except ShardingError as e:
        return replace(entry, error=e.message)


def _meshes(sites: Iterable[Site]) -> dict[str, Mesh]:
    """The meshes the dump declares by name (the first of each name wins, as ``check`` reads them)."""
    out: dict[str, Mesh] = {}
    for s in sites:
        if s.kind is SiteKind.SDY_MESH and s.name and s.name.startswith("@") and isinstance(s.value, Mesh):
            out.setdefault(s.name[1:], replace(s.value, name=s.name[1:]))
    return out


def _devices(sites: Sequence[Site], meshes: dict[str, Mesh]) -> int | None:
    """The dump's device count: ``num_partitions``, else its widest mesh, else its widest tiled HLO sharding."""
    for s in sites:
        if s.kind is SiteKind.NUM_PARTITIONS and isinstance(s.value, int):
            return s.value
    if meshes:
        return max(m.num_devices for m in meshes.values())
    tiled = [s.value.tile.num_devices for s in sites if isinstance(s.value, HloSharding) and s.value.tile is not None]
    return max(tiled, default=None)


__all__ = ["Entry", "dump_entries", "snapshot_paths"]
