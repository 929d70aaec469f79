"""shardconv: parse, convert and check XLA HLO and Shardy tensor shardings.

Names are resolved lazily so ``import shardconv`` (and ``shardconv --version``) stay fast.
"""

from __future__ import annotations

from shardconv.core.version import VERSION as __version__

from shardconv.core.lazy import lazy_exports
from shardconv.core.printing import load_printers_with


def _load_printers() -> None:
    import shardconv.formats  # noqa: F401  importing it registers the printers behind str(model)


load_printers_with(_load_printers)

_EXPORTS: dict[str, str] = {
    # errors
    "ShardingError": "shardconv.core.errors",
    "ShardingSyntaxError": "shardconv.core.errors",
    "ShardingValidationError": "shardconv.core.errors",
    "NotExpressibleError": "shardconv.core.errors",
    "LimitExceededError": "shardconv.core.errors",
    "Suggestion": "shardconv.core.errors",
    # model
    "HloSharding": "shardconv.core.model",
    "TileAssignment": "shardconv.core.model",
    "SubgroupType": "shardconv.core.model",
    "Kind": "shardconv.core.model",
    "ShardGroup": "shardconv.core.model",
    "OpMetadata": "shardconv.core.model",
    "MeshSharding": "shardconv.core.model",
    "Mesh": "shardconv.core.model",
    "MeshAxis": "shardconv.core.model",
    "AxisRef": "shardconv.core.model",
    "SubAxis": "shardconv.core.model",
    "DimSharding": "shardconv.core.model",
    "TensorSharding": "shardconv.core.model",
    "TensorShardingPerValue": "shardconv.core.model",
    "ManualAxes": "shardconv.core.model",
    "PartitionSpec": "shardconv.core.model",
    # parsing (text -> model)
    "parse_hlo": "shardconv.formats",
    "parse_mesh": "shardconv.formats",
    "parse_sdy": "shardconv.formats",
    "parse_sdy_per_value": "shardconv.formats",
    "parse_manual_axes": "shardconv.formats",
    "parse_partition_spec": "shardconv.formats",
    # verification
    "verify": "shardconv.formats.sdy.verify",
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
