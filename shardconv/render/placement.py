"""What each device holds under an HloSharding: its tile, its group of replicas, its slice of a shape.

Pure functions over the model; the CLI's ``show`` table and its JSON are built from ``Placement``.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..device_order import strides
from ..errors import ShardingValidationError
from ..model import HloSharding, Kind, SubgroupType


@dataclass(frozen=True)
class Tile:
    """One tile of the tensor: its index per tensor dim, the devices holding it (ascending), and for
    manual / unreduced subgroups the subgroup coordinates that tell those copies apart."""

    index: tuple[int, ...]
    devices: tuple[int, ...]
    slice: tuple[tuple[int, int], ...] | None = None  # [start, stop) per dim, when a shape is known


@dataclass(frozen=True)
class Placement:
    """Every tile of a sharding and the groups of devices that hold the same data."""

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
    return Placement(hlo.kind.value, (1,) * rank, (tile,), groups, (), shape)


def _tiled(hlo: HloSharding, shape: tuple[int, ...] | None) -> Placement:
    assert hlo.tile is not None and hlo.rank is not None
    dims, rank = hlo.tile.dims, hlo.rank
    if shape is not None and len(shape) != rank:
        raise ShardingValidationError(f"--shape has rank {len(shape)} but the sharding has rank {rank}")
    devs = hlo.tile.devices
    st = strides(dims)
    n_tiles = prod(dims[:rank])
    per_tile = prod(dims[rank:])
    # Flat position = tile * per_tile + subgroup position (row-major with the subgroup dims last).
    sub_dims = dims[rank:]
    repl = [i for i, t in enumerate(hlo.subgroups) if t is SubgroupType.REPLICATED]
    tiles: list[Tile] = []
    groups: list[tuple[int, ...]] = []
    for t in range(n_tiles):
        index = tuple((t * per_tile // st[d]) % dims[d] for d in range(rank))
        block = devs[t * per_tile : (t + 1) * per_tile]
        tiles.append(Tile(index, tuple(sorted(block)), _slice(index, hlo.tile_counts, shape)))
        groups.extend(_replica_groups(block, sub_dims, repl))
    return Placement(
        "tiled", tuple(dims[:rank]), tuple(tiles), tuple(groups), tuple(t.value for t in hlo.subgroups), shape
    )


def _replica_groups(block: tuple[int, ...], sub_dims: tuple[int, ...], repl: list[int]) -> list[tuple[int, ...]]:
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


def _slice(
    index: tuple[int, ...], counts: tuple[int, ...], shape: tuple[int, ...] | None
) -> tuple[tuple[int, int], ...] | None:
    """XLA's tile bounds: ceil-sized tiles, the last ones clipped (possibly empty) when dims don't divide."""
    if shape is None:
        return None
    out = []
    for i, n, size in zip(index, counts, shape):
        step = -(-size // n)
        out.append((min(i * step, size), min((i + 1) * step, size)))
    return tuple(out)


def compress_ids(ids: tuple[int, ...] | list[int]) -> str:
    """``0,1,2,3,6`` -> ``0-3,6``: short device lists for tables (``all`` for an unknown set)."""
    if not ids:
        return "all"
    parts: list[str] = []
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if j == i else f"{ids[i]}-{ids[j]}" if j > i + 1 else f"{ids[i]},{ids[j]}")
        i = j + 1
    return ",".join(parts)
