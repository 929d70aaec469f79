"""JAX ``P(...)`` / torch-xla partition specs <-> Shardy shardings (docs/formats.md §3.4).

A spec names whole mesh axes per tensor dim (torch-xla may name them by index into the mesh's axis
order); everything unnamed is implicitly replicated, ``P.UNCONSTRAINED`` leaves a dim open and
``unreduced=`` carries JAX's unreduced axes. Its HLO forms are ``to_hlo`` of the result: V2 iota (JAX,
torch-xla V2) or ``explicit=True`` (torch-xla V1).
"""

from __future__ import annotations

import warnings

from shardconv.convert.reduction import require_spelling
from shardconv.convert.to_hlo import resolve
from shardconv.convert.to_sdy import to_sdy
from shardconv.core.arguments import type_error
from shardconv.core.errors import NotExpressibleError, ShardingValidationError
from shardconv.core.model import (
    UNCONSTRAINED,
    AxisName,
    AxisRef,
    DimSharding,
    HloSharding,
    Mesh,
    PartitionEntry,
    PartitionSpec,
    TensorSharding,
    TensorShardingPerValue,
    Unconstrained,
)
from shardconv.core.sources import pointing_into
from shardconv.formats.coerce import as_hlo, as_mesh, as_sdy, as_spec
from shardconv.formats.sdy.verify import on_mesh, unknown_axis_name, verify_on
from shardconv.formats.spec.read import spec_from_jax


def from_partition_spec(spec: object, mesh: object, *, rank: int | None = None) -> TensorSharding:
    """The Shardy sharding a partition spec means on ``mesh`` (dims past the spec are unsharded).

    ``spec``: a PartitionSpec, its text, a torch-xla tuple or a jax PartitionSpec; ``mesh``: a Mesh or its
    text. (The old order, mesh first, still works with a DeprecationWarning.)"""
    if type(spec) is Mesh and type(mesh) is not Mesh:
        warnings.warn(
            "from_partition_spec(mesh, spec) is deprecated: pass the spec first, as everywhere else",
            DeprecationWarning,
            stacklevel=2,
        )
        spec, mesh = mesh, spec
    m = as_mesh(mesh, "from_partition_spec")
    if type(spec).__module__.startswith("jax"):
        spec = spec_from_jax(spec)
    p = as_spec(spec, "from_partition_spec")
    with pointing_into(p):
        return _from_spec(p, m, rank)


def _from_spec(spec: PartitionSpec, mesh: Mesh, rank: int | None) -> TensorSharding:
    n = len(spec.entries) if rank is None else rank
    if n < len(spec.entries):
        raise ShardingValidationError(f"partition spec {spec} has {len(spec.entries)} entries but the rank is {n}")
    seen: set[str] = set()

    def named(axis: AxisName) -> str:
        name = _axis_name(axis, mesh, spec)
        if not mesh.has_axis(name):
            raise on_mesh(unknown_axis_name(name, mesh), mesh)
        if name in seen:
            raise ShardingValidationError(f"axis {name!r} appears more than once in {spec}")
        seen.add(name)
        return name

    dims = []
    for entry in spec.entries:
        if isinstance(entry, Unconstrained):
            dims.append(DimSharding(is_closed=False))
            continue
        names = [named(a) for a in _axes_of(entry)]
        dims.append(DimSharding(tuple(AxisRef(a) for a in names)))
    dims.extend(DimSharding() for _ in range(n - len(dims)))
    unreduced = {named(a) for a in spec.unreduced}
    ordered = tuple(AxisRef(a) for a in mesh.axis_names if a in unreduced)
    return TensorSharding(mesh=mesh.symbol, dims=tuple(dims), unreduced=ordered)


def _axes_of(entry: PartitionEntry) -> tuple[AxisName, ...]:
    if entry is None or isinstance(entry, Unconstrained):
        return ()
    return (entry,) if isinstance(entry, (str, int)) else entry


def _axis_name(axis: AxisName, mesh: Mesh, spec: PartitionSpec) -> str:
    """A name as is; torch-xla's index resolved against the mesh's axis order."""
    if isinstance(axis, str):
        return axis
    if axis >= len(mesh.axes):
        raise ShardingValidationError(
            f"mesh-axis index {axis} in {spec} is out of range: the mesh {mesh.shape_str()} has {len(mesh.axes)} axes"
        )
    return str(mesh.axis_names[axis])


def to_partition_spec(sharding: object, mesh: object = None) -> PartitionSpec:
    """The partition spec of a whole-axis sharding (an HLO sharding goes through ``to_sdy`` on ``mesh``).

    Explicit replicated axes and priorities are dropped (a spec has neither); an open dim without axes is
    ``P.UNCONSTRAINED``; sub-axes and open dims with axes have no spec form and raise NotExpressibleError."""
    m = None if mesh is None else as_mesh(mesh, "to_partition_spec")
    if isinstance(sharding, str):
        sharding = (
            as_hlo(sharding, "to_partition_spec")
            if sharding.lstrip().startswith("{")
            else as_sdy(sharding, "to_partition_spec")
        )
    if isinstance(sharding, HloSharding):
        if m is None:
            raise ShardingValidationError("an HLO sharding needs the mesh to become a partition spec")
        got = to_sdy(sharding, m, rank=sharding.rank)
        if not isinstance(got, TensorSharding):
            raise NotExpressibleError("a tuple sharding has no single partition spec")
        sharding = got
    if isinstance(sharding, TensorShardingPerValue):
        raise NotExpressibleError("a per-value sharding has no single partition spec")
    if not isinstance(sharding, TensorSharding):
        raise type_error("to_partition_spec", "sharding", "a TensorSharding, an HloSharding or their text", sharding)
    with pointing_into(sharding):
        return _to_spec(sharding, m)


def _to_spec(sharding: TensorSharding, mesh: Mesh | None) -> PartitionSpec:
    m = resolve(sharding, mesh)
    verify_on(sharding, m)
    require_spelling(sharding, "spec", "head")
    subs = [str(r) for d in sharding.dims for r in d.axes if r.sub_axis is not None]
    subs += [str(r) for r in sharding.unreduced if r.sub_axis is not None]
    if subs:
        raise NotExpressibleError(
            f"{sharding} uses sub-axes ({', '.join(subs)}), which a partition spec cannot name; "
            f"give the mesh {m.shape_str()} an axis of that size, or use the Shardy form"
        )
    if any(not d.is_closed and d.axes for d in sharding.dims):
        raise NotExpressibleError(
            f'{sharding} has open dims with axes ({{"x", ?}}); a partition spec is either closed or P.UNCONSTRAINED'
        )
    entries: list[PartitionEntry] = []
    for d in sharding.dims:
        names = tuple(r.name for r in d.axes)
        if not d.is_closed:
            entries.append(UNCONSTRAINED)
        else:
            entries.append(None if not names else names[0] if len(names) == 1 else names)
    return PartitionSpec(tuple(entries), tuple(r.name for r in sharding.unreduced))


__all__ = ["from_partition_spec", "to_partition_spec"]
