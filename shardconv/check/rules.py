"""The rules engine's per-value rules: each a pure function from a module's context to the results
it finds (``RuleResult``: a finding before it has a file position). Mesh-level rules: ``mesh_rules``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import KW_ONLY
from functools import lru_cache

from shardconv.check.context import ModuleContext
from shardconv.check.diagnostics import Fix, Rewrite
from shardconv.check.ids import RuleId
from shardconv.check.stages import PARTITIONER_COLLECTIVES, Stage
from shardconv.convert import to_hlo, to_sdy_manual
from shardconv.core.errors import (
    NotExpressibleError,
    ShardingError,
    ShardingSyntaxError,
)
from shardconv.core.mesh_invariants import verify_mesh
from shardconv.core.model import (
    CollectiveAxes,
    HloSharding,
    Mesh,
    ShardGrid,
    ShardSharding,
    TensorSharding,
    TensorShardingPerValue,
)
from shardconv.core.model import Kind as HloKind
from shardconv.core.placement import same_assignment
from shardconv.core.records import record
from shardconv.formats.hlo.write import print_hlo
from shardconv.formats.sdy.verify import verify_axis_refs
from shardconv.scan.modules import DistinctValue
from shardconv.scan.sites import SiteKind
from shardconv.scan.values import error_col


@record
class RuleResult:
    """What a rule's check found at ``at`` (its first place); ``col`` overrides the caret column. It
    names no rule: the record whose check found it does (``registry.Rule``)."""

    _: KW_ONLY
    at: DistinctValue
    message: str
    notes: tuple[str, ...] = ()
    fix: Fix | None = None
    col: int | None = None
    blocks_fix: str | None = None


Check = Callable[[ModuleContext], Iterator[RuleResult]]


def _what(dv: DistinctValue) -> str:
    return f"{dv.site.site}: " if dv.site.site else ""


def _suggestion_notes(e: ShardingError) -> tuple[str, ...]:
    """An error's suggestions (``try: ...``, ``did you mean ...?``) as finding notes."""
    return tuple(f"{s.prefix}{s.description}" + (f" {s.value}" if s.value else "") for s in e.suggestions)


def _parse_error(dv: DistinctValue, e: ShardingError) -> RuleResult:
    return RuleResult(at=dv, message=_what(dv) + e.message, notes=_suggestion_notes(e), col=error_col(dv.site, e))


def syntax(ctx: ModuleContext) -> Iterator[RuleResult]:
    """Values that do not parse."""
    for dv in ctx.module.values:
        if isinstance(dv.error, ShardingSyntaxError):
            yield _parse_error(dv, dv.error)


def verify(ctx: ModuleContext) -> Iterator[RuleResult]:
    """Values the parser's own checks reject, then Shardy's mesh verifier on every mesh, then Shardy's
    verifier on every sdy sharding (unknown meshes and axes, ...), then the axes collectives name."""
    for dv in ctx.module.values:
        if dv.error is not None and not isinstance(dv.error, ShardingSyntaxError):
            yield _parse_error(dv, dv.error)
    for dv in (*ctx.mesh_sites.values(), *ctx.anonymous_meshes):
        if not isinstance(dv.value, Mesh):
            continue  # a shard.grid: its mesh is made valid; _shard_dialect verifies the grid
        try:
            verify_mesh(dv.value)
        except ShardingError as e:
            yield RuleResult(at=dv, message=f"mesh {dv.site.value or ''}: {e.message}".replace(" :", ":"))
    for dv, rejected in zip(ctx.sdy, ctx.sdy_errors):
        if rejected is not None:
            yield RuleResult(
                at=dv, message=rejected.message, notes=_suggestion_notes(rejected), col=error_col(dv.site, rejected)
            )
    yield from _collective_axes(ctx)
    yield from _shard_dialect(ctx)


def _shard_dialect(ctx: ModuleContext) -> Iterator[RuleResult]:
    """MLIR's shard dialect as mlir-opt verifies it: each grid, then each sharding against the grid it
    names (an undeclared grid, an axis out of its range or used twice, halos, offsets)."""
    from shardconv.formats.shard.verify import verify_grid, verify_shard_sharding_in

    for dv in ctx.module.values:
        if dv.site.kind is SiteKind.SHARD_GRID and isinstance(dv.value, ShardGrid):
            try:
                verify_grid(dv.value)
            except ShardingError as e:
                yield RuleResult(at=dv, message=f"{dv.site.site} @{dv.value.name}: {e.message}")
    for dv in ctx.shard:
        assert isinstance(dv.value, ShardSharding)
        try:
            verify_shard_sharding_in(dv.value, ctx.grids, dv.site.text)
        except ShardingError as e:
            yield RuleResult(at=dv, message=f"{dv.site.site}: {e.message}", col=error_col(dv.site, e))


