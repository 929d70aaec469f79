"""shardconv: parse, convert and check XLA HLO and Shardy tensor shardings.

Names are resolved lazily at run time so ``import shardconv`` (and ``shardconv --version``) stay fast;
type checkers read the same names from the ``TYPE_CHECKING`` block (``tests/library`` keeps the two equal).
"""

from __future__ import annotations

from shardconv.core.lazy import lazy_exports
from shardconv.core.printing import load_printers_with
from shardconv.core.version import VERSION as __version__

TYPE_CHECKING = False  # not from typing: `import shardconv` (and so `shardconv --version`) skips it
if TYPE_CHECKING:
    from shardconv.check.diagnostics import CheckFinding as CheckFinding
    from shardconv.check.engine import check_paths as check_paths
    from shardconv.check.engine import check_text as check_text
    from shardconv.convert.jax_interop import from_jax as from_jax
    from shardconv.convert.jax_interop import to_jax as to_jax
    from shardconv.convert.notes import conversion_notes as conversion_notes
    from shardconv.convert.partition_spec import (
        from_partition_spec as from_partition_spec,
    )
    from shardconv.convert.partition_spec import to_partition_spec as to_partition_spec
    from shardconv.convert.round_trip import RoundTripReport as RoundTripReport
    from shardconv.convert.round_trip import roundtrip as roundtrip
    from shardconv.convert.spellings import to_v1 as to_v1
    from shardconv.convert.spellings import to_v2 as to_v2
    from shardconv.convert.spellings import to_v3 as to_v3
    from shardconv.convert.spellings import v3_to_v2 as v3_to_v2
    from shardconv.convert.to_hlo import to_hlo as to_hlo
    from shardconv.convert.to_sdy import to_sdy as to_sdy
    from shardconv.convert.to_sdy import to_sdy_manual as to_sdy_manual
    from shardconv.convert.xla_import import xla_import as xla_import
    from shardconv.core.errors import LimitExceededError as LimitExceededError
    from shardconv.core.errors import NotExpressibleError as NotExpressibleError
    from shardconv.core.errors import ShardingError as ShardingError
    from shardconv.core.errors import ShardingSyntaxError as ShardingSyntaxError
    from shardconv.core.errors import ShardingValidationError as ShardingValidationError
    from shardconv.core.errors import Suggestion as Suggestion
    from shardconv.core.limits import Limits as Limits
    from shardconv.core.model import UNCONSTRAINED as UNCONSTRAINED
    from shardconv.core.model import AxisRef as AxisRef
    from shardconv.core.model import DimSharding as DimSharding
    from shardconv.core.model import HloSharding as HloSharding
    from shardconv.core.model import Kind as Kind
    from shardconv.core.model import ManualAxes as ManualAxes
    from shardconv.core.model import Mesh as Mesh
    from shardconv.core.model import MeshAxis as MeshAxis
    from shardconv.core.model import MeshSharding as MeshSharding
    from shardconv.core.model import OpMetadata as OpMetadata
    from shardconv.core.model import PartitionSpec as PartitionSpec
    from shardconv.core.model import ShardGrid as ShardGrid
    from shardconv.core.model import ShardGroup as ShardGroup
    from shardconv.core.model import ShardSharding as ShardSharding
    from shardconv.core.model import SubAxis as SubAxis
    from shardconv.core.model import SubgroupType as SubgroupType
    from shardconv.core.model import TensorSharding as TensorSharding
    from shardconv.core.model import TensorShardingPerValue as TensorShardingPerValue
    from shardconv.core.model import TileAssignment as TileAssignment
    from shardconv.core.model import Unconstrained as Unconstrained
    from shardconv.explain.build import explain_path as explain_path
    from shardconv.explain.model import Explanation as Explanation
    from shardconv.formats.coerce import torch_mesh as torch_mesh
    from shardconv.formats.hlo.read import parse_hlo as parse_hlo
    from shardconv.formats.sdy.read import parse_manual_axes as parse_manual_axes
    from shardconv.formats.sdy.read import parse_mesh as parse_mesh
    from shardconv.formats.sdy.read import parse_sdy as parse_sdy
    from shardconv.formats.sdy.read import parse_sdy_per_value as parse_sdy_per_value
    from shardconv.formats.sdy.verify_text import verify as verify
    from shardconv.formats.shard.read import parse_shard_grid as parse_shard_grid
    from shardconv.formats.shard.read import parse_shard_sharding as parse_shard_sharding
    from shardconv.formats.spec.read import parse_partition_spec as parse_partition_spec
    from shardconv.outputs.read import output_shardings as output_shardings
    from shardconv.scan.api import Site as Site
    from shardconv.scan.api import scan_path as scan_path
    from shardconv.scan.api import scan_text as scan_text
    from shardconv.scan.sites import SiteKind as SiteKind
    from shardconv.trace.changes import Change as Change
    from shardconv.trace.dumps import Dump as Dump
    from shardconv.trace.run import Seen as Seen
    from shardconv.trace.run import Skipped as Skipped
    from shardconv.trace.run import diff_paths as diff_paths
    from shardconv.trace.run import trace_paths as trace_paths
    from shardconv.trace.run import value_filter as value_filter
    from shardconv.trace.values import Observation as Observation


