"""Converters between the models (never text): sdy -> HLO, HLO -> sdy on a real mesh, XLA's own
mesh-less import, partition specs, and round trips."""

from .to_hlo import export_layout, to_hlo
from .to_sdy import same_assignment, to_sdy, to_sdy_manual
from .partition_spec import from_partition_spec, to_partition_spec
from .xla_import import xla_import

__all__ = ["export_layout", "from_partition_spec", "same_assignment", "to_hlo", "to_partition_spec", "to_sdy", "to_sdy_manual", "xla_import"]
