"""A parsed sharding's placement on the mesh and device count in force where it sits: the one way every
engine (trace, diff, snapshot) turns a value into the devices that hold each tile."""

from __future__ import annotations

from functools import lru_cache

from shardconv.core.errors import ShardingError, ShardingValidationError
from shardconv.core.model import HloSharding, Kind, Mesh, TensorSharding, TensorShardingPerValue
from shardconv.core.placement import Placement, PlacementKey, placement, placement_key
from shardconv.core.records import record
from shardconv.scan.sites import SiteKind
from shardconv.scan.values import ParsedValue, parse_value


@record
class Placed:
    """A value's placement on its dump's mesh, or why there is none."""

    place: Placement | None
    key: PlacementKey | None
    error: str | None


def placing_hlo(v: HloSharding | TensorSharding, mesh: Mesh | None) -> HloSharding:
    """The V1/V2 HLO sharding whose tiles place ``v``: an sdy sharding exported on ``mesh``, a V3 one
    expanded; ShardingError when that cannot be done (an sdy sharding with no mesh)."""
    from shardconv.convert.spellings import v3_to_v2
    from shardconv.convert.to_hlo import to_hlo

    if isinstance(v, TensorSharding):
        if mesh is None:
            raise ShardingValidationError(f"mesh @{v.mesh} is not declared in this dump")
        return to_hlo(v, mesh)
    return v3_to_v2(v) if v.kind is Kind.MESH else v


@lru_cache(maxsize=1 << 12)
def place_of(v: HloSharding | TensorSharding, mesh: Mesh | None, devices: int | None, rank: int | None) -> Placed:
    """The placement of ``v``: an sdy sharding on ``mesh`` (on ``devices`` when the mesh has no axes), an
    HLO one on ``devices`` devices.
    Cached: the same sharding recurs in every dump of a log."""
    try:
        hlo = placing_hlo(v, mesh)
        if isinstance(v, TensorSharding):
            assert mesh is not None
            devices, rank = devices or mesh.num_devices, v.rank
        p = placement(hlo, num_devices=devices, rank=rank)
    except ShardingError as e:
        return Placed(None, None, e.message)
    return Placed(p, placement_key(p), None)


Tensor = tuple[str, HloSharding | TensorSharding]  # one tensor's sharding as printed, and its value


@lru_cache(maxsize=1 << 14)
def tensors_of(kind: SiteKind, text: str, data: bytes | None) -> tuple[Tensor, ...] | None:
    """Each element of a tuple / per-value sharding, as printed, with its value; None for any other
    value. Cached by the site's text, as ``parse_value`` is: printing costs far more than the lookup."""
    return elements_of(parse_value(kind, text, data)[0])


def elements_of(parsed: ParsedValue | None) -> tuple[Tensor, ...] | None:
    """The elements of a parsed tuple / per-value sharding, as printed, with their values; None for any
    other value."""
    items: tuple[HloSharding | TensorSharding, ...]
    if isinstance(parsed, HloSharding) and parsed.kind is Kind.TUPLE:
        items = tuple(parsed.elements)
    elif isinstance(parsed, TensorShardingPerValue):
        items = tuple(parsed.shardings)
    else:
        return None
    return tuple((str(e), e) for e in items)


__all__ = ["Placed", "Tensor", "elements_of", "place_of", "placing_hlo", "tensors_of"]
