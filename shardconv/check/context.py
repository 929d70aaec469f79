"""The rules' input: one module's distinct values plus what the run was asked (``CheckOptions``), with
the module-level facts every rule needs (its meshes, num_partitions, which meshes shardings use)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, field
from functools import cached_property
from types import MappingProxyType

from shardconv.check.stages import Stage, module_stage
from shardconv.core.errors import ShardingError
from shardconv.core.limits import Limits
from shardconv.core.model import (
    HloSharding,
    Mesh,
    ShardGrid,
    ShardSharding,
    TensorSharding,
    TensorShardingPerValue,
)
from shardconv.core.records import record
from shardconv.formats.sdy.verify import verify
from shardconv.scan.modules import DistinctValue, ModuleValues, named_mesh
from shardconv.scan.sites import SiteKind

REPLICATED_BYTES = 64 << 20  # replicated-large's default threshold
SdyValue = TensorSharding | TensorShardingPerValue
_SDY_KINDS = frozenset(
    {SiteKind.SDY_SHARDING, SiteKind.SDY_SHARDING_BARE, SiteKind.SDY_PER_VALUE, SiteKind.SDY_PER_VALUE_LIST}
)


@record
class CheckOptions:
    _: KW_ONLY
    mesh: Mesh | None = None
    allowed_meshes: tuple[tuple[int, ...], ...] | None = None
    warn_only: frozenset[str] = frozenset()
    ignore: frozenset[str] = frozenset()
    max_per_rule: int = 200
    replicated_bytes: int = REPLICATED_BYTES  # replicated-large: a replicated tensor over this many bytes
    report_unused: bool = False  # -v: report suppressions that silence nothing
    limits: Limits | None = None  # the ceilings to parse under (None: those in force where the check runs)


@record
class ModuleContext:
    _: KW_ONLY
    path: str
    module: ModuleValues
    options: CheckOptions
    stage: Stage  # where in a compile the module is: its text's say, else its dump file name's
    meshes: Mapping[str, Mesh]  # declared meshes by name (each named as declared)
    mesh_sites: Mapping[str, DistinctValue]
    anonymous_meshes: tuple[DistinctValue, ...]  # inline #sdy.mesh<...> values
    num_partitions: DistinctValue | None
    hlo: tuple[DistinctValue, ...]  # parsed HLO shardings
    sdy: tuple[DistinctValue, ...]  # parsed sdy shardings
    users: Mapping[str, tuple[DistinctValue, ...]] = field(default_factory=dict)  # mesh name -> sdy values
    collective_only: frozenset[str] = frozenset()  # meshes only collectives' replica groups use
    # MLIR's shard dialect: declared grids by name (each static one is in ``meshes`` too, its axes by
    # position) and the parsed ``shard.sharding`` ops
    grids: Mapping[str, ShardGrid] = field(default_factory=dict)
    shard: tuple[DistinctValue, ...] = ()

    def sharding_meshes(self) -> list[tuple[str, Mesh, DistinctValue]]:
        """Declared meshes that are (or may be) sharding meshes: all but the collectives-only ones."""
        return [(n, m, self.mesh_sites[n]) for n, m in self.meshes.items() if n not in self.collective_only]

    @property
    def imported(self) -> bool:
        """XLA imports this module's HLO shardings without a mesh: it holds HLO shardings, no sharding
        mesh of its own, and is a compile's input (not Shardy's export, not a per-device module)."""
        return bool(self.hlo) and not self.sharding_meshes() and self.stage is Stage.INPUT

    @cached_property
    def sdy_errors(self) -> tuple[ShardingError | None, ...]:
        """Shardy's verifier on each of ``sdy`` (None: accepted), run once for the rules that read it."""
        meshes = dict(self.meshes)
        out: list[ShardingError | None] = []
        for dv in self.sdy:
            assert isinstance(dv.value, (TensorSharding, TensorShardingPerValue))
            try:
                verify(dv.value, meshes)
            except ShardingError as e:
                out.append(e)
            else:
                out.append(None)
        return tuple(out)

    @property
    def partitions(self) -> int | None:
        v = self.num_partitions.value if self.num_partitions is not None else None
        return v if isinstance(v, int) else None


