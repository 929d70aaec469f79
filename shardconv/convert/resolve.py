"""Brings any parsed input to the HLO or the Shardy side, by calling the converters, and says which
side an output spelling is computed from.

Shared by the CLI's ``convert``, ``show`` and ``roundtrip`` and by the library (``conversion_notes``),
so they agree on what an input means on a mesh. Nothing here converts by itself: it only chooses which
converter to call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from shardconv.convert import to_hlo, to_sdy_manual, xla_import
from shardconv.convert.to_sdy import own_mesh
from shardconv.core.errors import ShardingError, ShardingValidationError, Suggestion
from shardconv.core.model import (
    HloSharding,
    Kind,
    Mesh,
    PartitionSpec,
    ShardSharding,
    TensorSharding,
    TensorShardingPerValue,
)
from shardconv.core.placement import same_assignment
from shardconv.core.records import record
from shardconv.formats.detect import SDY, SDY_PER_VALUE, SHARD, SPEC_KINDS, Input, parse_input

if TYPE_CHECKING:
    from shardconv.convert.to_sdy import RankArg as Rank

_Model = TypeVar("_Model")

SDY_TARGETS = ("sdy", "v3", "spec", "proto-v3", "shard")  # the output spellings computed from the Shardy side
V3_TARGETS = ("v3", "proto-v3")  # the V3 form: a V3 input's own, else the Shardy side's to_v3


def default_target(inp: Input) -> str:
    """HLO in -> sdy out; everything else -> HLO."""
    return "sdy" if inp.is_hlo else "hlo"


def is_v3(inp: Input) -> bool:
    """A V3 (mesh) HLO input, which carries its own mesh."""
    return isinstance(inp.value, HloSharding) and inp.value.kind is Kind.MESH


def needs_sdy(inp: Input, target: str, mesh: Mesh | None) -> bool:
    """Whether ``target`` is computed from the Shardy side (and so needs a mesh, real or synthetic)."""
    if target in V3_TARGETS and is_v3(inp):
        return False
    if target == "shard" and inp.kind == SHARD:  # written as parsed: its halos and offsets stay
        return False
    return target in SDY_TARGETS or (target == "json" and (mesh is not None or inp.is_hlo))


@record
class OnMesh:
    """A Shardy sharding and the mesh it lives on; ``synthetic`` when XLA's importer invented the mesh."""

    sharding: TensorSharding | TensorShardingPerValue  # one per value for a tuple HLO
    mesh: Mesh
    synthetic: bool = False
    manual_axes: tuple[str, ...] = ()  # for HLO with a manual subgroup: the manual_computation's axes


Outcome = str | ShardingError  # a spelling, or why there is none


def value_as(inp: Input, cls: type[_Model]) -> _Model:
    """``inp.value`` as the model class its kind promises (``inp.kind`` says it; this tells the type checker)."""
    if not isinstance(inp.value, cls):
        raise TypeError(f"a {inp.kind} input holds a {type(inp.value).__name__}, not a {cls.__name__}")
    return inp.value


def need_mesh(mesh: Mesh | None, what: str) -> Mesh:
    if mesh is None:
        raise ShardingValidationError(f"{what} needs a mesh: pass --mesh (e.g. --mesh batch=2,model=4)")
    return mesh


def sdy_mesh(s: TensorSharding, mesh: Mesh | None) -> Mesh:
    """The mesh of a Shardy input: inlined, else ``--mesh``."""
    if isinstance(s.mesh, Mesh):
        return s.mesh
    return need_mesh(mesh, f"the sharding refers to @{s.mesh}; it")


def input_rank(inp: Input, rank: Rank) -> Rank:
    """``--rank``/``--shape`` if given, else what the input itself says."""
    if rank is not None:
        return rank

    v = inp.value
    if isinstance(v, (TensorSharding, HloSharding)):
        return v.rank
    if isinstance(v, PartitionSpec):
        return len(v.entries)
    return None


def as_hlo(inp: Input, mesh: Mesh | None, *, rank: Rank = None, explicit: bool = False) -> HloSharding:
    """The HLO sharding XLA would export for ``inp`` (an HLO input is returned as parsed)."""
    from shardconv.convert import v3_to_v2

    if inp.is_hlo:
        return v3_to_v2(value_as(inp, HloSharding))
    if inp.kind == SDY_PER_VALUE:
        shardings = value_as(inp, TensorShardingPerValue).shardings
        return HloSharding.tuple_of([to_hlo(s, sdy_mesh(s, mesh), explicit=explicit) for s in shardings])
    on = as_sdy(inp, mesh, rank=rank)
    return to_hlo(on.sharding, on.mesh, explicit=explicit)


