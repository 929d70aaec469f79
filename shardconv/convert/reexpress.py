"""Re-expresses a Shardy sharding from one mesh onto another through XLA's HLO export: how a sharding
on a synthetic ``_axis_N`` mesh is written on the real global mesh (the seed's fix)."""

from __future__ import annotations

from dataclasses import replace

from shardconv.convert.to_hlo import to_hlo
from shardconv.convert.to_sdy import to_sdy
from shardconv.core.errors import ShardingError
from shardconv.core.model import Mesh, TensorSharding, TensorShardingPerValue

SdyValue = TensorSharding | TensorShardingPerValue


def reexpress(s: SdyValue, old: Mesh, new: Mesh) -> SdyValue:
    """``s`` (on ``old``) on ``new``, placing every tile on the same devices; open empty dims stay open.
    Raises ShardingError (NotExpressibleError with suggestions) when ``new`` has no equivalent."""
    if isinstance(s, TensorShardingPerValue):
        return TensorShardingPerValue(tuple(_one(x, old, new) for x in s.shardings))
    return _one(s, old, new)


def _one(s: TensorSharding, old: Mesh, new: Mesh) -> TensorSharding:
    out = to_sdy(to_hlo(s, old), new, rank=s.rank)
    if not isinstance(out, TensorSharding):
        raise ShardingError(f"{s} became a tuple on {new}")
    dims = tuple(replace(d, is_closed=False) if not o.is_closed and not d.axes else d for d, o in zip(out.dims, s.dims))
    return replace(out, dims=dims, mesh=new.name or out.mesh)


__all__ = ["SdyValue", "reexpress"]