def mesh_names(s: SdyValue) -> tuple[str, ...]:
    items = s.shardings if isinstance(s, TensorShardingPerValue) else (s,)
    return tuple(x.mesh for x in items if isinstance(x.mesh, str))


def grid_as_mesh(grid: ShardGrid, glob: Mesh | None) -> Mesh | None:
    """``grid`` as the mesh rules see it: its axes by position, named as --mesh's when --mesh has its shape
    (a grid's axes have no names); None for a grid no mesh can be (a dynamic or zero size)."""
    from shardconv.convert.shard_dialect import grid_mesh

    names = glob.axis_names if glob is not None and tuple(glob.axis_sizes) == grid.shape else None
    try:
        return grid_mesh(grid, names)
    except ShardingError:
        return None


def build_context(path: str, module: ModuleValues, options: CheckOptions, file_stage: Stage) -> ModuleContext:
    """The rules' view of ``module`` of the file ``path`` (whose name says ``file_stage``)."""
    meshes: dict[str, Mesh] = {}
    grids: dict[str, ShardGrid] = {}
    shard: list[DistinctValue] = []
    sites: dict[str, DistinctValue] = {}
    anonymous: list[DistinctValue] = []
    num: DistinctValue | None = None
    hlo: list[DistinctValue] = []
    sdy: list[DistinctValue] = []
    collective: set[str] = set()
    for dv in module.values:
        kind, value = dv.site.kind, dv.value
        if kind is SiteKind.SDY_MESH and isinstance(value, Mesh):
            declared, name = named_mesh(dv.site, value), dv.site.mesh_name
            if declared is None or name is None:
                anonymous.append(dv)
            else:
                meshes[name] = declared
                sites[name] = dv
        elif kind is SiteKind.NUM_PARTITIONS and num is None:
            num = dv
        elif kind is SiteKind.HLO and isinstance(value, HloSharding):
            hlo.append(dv)
        elif kind in _SDY_KINDS and isinstance(value, (TensorSharding, TensorShardingPerValue)):
            sdy.append(dv)
        elif kind is SiteKind.COLLECTIVE_MESH and dv.site.mesh_name:
            collective.add(dv.site.mesh_name)
        elif kind is SiteKind.SHARD_GRID and isinstance(value, ShardGrid):
            grids[value.name] = value
            grid_mesh = grid_as_mesh(value, options.mesh)
            if grid_mesh is not None:
                meshes[value.name], sites[value.name] = grid_mesh, dv
        elif kind is SiteKind.SHARD_SHARDING and isinstance(value, ShardSharding):
            shard.append(dv)
    users: dict[str, list[DistinctValue]] = {}
    for dv in sdy:
        assert isinstance(dv.value, (TensorSharding, TensorShardingPerValue))
        for n in dict.fromkeys(mesh_names(dv.value)):
            users.setdefault(n, []).append(dv)
    return ModuleContext(
        path=path,
        module=module,
        options=options,
        stage=module_stage(file_stage, num.site.line_text if num is not None else b"", hlo),
        meshes=MappingProxyType(meshes),
        mesh_sites=MappingProxyType(sites),
        anonymous_meshes=tuple(anonymous),
        num_partitions=num,
        hlo=tuple(hlo),
        sdy=tuple(sdy),
        users=MappingProxyType({k: tuple(v) for k, v in users.items()}),
        collective_only=frozenset(collective - set(users)),
        grids=MappingProxyType(grids),
        shard=tuple(shard),
    )


__all__ = [
    "REPLICATED_BYTES", "CheckOptions", "ModuleContext", "SdyValue", "build_context", "grid_as_mesh", "mesh_names",
]
