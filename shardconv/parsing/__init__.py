"""Text -> model. The one place that loads the grammars and turns parse trees into model objects."""

from .hlo import parse_hlo
from .sdy import parse_manual_axes, parse_mesh, parse_sdy, parse_sdy_per_value
from .spec import parse_partition_spec

__all__ = [
    "parse_hlo",
    "parse_manual_axes",
    "parse_mesh",
    "parse_partition_spec",
    "parse_sdy",
    "parse_sdy_per_value",
]
