"""Converters between the models (never text): sdy -> HLO, HLO -> sdy on a real mesh, XLA's own
mesh-less import, partition specs, HLO V1/V2/V3 spellings, and round trips."""

from .partition_spec import from_partition_spec, to_partition_spec
from .roundtrip import Finding, MeshComparison, RoundTripReport, Step, compare_meshes, roundtrip
from .spellings import to_v1, to_v2, to_v3, v3_to_v2
from .suggest import suggestions, whole_axis_alternative
from .to_hlo import export_layout, to_hlo
from .to_sdy import same_assignment, to_sdy, to_sdy_manual
from .xla_import import xla_import

__all__ = [
    "Finding",
    "MeshComparison",
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
