"""shardconv: parse, convert and check XLA HLO and Shardy tensor shardings.

Names are resolved lazily so ``import shardconv`` (and ``shardconv --version``) stay fast.
"""

from __future__ import annotations

from ._lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # errors
    "ShardingError": "shardconv.errors",
    "ShardingSyntaxError": "shardconv.errors",
    "ShardingValidationError": "shardconv.errors",
    "NotExpressibleError": "shardconv.errors",
    "LimitExceededError": "shardconv.errors",
    "Suggestion": "shardconv.errors",
    # model
    "HloSharding": "shardconv.model",
    "TileAssignment": "shardconv.model",
    "SubgroupType": "shardconv.model",
    "Kind": "shardconv.model",
    "ShardGroup": "shardconv.model",
    "OpMetadata": "shardconv.model",
    "MeshSharding": "shardconv.model",
    "Mesh": "shardconv.model",
    "MeshAxis": "shardconv.model",
    "AxisRef": "shardconv.model",
    "SubAxis": "shardconv.model",
    "DimSharding": "shardconv.model",
    "TensorSharding": "shardconv.model",
    "TensorShardingPerValue": "shardconv.model",
    "ManualAxes": "shardconv.model",
    "PartitionSpec": "shardconv.model",
    # parsing (text -> model)
    "parse_hlo": "shardconv.parsing",
    "parse_mesh": "shardconv.parsing",
    "parse_sdy": "shardconv.parsing",
    "parse_sdy_per_value": "shardconv.parsing",
    "parse_manual_axes": "shardconv.parsing",
    "parse_partition_spec": "shardconv.parsing",
    # verification
    "verify": "shardconv.verify",
    # converters (model -> model)
    "to_hlo": "shardconv.convert",
    "to_sdy": "shardconv.convert",
    "xla_import": "shardconv.convert",
    "from_partition_spec": "shardconv.convert",
    "to_partition_spec": "shardconv.convert",
    "roundtrip": "shardconv.convert",
    "RoundTripReport": "shardconv.convert",
    # PJRT outputs
    "output_shardings": "shardconv.outputs",
}

__all__ = ["__version__", *_EXPORTS]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