def _load_printers() -> None:
    import shardconv.formats  # noqa: F401  importing it registers the printers behind str(model)


def _load_pictures() -> None:
    import shardconv.ui.jupyter  # noqa: F401  importing it registers the HTML pictures behind _repr_html_


load_printers_with(_load_printers)
load_printers_with(_load_pictures, forms=("html",))

_EXPORTS: dict[str, str] = {
    # errors
    **dict.fromkeys(
        (
            "ShardingError",
            "ShardingSyntaxError",
            "ShardingValidationError",
            "NotExpressibleError",
            "LimitExceededError",
            "Suggestion",
        ),
        "shardconv.core.errors",
    ),
    # the ceilings a parse runs under (check_text(limits=...); --max-devices)
    "Limits": "shardconv.core.limits",
    # model
    **dict.fromkeys(
        (
            "HloSharding",
            "TileAssignment",
            "SubgroupType",
            "Kind",
            "ShardGroup",
            "OpMetadata",
            "MeshSharding",
            "Mesh",
            "MeshAxis",
            "AxisRef",
            "SubAxis",
            "DimSharding",
            "TensorSharding",
            "TensorShardingPerValue",
            "ManualAxes",
            "PartitionSpec",
            "ShardGrid",
            "ShardSharding",
            "UNCONSTRAINED",
            "Unconstrained",
        ),
        "shardconv.core.model",
    ),
    # parsing (text -> model)
    "parse_hlo": "shardconv.formats.hlo.read",
    **dict.fromkeys(
        ("parse_mesh", "parse_sdy", "parse_sdy_per_value", "parse_manual_axes"), "shardconv.formats.sdy.read"
    ),
    "parse_partition_spec": "shardconv.formats.spec.read",
    **dict.fromkeys(("parse_shard_grid", "parse_shard_sharding"), "shardconv.formats.shard.read"),
    "torch_mesh": "shardconv.formats.coerce",
    # verification
    "verify": "shardconv.formats.sdy.verify_text",
    # converters (model -> model)
    "to_hlo": "shardconv.convert.to_hlo",
    **dict.fromkeys(("to_sdy", "to_sdy_manual"), "shardconv.convert.to_sdy"),
    "xla_import": "shardconv.convert.xla_import",
    **dict.fromkeys(("from_partition_spec", "to_partition_spec"), "shardconv.convert.partition_spec"),
    **dict.fromkeys(("to_v1", "to_v2", "to_v3", "v3_to_v2"), "shardconv.convert.spellings"),
    **dict.fromkeys(("roundtrip", "RoundTripReport"), "shardconv.convert.round_trip"),
    # what convert says about a conversion beyond its answer (the CLI's --explain notes)
    "conversion_notes": "shardconv.convert.notes",
    # jax objects in and out (jax is imported only by to_jax)
    **dict.fromkeys(("from_jax", "to_jax"), "shardconv.convert.jax_interop"),
    # PJRT outputs
    "output_shardings": "shardconv.outputs.read",
    # reading IR dumps: every sharding-related value, typed
    **dict.fromkeys(("scan_text", "scan_path", "Site"), "shardconv.scan.api"),
    "SiteKind": "shardconv.scan.sites",
    # checking IR dumps
    "check_text": "shardconv.check.engine",
    "check_paths": "shardconv.check.engine",
    "CheckFinding": "shardconv.check.diagnostics",
    # following shardings through compiler passes (shardconv trace / diff)
    **dict.fromkeys(("trace_paths", "diff_paths", "value_filter", "Seen", "Skipped"), "shardconv.trace.run"),
    "Change": "shardconv.trace.changes",
    "Dump": "shardconv.trace.dumps",
    "Observation": "shardconv.trace.values",
    # why a value is sharded as it is (shardconv explain), from Shardy's propagation records
    "explain_path": "shardconv.explain.build",
    "Explanation": "shardconv.explain.model",
}

__all__ = ["__version__", *_EXPORTS]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