def rank_mismatch(ctx: ModuleContext) -> Iterator[RuleResult]:
    """Ranks against the annotated tensor types: sdy shardings Shardy's verifier accepts, then HLO shardings."""
    for dv, rejected in zip(ctx.sdy, ctx.sdy_errors):
        s = dv.value
        assert isinstance(s, (TensorSharding, TensorShardingPerValue))
        if rejected is None:
            for msg in _sdy_rank_issues(s, dv.site.ranks, ctx.meshes):
                yield RuleResult(at=dv, message=msg)
    for dv in ctx.hlo:
        assert isinstance(dv.value, HloSharding)
        for msg in _hlo_rank_issues(dv.value, dv.site.ranks):
            yield RuleResult(at=dv, message=msg)


def _collective_axes(ctx: ModuleContext) -> Iterator[RuleResult]:
    """The axes a collective names (Shardy's ``sdy.all_gather [{}, {"y"}]``, ``sdy.all_reduce {"y"}``, ...;
    StableHLO's ``#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [...]>``; XLA's
    ``replica_groups=mesh[...] {...}``) must be axes of their mesh, each once, as Shardy's collective
    verifier requires: the mesh its out_sharding names, the replica group's named or inline mesh."""
    from shardconv.formats.sdy.read import parse_mesh

    for dv in ctx.module.values:
        if dv.site.kind not in (SiteKind.COLLECTIVE_AXES, SiteKind.COLLECTIVE_MESH):
            continue
        if not isinstance(dv.value, CollectiveAxes):
            continue
        ref = dv.site.value or ""
        mesh: Mesh | None = dv.value.mesh or (_named_mesh(ctx, ref[1:]) if ref.startswith("@") else None)
        if mesh is None and not ref.startswith("@") and ref:
            try:
                mesh = parse_mesh(ref[len("#sdy."):] if ref.startswith("#sdy.") else ref[len("mesh"):])
            except ShardingError:
                mesh = None
        if mesh is None:
            continue  # no mesh, or an unknown one: the out_sharding's (or mesh rule's) own finding says so
        try:
            verify_axis_refs(dv.value.axes, mesh)
        except ShardingError as e:
            where = f"mesh {ref} = {mesh}" if ref.startswith("@") else f"its inline mesh {mesh}"
            unknown = e.message.startswith("unknown axis name")
            yield RuleResult(
                at=dv,
                message=f"{dv.site.site}: {e.message}: {where}" + (" has no such axis" if unknown else ""),
                notes=_suggestion_notes(e),
                col=error_col(dv.site, e),
            )


def _named_mesh(ctx: ModuleContext, name: str) -> Mesh | None:
    """The mesh ``@name`` declares in the module: an ``sdy.mesh``, else a ``stablehlo.mesh`` attribute."""
    if name in ctx.meshes:
        return ctx.meshes[name]
    for dv in ctx.module.values:
        if dv.site.kind is SiteKind.STABLEHLO_MESH and dv.site.mesh_name == name and isinstance(dv.value, Mesh):
            return dv.value
    return None


def _sdy_rank_issues(
    s: TensorSharding | TensorShardingPerValue, ranks: tuple[int | None, ...] | None, meshes: Mapping[str, Mesh]
) -> list[str]:
    if ranks is None:
        return []
    if isinstance(s, TensorShardingPerValue):
        if len(ranks) != len(s.shardings):
            return [f"{len(s.shardings)} shardings for {len(ranks)} values"]
        return [
            f"sharding {i} has rank {x.rank} but the tensor has rank {r}"
            for i, (x, r) in enumerate(zip(s.shardings, ranks))
            if r is not None and x.rank != r and not _is_maximal(x, meshes)
        ]
    if len(ranks) == 1 and ranks[0] is not None and s.rank != ranks[0] and not _is_maximal(s, meshes):
        return [f"sharding rank {s.rank} does not match the tensor rank {ranks[0]}"]
    return []


