"""What a scan yields: one ``ValueSite`` per sharding-related value found in a dump, with its byte
span, the tensor type it annotates, the value it names and where that value sits."""

from __future__ import annotations

import enum
from dataclasses import KW_ONLY, field

from shardconv.core.records import record
from shardconv.text.layered import StringEncoding

PLAIN = StringEncoding()  # a value written as is, not inside a string literal
Shape = tuple[int | None, ...]  # None for a dynamic dim (``?`` / ``<=N``)


class SiteKind(str, enum.Enum):
    """Which parser reads ``ValueSite.text``. The values are stable (they appear in JSON output)."""

    HLO = "hlo"  # an HloSharding string (text, or a serialized OpSharding in ``data``)
    SDY_SHARDING = "sdy.sharding"  # #sdy.sharding<...>
    SDY_SHARDING_BARE = "sdy.sharding.bare"  # <@mesh, [...]> of an op (sharding_constraint, reshard, ...)
    SDY_PER_VALUE = "sdy.sharding_per_value"  # #sdy.sharding_per_value<[...]>
    SDY_PER_VALUE_LIST = "sdy.sharding_list"  # [<...>, <...>] (manual_computation in/out_shardings)
    SDY_MESH = "sdy.mesh"  # #sdy.mesh<...> or the <...> of a `sdy.mesh @name = <...>` declaration
    STABLEHLO_MESH = "stablehlo.mesh"  # the {axes = [...]} StableHLO copy of an sdy.mesh declaration
    COLLECTIVE_MESH = "collective.mesh"  # @name of a mesh a collective's replica groups use
    MANUAL_AXES = "sdy.manual_axes"  # {"a", "b"} or #sdy<manual_axes{...}>
    NUM_PARTITIONS = "num_partitions"  # the integer
    UNSPECIFIED_DIMS = "unspecified_dims"  # [1, 2] from backend_config="unspecified_dims=[...]"
    EXPECTED_ERROR = "expected-error"  # a lit `expected-error` marker; ``target_line`` says where
    MODULE_START = "module"  # an HloModule / MLIR module header or a `// -----` split: meshes reset
    # The axes a collective names (sdy.all_gather [{}, {"y"}], sdy.all_reduce {"y"}, ...); ``value`` is the
    # mesh its out_sharding names (``@mesh`` or an inline ``mesh<[...]>``), the mesh they must belong to.
    COLLECTIVE_AXES = "sdy.collective_axes"
    # MLIR's shard dialect; ``value`` is the grid's @name: a grid declaration `shard.grid @g(shape = 2x4)` (a
    # mesh whose axes have no names) and a `shard.sharding @g split_axes = [[0], []] ...` op.
    SHARD_GRID = "shard.grid"
    SHARD_SHARDING = "shard.sharding"
    # Shardy's propagation records (XLA's shardy-verbose dumps); never values a rule checks:
    SDY_ORIGINS = "sdy.sharding_origins"  # {axis = "origin", ...}, or [{...}, ...] per result
    SDY_ORIGIN_NAME = "sdy.sharding_origin_name"  # the name of an op that is an origin: constraint_0, mc_0
    SDY_EDGES = "sdy.propagation_edges"  # #sdy.propagation_edges<[...]>, or [...] per result / block argument
    OPERANDS = "operands"  # "%a, %b": the operands of an op carrying a record, or of a return


RECORD_KINDS = frozenset({SiteKind.SDY_ORIGINS, SiteKind.SDY_ORIGIN_NAME, SiteKind.SDY_EDGES, SiteKind.OPERANDS})


@record
class ValueSite:
    """A value in a dump. Positions are 1-based lines and byte columns; ``start``/``end`` is the byte
    span of ``raw`` in the file (what ``--fix`` replaces), ``text`` the decoded value."""

    _: KW_ONLY
    path: str
    kind: SiteKind
    site: str  # the attribute or syntax it came from: "sharding=", "mhlo.sharding", "sdy.sharding_constraint", ...
    line: int
    col: int
    end_line: int
    end_col: int
    start: int
    end: int
    raw: bytes
    text: str
    data: bytes | None = None  # a binary (serialized OpSharding) value
    encoding: StringEncoding = PLAIN
    value: str | None = None  # "%arg0", "result[1]", "%param.1", "@mesh", "module"
    shapes: tuple[Shape | None, ...] | None = None  # tensor type(s) annotated; one per result
    target_line: int | None = None  # EXPECTED_ERROR only
    line_text: bytes = field(default=b"", repr=False, compare=False)  # the source line (shared, not copied)
    line_cut: int = field(default=0, compare=False)  # the byte of the line ``line_text`` starts at (a window)
    # Where the value sits, as the scan saw it: its MLIR function or HLO computation, and whether that
    # is the entry one; the op defining the value; an HLO parameter's number; an HLO ROOT; a signature.
    function: str | None = field(default=None, compare=False)
    computation: str | None = field(default=None, compare=False)
    entry: bool = field(default=False, compare=False)
    op: str | None = field(default=None, compare=False)
    param: int | None = field(default=None, compare=False)
    root: bool = field(default=False, compare=False)
    signature: bool = field(default=False, compare=False)
    # The scan started this value but could not read it whole: "unfinished" (it does not end on its line:
    # a cut string or bracket, a cut file), "undecodable" (its string's escapes do not decode), "not-utf8"
    # (a byte that is not UTF-8 outside a comment: the site runs from it to its line's end).
    broken: str | None = field(default=None, compare=False)

    @property
    def ranks(self) -> tuple[int | None, ...] | None:
        if self.shapes is None:
            return None
        return tuple(None if s is None else len(s) for s in self.shapes)

    @property
    def rank(self) -> int | None:
        """Rank of the single annotated tensor, when it is known and there is exactly one."""
        r = self.ranks
        return r[0] if r is not None and len(r) == 1 else None

    @property
    def mesh_name(self) -> str | None:
        """For SDY_MESH / STABLEHLO_MESH / COLLECTIVE_MESH / COLLECTIVE_AXES / SHARD_*: the symbol name (no ``@``)."""
        v = self.value
        return v[1:] if v and v.startswith("@") else None


@record
class FileKind:
    """What the sniffer made of a file: "hlo", "mlir", "mixed", or "skip" with a reason."""

    kind: str
    reason: str = ""

    @property
    def skipped(self) -> bool:
        return self.kind == "skip"


__all__ = ["PLAIN", "RECORD_KINDS", "FileKind", "Shape", "SiteKind", "ValueSite"]
