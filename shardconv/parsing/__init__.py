"""Text -> model. The one place that loads the grammars and turns parse trees into model objects.

Each parser module is imported on first use, so a caller pays only for the grammar it needs.
"""

from .._lazy import lazy_exports

_EXPORTS = {
    "parse_hlo": "shardconv.parsing.hlo",
    "parse_hlo_text": "shardconv.parsing.hlo",
    "parse_hlo_proto": "shardconv.parsing.hlo",
    "parse_mesh": "shardconv.parsing.sdy",
    "parse_sdy": "shardconv.parsing.sdy",
    "parse_sdy_per_value": "shardconv.parsing.sdy",
    "parse_manual_axes": "shardconv.parsing.sdy",
    "parse_partition_spec": "shardconv.parsing.spec",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
