"""What each device holds under an HloSharding: tile index per device, tile boxes with XLA's padding,
replica groups.

The one HLO-side placement routine: ``shardconv show`` renders it and the reference backend's HLO side
derives its slices from it. (The backend's Shardy side stays independent on purpose: mesh coordinates.)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import KW_ONLY
from math import prod

from shardconv.core.device_order import strides, unravel
from shardconv.core.errors import ShardingValidationError
from shardconv.core.model import HloSharding, Kind, SubgroupType
from shardconv.core.records import record

IndexBox = tuple[tuple[int, int], ...]  # the [start, stop) index range along each tensor dim


@record
class Tile:
    """One tile of the tensor: its index per tensor dim, the devices holding it (ascending), and its
    slice of the shape when one is known."""

    index: tuple[int, ...]
    devices: tuple[int, ...]
    slice: IndexBox | None = None


@record
class Placement:
    """Every tile of a sharding and the groups of devices that hold the same data."""

    _: KW_ONLY
    kind: str  # "tiled" | "replicated" | "maximal" | "manual" | "unknown" | "unreduced"
    tile_counts: tuple[int, ...]
    tiles: tuple[Tile, ...]
    groups: tuple[tuple[int, ...], ...]  # devices holding identical data (size 1 = no replication)
    subgroups: tuple[str, ...]  # trailing subgroup types of the tile array
    shape: tuple[int, ...] | None = None

    @property
    def num_devices(self) -> int:
        return sum(len(g) for g in self.groups)

    @property
    def rank(self) -> int:
        return len(self.tile_counts)


def placement(
    hlo: HloSharding, *, shape: tuple[int, ...] | None = None, num_devices: int | None = None, rank: int | None = None
) -> Placement:
    """The placement of ``hlo``; untiled kinds list ``num_devices`` devices (none when unknown: every
    device) and take their rank from ``shape`` or ``rank``."""
    if hlo.kind is Kind.TUPLE:
        raise ShardingValidationError("a tuple sharding has one placement per element; pick one")
    rank = len(shape) if shape is not None else (hlo.rank if hlo.rank is not None else rank or 0)
    if hlo.kind is Kind.TILED:
        return _tiled(hlo, shape)
    if hlo.kind is Kind.MESH:
        raise ShardingValidationError("convert the V3 sharding to V2 before asking for its placement")
    devices: tuple[int, ...]
    if hlo.kind is Kind.MAXIMAL:
        assert hlo.device is not None
        devices = (hlo.device,)
    else:
        devices = tuple(range(num_devices or 0))
    whole = tuple((0, d) for d in shape) if shape is not None else None
    tile = Tile(index=(0,) * rank, devices=devices, slice=whole)
    groups = (devices,) if hlo.kind in (Kind.REPLICATED, Kind.MAXIMAL) else tuple((d,) for d in devices)
    return Placement(
        kind=hlo.kind.value, tile_counts=(1,) * rank, tiles=(tile,), groups=groups, subgroups=(), shape=shape
    )


def _tiled(hlo: HloSharding, shape: tuple[int, ...] | None) -> Placement:
    assert hlo.tile is not None and hlo.rank is not None
    rank = hlo.rank
    if shape is not None and len(shape) != rank:
        raise ShardingValidationError(f"--shape has rank {len(shape)} but the sharding has rank {rank}")
    sub_dims = hlo.tile.dims[rank:]
    repl = [i for i, t in enumerate(hlo.subgroups) if t is SubgroupType.REPLICATED]
    tiles: list[Tile] = []
    groups: list[tuple[int, ...]] = []
    for index, block in tile_blocks(hlo):
        box = tile_box(index, hlo.tile_counts, shape) if shape is not None else None
        tiles.append(Tile(index, tuple(sorted(block)), box))
        groups.extend(replica_groups(block, sub_dims, repl))
    return Placement(
        kind="tiled",
        tile_counts=hlo.tile_counts,
        tiles=tuple(tiles),
        groups=tuple(groups),
        subgroups=tuple(t.value for t in hlo.subgroups),
        shape=shape,
    )


def tile_blocks(hlo: HloSharding) -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Each tile's index and the devices holding it (tile-array order: subgroup dims last, row-major)."""
    assert hlo.tile is not None and hlo.rank is not None
    counts = hlo.tile_counts
    per_tile = prod(hlo.tile.dims[hlo.rank :])
    devs = hlo.tile.devices
    for t in range(prod(counts)):
        yield unravel(t, counts), devs[t * per_tile : (t + 1) * per_tile]


