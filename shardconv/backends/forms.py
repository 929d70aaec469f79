"""Turns an ``Example`` into two comparable sides (native forms per tensor value) and a shape.

Text goes through the CLI's input detection and shardconv's parsers; the missing form comes from
shardconv's converters. Nothing here parses, prints or converts by itself.
"""

from __future__ import annotations

from math import lcm, prod
from typing import TypeVar

from shardconv.backends.base import Example, ShardingLike
from shardconv.core.errors import ShardingError, ShardingValidationError
from shardconv.core.model import (
    HloSharding,
    Kind,
    Mesh,
    PartitionSpec,
    ShardSharding,
    TensorSharding,
    TensorShardingPerValue,
)
from shardconv.core.records import record
from shardconv.formats.detect import parse_input

HLO, SDY = "hlo", "sdy"
ValueSharding = HloSharding | TensorSharding  # the sharding of one tensor value, in either format


@record
class Side:
    """One side of a comparison: its format and its sharding per tensor value (tuples are split)."""

    kind: str  # HLO | SDY
    values: tuple[ValueSharding, ...]
    label: str  # how it was given, e.g. "hlo", "spec", "sdy (converted)"

    @property
    def ranks(self) -> tuple[int | None, ...]:
        return tuple(_rank(v) for v in self.values)


def to_model(x: ShardingLike, mesh: Mesh) -> tuple[HloSharding | TensorSharding | TensorShardingPerValue, str]:
    """The model object for ``x`` and the name of the form it came in."""
    if isinstance(x, str):
        parsed = parse_input(x, num_devices=mesh.num_devices)
        value, label = parsed.value, parsed.kind
    else:
        value, label = x, _LABELS.get(type(x), type(x).__name__)
    if isinstance(value, PartitionSpec):
        try:
            from shardconv.convert import from_partition_spec
        except ImportError as e:
            raise ShardingValidationError(f"partition specs need shardconv.convert.from_partition_spec: {e}") from None
        return from_partition_spec(value, mesh), "spec"
    if isinstance(value, ShardSharding):  # grid axis i is the mesh's axis i
        from shardconv.convert.shard_dialect import shard_to_sdy

        return shard_to_sdy(value, mesh), "shard"
    return value, label


_LABELS: dict[type, str] = {HloSharding: HLO, TensorSharding: SDY, TensorShardingPerValue: SDY, PartitionSpec: "spec"}


def native_side(x: ShardingLike, mesh: Mesh) -> Side:
    """The side as given: an HLO side, or a Shardy side (specs and HLO V3 are Shardy-shaped)."""
    value, label = to_model(x, mesh)
    if isinstance(value, TensorShardingPerValue):
        return Side(SDY, value.shardings, label)
    if isinstance(value, TensorSharding):
        return Side(SDY, (value,), label)
    if value.kind is Kind.MESH and value.mesh_sharding is not None:
        ms = value.mesh_sharding
        if ms.manual:
            raise ShardingValidationError(f"{value}: manual axes do not describe a data placement")
        return Side(
            SDY, (TensorSharding(mesh=ms.mesh, dims=ms.dims, replicated=ms.replicated, unreduced=ms.unreduced),), label
        )
    if value.kind is Kind.TUPLE:
        return Side(HLO, value.elements, label)
    return Side(HLO, (value,), label)


def converted_side(side: Side, mesh: Mesh, ranks: tuple[int | None, ...]) -> Side:
    """The other format of ``side`` on ``mesh``, through shardconv's converters."""
    from shardconv import convert

    if side.kind == HLO:
        hlos = _typed(side.values, HloSharding)
        vals = tuple(_one_value(convert.to_sdy(h, mesh, rank=r)) for h, r in zip(hlos, ranks))
        return Side(SDY, vals, "sdy (converted)")
    return Side(HLO, tuple(convert.to_hlo(s, mesh) for s in _typed(side.values, TensorSharding)), "hlo (converted)")


_Format = TypeVar("_Format", HloSharding, TensorSharding)


def _typed(values: tuple[ValueSharding, ...], cls: type[_Format]) -> tuple[_Format, ...]:
    """A side's values as the class its ``kind`` promises (``native_side`` builds them so)."""
    typed = tuple(v for v in values if isinstance(v, cls))
    if len(typed) != len(values):
        raise TypeError(f"a side mixes formats: {values}")
    return typed


def _one_value(s: TensorSharding | TensorShardingPerValue) -> TensorSharding:
    """The backends compare one tensor value at a time: a nested tuple has no single sharding."""
    if isinstance(s, TensorShardingPerValue):
        raise ShardingValidationError(f"{s}: a nested tuple holds several values; give them one at a time")
    return s


Shapes = tuple[tuple[int, ...], ...]  # one tensor shape per value of a side


def resolve(example: Example) -> tuple[Side, Side | None, Shapes, str]:
    """Side A, side B (None when it could not be built: see the returned error text), and the shape of
    each value."""
    mesh = example.mesh
    a = native_side(example.sharding, mesh)
    b = native_side(example.other, mesh) if example.other is not None else None
    if b is not None and len(a.values) != len(b.values):
        raise ShardingValidationError(f"the two sides have {len(a.values)} and {len(b.values)} values")
    shapes = value_shapes(example, a, b)
    error = ""
    if b is None:
        try:
            b = converted_side(a, mesh, tuple(len(shape) for shape in shapes))
        except ShardingError as e:  # a conversion refused is a finding of this example, not a crash
            error = f"{type(e).__name__}: {e}"
    return a, b, shapes, error


def value_shapes(example: Example, a: Side, b: Side | None) -> Shapes:
    """The shape of each value: ``example.shapes``, else ``example.shape`` for every value, else the
    default of each (``default_shape``)."""
    count = len(a.values)
    if example.shapes is not None:
        if len(example.shapes) != count:
            raise ShardingValidationError(f"{len(example.shapes)} shapes given for {count} values: give one per value")
        return tuple(tuple(shape) for shape in example.shapes)
    if example.shape is not None:
        return (tuple(example.shape),) * count
    return tuple(default_shape(a, b, example.mesh, i) for i in range(count))


def default_shape(a: Side, b: Side | None, mesh: Mesh, index: int = 0) -> tuple[int, ...]:
    """Smallest shape divisible by every tile count of value ``index`` on both sides, times 2. A value
    of any rank (``{replicated}``) takes the rank the other values share (2 when they share none)."""
    sides = [a] + ([b] if b is not None else [])
    ranks = {r for s in sides if (r := _rank(s.values[index])) is not None}
    if len(ranks) > 1:
        raise ShardingValidationError(f"value {index} has rank {min(ranks)} on one side and {max(ranks)} on the other")
    if not ranks:
        ranks = {r for s in sides for r in s.ranks if r is not None}
    rank = ranks.pop() if len(ranks) == 1 else 2
    dims = [1] * rank
    for s in sides:
        for i, n in enumerate(_tile_counts(s.values[index], mesh) or ()):
            dims[i] = lcm(dims[i], n)
    return tuple(2 * d for d in dims)


def _rank(v: ValueSharding) -> int | None:
    return v.rank


def _tile_counts(v: ValueSharding, mesh: Mesh) -> tuple[int, ...] | None:
    if isinstance(v, TensorSharding):
        m = v.resolve_mesh(mesh)
        if any(not m.has_axis(r.name) for d in v.dims for r in d.axes):
            return None  # reported by the slice derivation
        return tuple(prod(r.size(m) for r in d.axes) for d in v.dims)
    if v.kind is Kind.TILED and v.tile is not None:
        return v.tile_counts
    return None