def _is_maximal(s: TensorSharding, meshes: Mapping[str, Mesh]) -> bool:
    m = s.mesh if isinstance(s.mesh, Mesh) else meshes.get(s.mesh) if isinstance(s.mesh, str) else None
    return m is not None and (m.is_maximal or m.is_empty) and not s.dims


def device_out_of_range(ctx: ModuleContext) -> Iterator[RuleResult]:
    """HLO shardings naming a device at or above num_partitions."""
    yield from device_issues(ctx, RuleId.DEVICE_OUT_OF_RANGE)


def device_issues(ctx: ModuleContext, rule: RuleId) -> Iterator[RuleResult]:
    """Each HLO sharding's first device issue against num_partitions (a device out of range, or a tile
    array over another device count), when it is ``rule``'s: a sharding gets one of the two, never both."""
    n = ctx.partitions
    if n is None:
        return
    for dv in ctx.hlo:
        assert isinstance(dv.value, HloSharding)
        for found, msg in _device_issues(dv.value, n)[:1]:
            if found is rule:
                yield RuleResult(at=dv, message=msg)


def not_expressible(ctx: ModuleContext) -> Iterator[RuleResult]:
    """HLO shardings with no equivalent on --mesh (in a per-device module, not the partitioner's own
    collectives')."""
    mesh = ctx.options.mesh
    if mesh is None:
        return
    per_device = ctx.stage is Stage.PARTITIONED
    for dv in ctx.hlo:
        h = dv.value
        assert isinstance(h, HloSharding)
        if per_device and dv.site.op in PARTITIONER_COLLECTIVES:
            continue
        if h.kind in (HloKind.TILED, HloKind.TUPLE) and devices_of(h) in (None, mesh.num_devices):
            e = _not_expressible(h, mesh, None if h.kind is HloKind.TUPLE else dv.site.rank)
            if e is not None:
                notes = _suggestion_notes(e)
                yield RuleResult(at=dv, message=f"{h} has no equivalent on --mesh {mesh}: {e.message}", notes=notes)


@lru_cache(maxsize=1 << 12)
def _not_expressible(h: HloSharding, mesh: Mesh, rank: int | None) -> NotExpressibleError | None:
    """Why ``h`` has no equivalent on ``mesh``, or None. Cached: a log's modules repeat their values."""
    try:
        to_sdy_manual(h, mesh, rank=rank)
    except NotExpressibleError as e:
        return e
    except ShardingError:
        pass
    return None


def _hlo_rank_issues(h: HloSharding, ranks: tuple[int | None, ...] | None) -> list[str]:
    if ranks is None:
        return []
    if h.kind is HloKind.TUPLE:
        if not leaf_count_fits(len(h.elements), len(ranks)):
            return [f"tuple sharding has {len(h.elements)} elements but the value has {len(ranks)}"]
        return [
            f"tuple element {i} {e} is for rank {e.rank} but the tensor has rank {r}"
            for i, (e, r) in enumerate(zip(h.elements, ranks))
            if e.rank is not None and r is not None and e.rank != r
        ]
    if len(ranks) == 1 and h.rank is not None and ranks[0] is not None and h.rank != ranks[0]:
        return [f"sharding {h} is for rank {h.rank} but the tensor has rank {ranks[0]}"]
    return []


def leaf_count_fits(elements: int, leaves: int) -> bool:
    """XLA's ``HloSharding::CheckLeafCount``: a tuple sharding has one element per leaf of its shape, or
    a single one on a shape with no leaves (``() parameter(0), sharding={{replicated}}``)."""
    return elements == leaves or (leaves == 0 and elements == 1)


def devices_of(h: HloSharding) -> int | None:
    """The device count of ``h``'s tile array(s), None when it has none or its elements disagree."""
    if h.kind is HloKind.TUPLE:
        counts = {devices_of(e) for e in h.elements} - {None}
        return counts.pop() if len(counts) == 1 else None
    return h.tile.num_devices if h.tile is not None else None