def tile_box(index: tuple[int, ...], counts: tuple[int, ...], shape: tuple[int, ...]) -> IndexBox:
    """XLA's shard bounds: shard size ceil(dim/tiles); offset and limit clamped to the dim, so the last
    shards are short or empty when the dims don't divide."""
    box = []
    for i, n, dim in zip(index, counts, shape):
        size = -(-dim // n)
        start = min(i * size, dim)
        box.append((start, min(start + size, dim)))
    return tuple(box)


def replica_groups(block: tuple[int, ...], sub_dims: tuple[int, ...], repl: list[int]) -> list[tuple[int, ...]]:
    """Split one tile's devices into groups that hold identical data: only REPLICATED subgroup dims
    copy data; manual and unreduced ones give each device its own (partial or manual) value."""
    if not repl:
        return [(d,) for d in block]
    st = strides(sub_dims)
    keyed: dict[tuple[int, ...], list[int]] = {}
    for pos, dev in enumerate(block):
        key = tuple((pos // st[i]) % sub_dims[i] for i in range(len(sub_dims)) if i not in repl)
        keyed.setdefault(key, []).append(dev)
    return [tuple(sorted(g)) for g in keyed.values()]


def id_runs(ids: tuple[int, ...] | list[int]) -> list[tuple[int, int]]:
    """Sorted ids as ``(first, last)`` runs of consecutive ones: ``0,1,2,3,6`` -> ``(0, 3), (6, 6)``."""
    runs: list[tuple[int, int]] = []
    for d in ids:
        if runs and runs[-1][1] == d - 1:
            runs[-1] = (runs[-1][0], d)
        else:
            runs.append((d, d))
    return runs


def compress_ids(ids: tuple[int, ...] | list[int]) -> str:
    """``0,1,2,3,6`` -> ``0-3,6``: short device lists for tables (``all`` for an unknown set)."""
    if not ids:
        return "all"
    return ",".join(str(a) if a == b else f"{a}-{b}" if b > a + 1 else f"{a},{b}" for a, b in id_runs(ids))

# Placement equality: one home. ``same_assignment`` compares two HLO shardings structurally (XLA's own
# notion: the same tiles on the same devices); ``placement_key`` compares two placements by what each
# device holds (dims split once ignored), and ``differing_devices`` names the devices where two differ.

PlacementKey = tuple[object, ...]


def _collapsed(h: HloSharding) -> HloSharding:
    """The flag a tile array stands for when it holds a single tile: a one-device tile is replicated, and
    one tile of one subgroup type (XLA prints ``{devices=[1,2]<=[2] last_tile_dims={unreduced}}`` and
    reads it back as ``{unreduced}``) is that type."""
    if h.kind is not Kind.TILED or h.tile is None:
        return h
    if h.tile.num_devices == 1:
        return HloSharding.replicated()
    if len(set(h.subgroups)) == 1 and all(n == 1 for n in h.tile_counts):
        return HloSharding(kind=h.subgroups[0].flag)
    return h


def same_assignment(a: HloSharding, b: HloSharding) -> bool:
    """Same tiles on the same devices (replica groups compared as sets)."""
    if a == b:
        return True
    a, b = _collapsed(a), _collapsed(b)
    if a == b:
        return True
    if a.kind is not b.kind or a.subgroups != b.subgroups:
        return False
    if a.kind is Kind.TUPLE:
        return len(a.elements) == len(b.elements) and all(map(same_assignment, a.elements, b.elements))
    if a.kind is not Kind.TILED or a.tile is None or b.tile is None or a.tile.dims != b.tile.dims:
        return False
    g = a.tile.dims[-1] if a.subgroups and a.subgroups[-1] is SubgroupType.REPLICATED else 1
    da, db = a.tile.devices, b.tile.devices
    if g == 1 or da == db:  # canonical shardings already sort their replica groups
        return da == db
    return all(sorted(da[i : i + g]) == sorted(db[i : i + g]) for i in range(0, len(da), g))


def placement_key(p: Placement) -> PlacementKey:
    """What "the same placement" means: every device holds the same tile (dims split once are ignored,
    so ``{replicated}`` equals ``devices=[1,1,8]... last_tile_dim_replicate``) and the same devices
    share data."""
    return (_partial(p), tuple(sorted(device_cells(p).items())), frozenset(frozenset(g) for g in p.groups))


def device_cells(p: Placement) -> dict[int, tuple[tuple[int, int, int], ...]]:
    """Each device's tile as (dim, index, count) over the dims split more than once."""
    out: dict[int, tuple[tuple[int, int, int], ...]] = {}
    for t in p.tiles:
        cell = tuple((dim, i, n) for dim, (i, n) in enumerate(zip(t.index, p.tile_counts)) if n > 1)
        for d in t.devices:
            out[d] = cell
    return out


def _partial(p: Placement) -> tuple[str, ...]:
    """Kinds of non-copied data (manual, unreduced, unknown) the devices hold."""
    kinds = {s for s in p.subgroups if s != "replicated"}
    if p.kind in ("manual", "unknown", "unreduced"):
        kinds.add(p.kind)
    return tuple(sorted(kinds))


def differing_devices(a: Placement, b: Placement) -> tuple[int, ...]:
    """Devices that hold different data under ``a`` and ``b`` (a device only one of them uses counts)."""
    ca, cb = device_cells(a), device_cells(b)
    devices = set(ca) | set(cb)
    if _partial(a) != _partial(b):
        return tuple(sorted(devices))
    if not _partial(a):  # copies: a device's data is its tile, whoever else holds it
        return tuple(sorted(d for d in devices if ca.get(d) != cb.get(d)))
    ga = {d: frozenset(g) for g in a.groups for d in g}
    gb = {d: frozenset(g) for g in b.groups for d in g}
    return tuple(sorted(d for d in devices if ca.get(d) != cb.get(d) or ga.get(d) != gb.get(d)))
