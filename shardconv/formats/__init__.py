"""Text -> model. The one place that loads the grammars and turns parse trees into model objects.

Each parser module is imported on first use, so a caller pays only for the grammar it needs.
"""

from shardconv.core.lazy import lazy_exports
from shardconv.formats.hlo import write as _hlo_write  # noqa: F401  registers the printers behind str(model)
from shardconv.formats.sdy import write as _sdy_write  # noqa: F401
from shardconv.formats.shard import write as _shard_write  # noqa: F401
from shardconv.formats.spec import write as _spec_write  # noqa: F401

_EXPORTS = {
    "parse_hlo": "shardconv.formats.hlo.read",
    "parse_hlo_text": "shardconv.formats.hlo.read",
    "parse_hlo_proto": "shardconv.formats.hlo.read",
    "parse_mesh": "shardconv.formats.sdy.read",
    "parse_sdy": "shardconv.formats.sdy.read",
    "parse_sdy_per_value": "shardconv.formats.sdy.read",
    "parse_manual_axes": "shardconv.formats.sdy.read",
    "parse_partition_spec": "shardconv.formats.spec.read",
    "parse_shard_grid": "shardconv.formats.shard.read",
    "parse_shard_sharding": "shardconv.formats.shard.read",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
