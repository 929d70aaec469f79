"""Converters between the models (never text): sdy -> HLO, HLO -> sdy on a real mesh, XLA's own
mesh-less import, partition specs, HLO V1/V2/V3 spellings, and round trips.

The everyday converters load eagerly; the rest on first use, so ``shardconv convert`` pays for neither
(a lazy name must differ from its module's: ``roundtrip`` lives in round_trip.py for that reason)."""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from shardconv.convert.to_hlo import export_layout, to_hlo
from shardconv.convert.to_sdy import to_sdy, to_sdy_manual
from shardconv.convert.xla_import import xla_import
from shardconv.core.lazy import lazy_exports
from shardconv.core.placement import same_assignment

if _TYPE_CHECKING:
    from shardconv.convert.partition_spec import from_partition_spec, to_partition_spec
    from shardconv.convert.round_trip import (
        MeshComparison,
        RoundTripFinding,
        RoundTripReport,
        Step,
        compare_meshes,
        roundtrip,
    )
    from shardconv.convert.spellings import to_v1, to_v2, to_v3, v3_to_v2
    from shardconv.convert.suggest import suggestions, whole_axis_alternative

_LAZY = {
    **dict.fromkeys(("from_partition_spec", "to_partition_spec"), "shardconv.convert.partition_spec"),
    **dict.fromkeys(
        ("MeshComparison", "RoundTripFinding", "RoundTripReport", "Step", "compare_meshes", "roundtrip"),
        "shardconv.convert.round_trip",
    ),
    **dict.fromkeys(("to_v1", "to_v2", "to_v3", "v3_to_v2"), "shardconv.convert.spellings"),
    **dict.fromkeys(("suggestions", "whole_axis_alternative"), "shardconv.convert.suggest"),
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "MeshComparison",
    "RoundTripFinding",
    "RoundTripReport",
    "Step",
    "compare_meshes",
    "export_layout",
    "from_partition_spec",
    "roundtrip",
    "same_assignment",
    "suggestions",
    "to_hlo",
    "to_partition_spec",
    "to_sdy",
    "to_sdy_manual",
    "to_v1",
    "to_v2",
    "to_v3",
    "v3_to_v2",
    "whole_axis_alternative",
    "xla_import",
]