def _device_issues(h: HloSharding, n: int) -> list[tuple[RuleId, str]]:
    if h.kind is HloKind.TUPLE:
        return [i for e in h.elements for i in _device_issues(e, n)]
    if h.kind is HloKind.MAXIMAL and h.device is not None and h.device >= n:
        return [(RuleId.DEVICE_OUT_OF_RANGE, f"{h} uses device {h.device} but num_partitions is {n}")]
    if h.tile is None:
        return []
    t = h.tile
    top = t.num_devices - 1 if t.is_iota else max(t.devices)
    if top >= n:
        return [(RuleId.DEVICE_OUT_OF_RANGE, f"{h} uses device {top} but num_partitions is {n} (ids 0..{n - 1})")]
    if t.num_devices != n:
        return [(RuleId.DEVICE_COUNT_MISMATCH, f"{h} spans {t.num_devices} devices but num_partitions is {n}")]
    return []


def unspecified_dims(ctx: ModuleContext) -> Iterator[RuleResult]:
    """unspecified_dims naming a dim the tensor lacks."""
    for dv in ctx.module.values:
        if dv.site.kind is SiteKind.UNSPECIFIED_DIMS and isinstance(dv.value, tuple):
            rank = dv.site.rank
            bad = [d for d in dv.value if d < 0 or (rank is not None and d >= rank)]
            if bad:
                yield RuleResult(
                    at=dv,
                    message=f"unspecified_dims {list(dv.value)} name dim {bad[0]} but the tensor has rank {rank}",
                )


def roundtrip_mismatch(ctx: ModuleContext) -> Iterator[RuleResult]:
    """An HLO sharding and the sdy sharding of the same value must place the data identically."""
    meshes = dict(ctx.meshes)
    for pair in ctx.module.pairs:
        hlo, sdy = pair.hlo.value, pair.sdy.value
        if not isinstance(hlo, HloSharding) or not isinstance(sdy, (TensorSharding, TensorShardingPerValue)):
            continue
        if isinstance(sdy, TensorShardingPerValue) and not hlo.is_tuple and len(sdy.shardings) == 1:
            sdy = sdy.shardings[0]
        try:
            exported = to_hlo(sdy, meshes)
            if same_assignment(exported, hlo):
                continue
        except ShardingError:
            continue
        s = pair.sdy.site
        yield RuleResult(
            at=pair.hlo,
            message=f"{pair.hlo.site.site} {hlo} disagrees with {s.site} {s.text} (column {s.col}), "
            f"which XLA exports as {exported}",
        )


def non_canonical(ctx: ModuleContext) -> Iterator[RuleResult]:
    """``mhlo.sharding`` strings XLA would print differently; the fix rewrites them canonically."""
    for dv in ctx.hlo:
        site = dv.site
        if (
            site.data is not None
            or site.site not in ("mhlo.sharding", "mhlo.spmd_output_sharding")
            or not site.text.strip()
        ):
            continue
        assert isinstance(dv.value, HloSharding)
        canon = print_hlo(dv.value, include_metadata="metadata" in site.text)
        if canon != site.text:
            fix = Fix(
                f"{site.site} canonicalised",
                (Rewrite(ctx.module.index, site.kind.value, site.text.encode(), canon.encode()),),
            )
            yield RuleResult(at=dv, message=f"{site.site} {site.text} is {canon} in XLA's spelling", fix=fix)


def _releases(names: frozenset[str]) -> str:
    return " and ".join(sorted(names))


def mixed_releases(ctx: ModuleContext) -> Iterator[RuleResult]:
    """A module whose values are spelled as different XLA releases write them (no one release writes them
    all): stitched from two toolchains, it reads on one machine and fails on another."""
    from shardconv.formats.releases import spellings

    first: tuple[DistinctValue, str] | None = None
    common: frozenset[str] = frozenset()
    for dv in ctx.module.values:
        for spelling in spellings(dv.site.text):
            if not spelling.releases:
                continue
            if first is None:
                first, common = (dv, spelling.name), spelling.releases
            elif not common & spelling.releases:
                earlier, name = first
                yield RuleResult(
                    at=dv,
                    message=f"{spelling.name} is what XLA {_releases(spelling.releases)} writes, but {name} on line "
                    f"{earlier.site.line} is what only {_releases(common)} writes: "
                    "no one XLA release wrote this module",
                    col=dv.site.col + spelling.pos,
                )
                return
            else:
                common &= spelling.releases


__all__ = [
    "Check",
    "RuleResult",
    "device_issues",
    "device_out_of_range",
    "devices_of",
    "mixed_releases",
    "non_canonical",
    "not_expressible",
    "rank_mismatch",
    "roundtrip_mismatch",
    "syntax",
    "unspecified_dims",
    "verify",
]