def as_sdy(inp: Input, mesh: Mesh | None, *, rank: Rank = None) -> OnMesh:
    """The Shardy sharding of ``inp`` on ``mesh``; for HLO without a mesh, XLA's synthetic one."""
    if inp.kind == SDY:
        s = value_as(inp, TensorSharding)
        return OnMesh(s, sdy_mesh(s, mesh))
    if inp.kind in SPEC_KINDS:
        from shardconv.convert import from_partition_spec

        m = need_mesh(mesh, "a partition spec")
        if rank is not None and not isinstance(rank, int):
            raise ShardingValidationError(f"a partition spec takes one rank, not {','.join(map(str, rank))}")
        return OnMesh(from_partition_spec(value_as(inp, PartitionSpec), m, rank=rank), m)
    if inp.kind == SHARD:
        from shardconv.convert.shard_dialect import shard_to_sdy

        m = need_mesh(mesh, "a shard.sharding (grid axis i is the mesh's axis i)")
        if rank is not None and not isinstance(rank, int):
            raise ShardingValidationError(f"a shard.sharding takes one rank, not {','.join(map(str, rank))}")
        return OnMesh(shard_to_sdy(value_as(inp, ShardSharding), m, rank=rank), m)
    if inp.kind == SDY_PER_VALUE:
        raise ShardingValidationError("a per-value sharding holds several shardings; convert it to hlo")
    hlo = value_as(inp, HloSharding)

    if mesh is None:
        mesh = own_mesh(hlo)  # a V3 sharding carries its mesh
        if mesh is None:
            return xla_view(hlo, rank=rank)

    try:
        sharding, manual = to_sdy_manual(hlo, mesh, rank=rank)
    except ShardingError as e:
        raise e.with_suggestions(mesh_option_hint(hlo, mesh)) from None
    return OnMesh(sharding, mesh, manual_axes=manual.axes)


def parse_on_mesh(text: str, kind: str, mesh: Mesh | None) -> Input:
    """``parse_input`` with device ids checked against ``--mesh``; when only that check fails, the
    error says the device count came from ``--mesh``."""
    try:
        return parse_input(text, kind, num_devices=mesh.num_devices if mesh is not None else None)
    except ShardingError as e:
        if mesh is not None:
            try:
                alone = parse_input(text, kind)
            except ShardingError:
                raise e from None
            if isinstance(alone.value, HloSharding):
                raise e.with_suggestions(mesh_option_hint(alone.value, mesh)) from None
        raise


def mesh_option_hint(hlo: HloSharding, mesh: Mesh) -> tuple[Suggestion, ...]:
    """When the sharding and ``--mesh`` disagree on the device count, say that the mesh is ``--mesh``'s."""
    if hlo.tile is None or hlo.tile.num_devices == mesh.num_devices:
        return ()
    n = hlo.tile.num_devices
    return (Suggestion(f"a --mesh with {n} devices (--mesh {mesh.shape_str()} has {mesh.num_devices})"),)


def xla_view(hlo: HloSharding, *, rank: Rank = None) -> OnMesh:
    """What XLA's importer makes of ``hlo`` alone: its invented ``_axis_N`` mesh and sharding."""
    mesh, shardings = xla_import([hlo], ranks=[rank] if rank is not None else None)
    return OnMesh(shardings[0], mesh, synthetic=True)


def attempt(fn: Callable[..., object], *args: object, **kw: object) -> Outcome:
    """``str(fn(...))``, or the ShardingError that says why not (for 'not expressible: why' rows)."""
    try:
        return str(fn(*args, **kw))
    except ShardingError as e:
        return e


class ImportVerdict(NamedTuple):
    """What XLA's mesh-less import does to ``hlo`` against the user's mesh, worded once for ``convert`` and
    ``show`` from the one analysis ``check`` uses (convert/distortion.py)."""

    rule: str  # "distorted-mesh", "xla-renames-axes" or "xla-merges-axes"
    headline: str

    @property
    def distorted(self) -> bool:
        return self.rule == "distorted-mesh"


def import_verdict(hlo: HloSharding, invented: Mesh, mesh: Mesh) -> ImportVerdict:
    """``invented`` is the mesh XLA's importer makes of ``hlo``; ``mesh`` is the user's global mesh."""
    from shardconv.convert.distortion import analyse_import

    shape, yours = invented.sizes_text(), mesh.shape_str()
    found = analyse_import([hlo], mesh)
    if found.distorts:
        return ImportVerdict("distorted-mesh", f"distorted mesh: XLA's importer would invent {shape}, not your {yours}")
    if found.renames_only:
        return ImportVerdict("xla-renames-axes", f"XLA's importer would invent {shape} (your shape, _axis_N names)")
    return ImportVerdict("xla-merges-axes", f"XLA's importer would invent {shape} ({yours} with axes merged)")


def whole_axis_alternative(hlo: HloSharding, on: OnMesh) -> tuple[TensorSharding, HloSharding] | None:
    """When the answer needs sub-axes, the closest whole-axis sharding and its (different) HLO:
    usually what the user *meant* to write."""
    from shardconv.convert.suggest import whole_axis_alternative as closest

    sharding = on.sharding
    if on.synthetic or not isinstance(sharding, TensorSharding):  # a tuple: no one alternative to offer
        return None
    if not any(a.sub_axis is not None for d in sharding.dims for a in d.axes):
        return None
    alt = closest(hlo, on.mesh)
    if alt is None:
        return None
    alt_hlo = to_hlo(alt, on.mesh)
    return None if same_assignment(alt_hlo, hlo) else (alt, alt_hlo)
