"""Shardy's verifier for meshes and tensor shardings, with its checks in its order and its messages
(jaxlib 0.10.2), so a sharding shardconv accepts is one Shardy accepts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

from shardconv.core.arguments import type_error
from shardconv.core.errors import (
    LimitExceededError,
    ShardingValidationError,
    did_you_mean,
)
from shardconv.core.mesh_invariants import verify_mesh
from shardconv.core.model import AxisRef, Mesh, TensorSharding, TensorShardingPerValue
from shardconv.formats.sdy.write import print_axis_ref

MeshArg = Mesh | Mapping[str, Mesh] | None


def _resolve(sharding: TensorSharding, mesh: MeshArg) -> Mesh:
    """The mesh a sharding lives on; a symbol that the given mesh(es) do not define is Shardy's
    ``unknown mesh``."""
    if isinstance(sharding.mesh, Mesh):
        return sharding.mesh
    name = sharding.mesh
    found: Mesh | None
    if isinstance(mesh, Mapping):
        found = mesh.get(name)
    else:
        found = mesh if mesh is not None and mesh.name in (None, name) else None
    if found is None:
        known = mesh.keys() if isinstance(mesh, Mapping) else [mesh.name] if mesh is not None and mesh.name else []
        raise ShardingValidationError(f"unknown mesh: @{name}", suggestions=did_you_mean(name, known, spelled="@{}"))
    return found


def _order_key(ref: AxisRef, mesh: Mesh) -> tuple[int, str, int, float]:
    """Shardy's mesh order: axis index (unknown names last, by name), then pre-size, then size; a full
    axis sorts as pre-size 1 and an unbounded size (after every ``(1)k``, before every ``(2)k``)."""
    known = mesh.has_axis(ref.name)
    index = mesh.axis_names.index(ref.name) if known else len(mesh.axes)
    name = "" if known else ref.name
    if ref.sub_axis is not None:
        return index, name, ref.sub_axis.pre_size, ref.sub_axis.size
    return index, name, 1, float("inf")


def _can_merge(a: AxisRef, b: AxisRef) -> bool:
    return (
        a.name == b.name
        and a.sub_axis is not None
        and b.sub_axis is not None
        and a.sub_axis.pre_size * a.sub_axis.size == b.sub_axis.pre_size
    )


def unknown_axis_name(name: str, mesh: Mesh) -> ShardingValidationError:
    """Shardy's one message for a name the mesh lacks (partition-spec names use it too), with the
    closest axis name as a suggestion."""
    return ShardingValidationError(f'unknown axis name: "{name}"', suggestions=did_you_mean(name, mesh.axis_names))


def on_mesh(err: ShardingValidationError, mesh: Mesh) -> ShardingValidationError:
    """``err`` with the mesh it was checked against appended: the context a converter's caller lacks
    when the mesh came from elsewhere (``--mesh``, a module's ``sdy.mesh``)."""
    return ShardingValidationError(f"{err.message} (mesh is {mesh.shape_str() or '<[]>'})", suggestions=err.suggestions)


def _verify_sub_axis(ref: AxisRef, mesh: Mesh) -> None:
    sub = ref.sub_axis
    assert sub is not None
    full = mesh.axis_size(ref.name)
    next_pre = sub.pre_size * sub.size
    if sub.pre_size < 1:
        problem = "sub-axis pre-size must be at least 1"
    elif sub.size <= 1:
        problem = "sub-axis sizes must be greater than 1"
    elif full % next_pre != 0:
        problem = f"sub-axis next pre-size {next_pre} doesn't divide the size of the full axis {full}"
    elif sub.size == full:
        problem = "sub-axis size is equal to the full axis size"
    else:
        return  # valid: skip printing the ref (converters verify on every call)
    raise ShardingValidationError(f"{problem}: {print_axis_ref(ref)}")


def _verify_axis_list(refs: Sequence[AxisRef], mesh: Mesh, seen: set[AxisRef], subs: dict[str, list[AxisRef]]) -> None:
    """First pass, item by item: unknown name, duplicate, mergeable with the previous one."""
    prev: AxisRef | None = None
    known = mesh._size_by_name
    for ref in refs:
        if ref.name not in known:
            raise unknown_axis_name(ref.name, mesh)
        n = len(seen)
        seen.add(ref)  # one hash, not two: a ref already seen leaves the size unchanged
        if len(seen) == n:
            raise ShardingValidationError(f"duplicate axis ref: {print_axis_ref(ref)}")
        if prev is not None and _can_merge(prev, ref):
            raise ShardingValidationError(
                f"two consecutive sub-axes can be merged: {print_axis_ref(prev)}, {print_axis_ref(ref)}"
            )
        if ref.sub_axis is not None:
            subs.setdefault(ref.name, []).append(ref)
        prev = ref


def _verify_ordered(refs: Sequence[AxisRef], mesh: Mesh, what: str) -> None:
    keys = [_order_key(r, mesh) for r in refs]
    if any(b < a for a, b in pairwise(keys)):
        raise ShardingValidationError(f"{what} axes are not ordered w.r.t. mesh")


def _verify_sub_axes(mesh: Mesh, seen: set[AxisRef], subs: dict[str, list[AxisRef]]) -> None:
    """Last pass, per axis name in order of first use: no full axis too, then each sub-axis (sorted)
    valid and not overlapping the previous one."""
    for name, refs in subs.items():
        if AxisRef(name) in seen:
            raise ShardingValidationError(f'both sub-axis and full-axis are used for axis name: "{name}"')
        prev: AxisRef | None = None
        for ref in sorted(refs, key=_sub_axis_key):
            _verify_sub_axis(ref, mesh)
            if prev is not None:
                assert prev.sub_axis is not None and ref.sub_axis is not None
                if ref.sub_axis.pre_size < prev.sub_axis.pre_size * prev.sub_axis.size:
                    raise ShardingValidationError(
                        f"overlapping sub-axes: {print_axis_ref(prev)}, {print_axis_ref(ref)}"
                    )
            prev = ref


def _sub_axis_key(ref: AxisRef) -> tuple[int, int]:
    """Sub-axes of one axis in Shardy's order: by pre-size, then size."""
    assert ref.sub_axis is not None  # only sub-axis refs are collected per name
    return ref.sub_axis.pre_size, ref.sub_axis.size


def _verify_manual(sharding: TensorSharding, mesh: Mesh, manual_axes: tuple[str, ...]) -> None:
    """Inside a manual_computation, manual axes come first in every dim (Shardy's in/out check)."""
    for name in manual_axes:
        if not mesh.has_axis(name):
            raise unknown_axis_name(name, mesh)
    for i, dim in enumerate(sharding.dims):
        free: AxisRef | None = None
        for ref in dim.axes:
            if ref.name not in manual_axes:
                free = free or ref
            elif free is not None:
                raise ShardingValidationError(
                    f"sharding must have all manual axes come before free axes in its dimension sharding at "
                    f'index {i}. Saw manual axis "{ref.name}" after free axis "{free.name}"'
                )


def _verify_one(sharding: TensorSharding, mesh: MeshArg, rank: int | None, manual_axes: tuple[str, ...]) -> None:
    _verify_on(sharding, _resolve(sharding, mesh), rank, manual_axes)


def _verify_on(sharding: TensorSharding, m: Mesh, rank: int | None, manual_axes: tuple[str, ...]) -> None:
    verify_mesh(m)
    if m.is_maximal:
        if sharding.dims or sharding.replicated or sharding.unreduced:
            raise ShardingValidationError(
                "a maximal sharding can only have a sharding with rank 0 and no replicated or unreduced axes."
            )
        return
    if rank is not None and sharding.rank != rank:
        raise ShardingValidationError(f"sharding doesn't match tensor rank: {sharding.rank} != {rank}")
    seen: set[AxisRef] = set()
    subs: dict[str, list[AxisRef]] = {}
    for i, dim in enumerate(sharding.dims):
        if dim.axes:
            _verify_axis_list(dim.axes, m, seen, subs)
        elif dim.is_closed and dim.priority is not None:
            raise ShardingValidationError(f"dim {i} is empty and closed but has a priority")
    for what, refs in (("replicated", sharding.replicated), ("unreduced", sharding.unreduced)):
        if refs:
            _verify_ordered(refs, m, what)
            _verify_axis_list(refs, m, seen, subs)
    if subs:
        _verify_sub_axes(m, seen, subs)
    if manual_axes:
        _verify_manual(sharding, m, manual_axes)


def verify(
    sharding: TensorSharding | TensorShardingPerValue,
    mesh: MeshArg = None,
    rank: int | Sequence[int] | None = None,
    *,
    manual_axes: tuple[str, ...] = (),
) -> None:
    """Raise ShardingValidationError with Shardy's message if Shardy's verifier would reject this.

    ``mesh`` is the mesh a ``@name`` refers to (or a name -> mesh mapping); ``rank`` the tensor rank
    (one per value for a per-value sharding). Non-divisible dims are legal (padding). Models only: the
    public ``shardconv.verify`` (verify_text.py) also takes text."""
    if not isinstance(sharding, (TensorSharding, TensorShardingPerValue)):
        raise type_error("verify", "sharding", "a TensorSharding or TensorShardingPerValue", sharding)
    _verify(sharding, mesh, rank, manual_axes)


def _verify(
    sharding: TensorSharding | TensorShardingPerValue,
    mesh: MeshArg,
    rank: int | Sequence[int] | None,
    manual_axes: tuple[str, ...],
) -> None:
    if isinstance(sharding, TensorShardingPerValue):
        ranks: Sequence[int | None]
        if rank is None or isinstance(rank, int):
            ranks = [rank] * len(sharding.shardings)
        else:
            ranks = list(rank)
            if len(ranks) != len(sharding.shardings):
                raise ShardingValidationError(
                    f"sharding_per_value has {len(sharding.shardings)} shardings but {len(ranks)} values"
                )
        for s, r in zip(sharding.shardings, ranks):
            _verify_one(s, mesh, r, tuple(manual_axes))
        return
    if rank is not None and not isinstance(rank, int):
        raise ShardingValidationError("a single sharding takes a single rank")
    _verify_one(sharding, mesh, rank, tuple(manual_axes))


def verify_on(sharding: TensorSharding, mesh: Mesh, rank: int | None = None) -> None:
    """``verify`` for converters, against the mesh they already resolved; Shardy's message plus the
    mesh (see ``on_mesh``)."""
    try:
        _verify_on(sharding, mesh, rank, ())
    except LimitExceededError:
        raise
    except ShardingValidationError as e:
        raise on_mesh(e, mesh) from None


def verify_axis_refs(refs: Sequence[AxisRef], mesh: Mesh) -> None:
    """Shardy's checks on one list of axes a collective names (its groups in order): every axis in
    ``mesh``, none twice, no mergeable neighbours, sub-axes valid and not overlapping."""
    seen: set[AxisRef] = set()
    subs: dict[str, list[AxisRef]] = {}
    _verify_axis_list(refs, mesh, seen, subs)
    _verify_sub_axes(mesh, seen, subs)


__all__ = ["on_mesh", "unknown_axis_name", "verify", "verify_axis_refs", "verify_on"]
