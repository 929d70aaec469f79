"""JAX ``P(...)`` / torch-xla partition specs <-> Shardy shardings (FORMATS §3.4).

A spec names whole mesh axes per tensor dim; everything unnamed is implicitly replicated. Its HLO
forms are ``to_hlo`` of the result: V2 iota (JAX, torch-xla V2) or ``explicit=True`` (torch-xla V1).
"""

from __future__ import annotations

from shardconv.core.errors import NotExpressibleError, ShardingValidationError
from shardconv.core.model import AxisRef, DimSharding, HloSharding, Mesh, PartitionEntry, PartitionSpec, TensorSharding
from shardconv.formats.sdy.verify import on_mesh, unknown_axis_name, verify_on
from shardconv.convert.to_hlo import resolve
from shardconv.convert.to_sdy import to_sdy


def from_partition_spec(mesh: Mesh, spec: PartitionSpec, *, rank: int | None = None) -> TensorSharding:
    """The Shardy sharding a partition spec means on ``mesh`` (dims past the spec are unsharded)."""
    n = len(spec.entries) if rank is None else rank
    if n < len(spec.entries):
        raise ShardingValidationError(f"partition spec {spec} has {len(spec.entries)} entries but the rank is {n}")
    seen: set[str] = set()
    dims = []
    for entry in spec.entries:
        names = () if entry is None else (entry,) if isinstance(entry, str) else entry
        for name in names:
            if not mesh.has_axis(name):
                raise on_mesh(unknown_axis_name(name), mesh)
            if name in seen:
                raise ShardingValidationError(f"axis {name!r} appears more than once in {spec}")
            seen.add(name)
        dims.append(DimSharding(tuple(AxisRef(a) for a in names)))
    dims.extend(DimSharding() for _ in range(n - len(dims)))
    return TensorSharding(mesh.symbol, tuple(dims))


def to_partition_spec(sharding: TensorSharding | HloSharding, mesh: Mesh | None = None) -> PartitionSpec:
    """The partition spec of a whole-axis sharding (an HLO sharding goes through ``to_sdy`` on ``mesh``).

    Explicit replicated axes and priorities are dropped (a spec has neither); sub-axes, open dims and
    unreduced axes have no spec form and raise NotExpressibleError.
    """
    if isinstance(sharding, HloSharding):
        if mesh is None:
            raise ShardingValidationError("an HLO sharding needs the mesh to become a partition spec")
        got = to_sdy(sharding, mesh, rank=sharding.rank)
        if not isinstance(got, TensorSharding):
            raise NotExpressibleError("a tuple sharding has no single partition spec")
        sharding = got
    m = resolve(sharding, mesh)
    verify_on(sharding, m)
    subs = [str(r) for d in sharding.dims for r in d.axes if r.sub_axis is not None]
    if subs:
        raise NotExpressibleError(
            f"{sharding} uses sub-axes ({', '.join(subs)}), which a partition spec cannot name; "
            f"give the mesh {m.shape_str()} an axis of that size, or use the Shardy form"
        )
    if any(not d.is_closed for d in sharding.dims):
        raise NotExpressibleError(f"{sharding} has open dims; a partition spec has no unconstrained entries here")
    if sharding.unreduced:
        raise NotExpressibleError(f"{sharding} has unreduced axes, which a partition spec cannot carry")
    entries: list[PartitionEntry] = []
    for d in sharding.dims:
        names = tuple(r.name for r in d.axes)
        entries.append(None if not names else names[0] if len(names) == 1 else names)
    return PartitionSpec(tuple(entries))
