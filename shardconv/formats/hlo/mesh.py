"""Checks for HLO V3 (mesh-based) shardings: everything XLA aborts on, plus what it wrongly accepts."""

from __future__ import annotations

from math import prod

from shardconv.core.errors import ShardingValidationError
from shardconv.core.model import AxisRef, Mesh, MeshSharding


def _ref(a: AxisRef) -> str:
    return f"'{a.name}'" + (f":({a.sub_axis.pre_size}){a.sub_axis.size}" if a.sub_axis else "")


def check_mesh(mesh: Mesh) -> None:
    """Axis sizes >= 1, unique names, device ids a non-iota permutation of 0..N-1."""
    seen: set[str] = set()
    for a in mesh.axes:
        if a.size < 1:
            raise ShardingValidationError(f"mesh axis '{a.name}' has size {a.size}; sizes must be at least 1")
        if a.name in seen:
            raise ShardingValidationError(f"duplicate mesh axis name '{a.name}'")
        seen.add(a.name)
    ids = mesh.explicit_device_ids
    if ids is None or not mesh.axes:
        return
    n = prod(mesh.axis_sizes)
    if len(ids) != n:
        raise ShardingValidationError(f"device_ids has {len(ids)} entries but the mesh has {n} devices")
    if sorted(ids) != list(range(n)):
        raise ShardingValidationError(f"device_ids must be a permutation of 0..{n - 1}")


def _span(a: AxisRef, mesh: Mesh) -> tuple[int, int]:
    """The [pre, pre*size) interval an axis ref covers within its axis (multiplicative positions)."""
    size = mesh.axis_size(a.name)
    if a.sub_axis is None:
        return 1, size
    pre, sub = a.sub_axis.pre_size, a.sub_axis.size
    if pre < 1:
        raise ShardingValidationError(f"sub-axis {_ref(a)} has pre-size {pre}; it must be at least 1")
    if sub <= 1:
        raise ShardingValidationError(f"sub-axis {_ref(a)} has size {sub}; it must be greater than 1")
    if size % (pre * sub):
        raise ShardingValidationError(f"sub-axis {_ref(a)}: {pre}*{sub} does not divide the axis size {size}")
    if sub == size:
        raise ShardingValidationError(f"sub-axis {_ref(a)} covers the whole axis; write '{a.name}'")
    return pre, pre * sub


def _mergeable(a: AxisRef, b: AxisRef) -> bool:
    return (
        a.name == b.name and a.sub_axis is not None and b.sub_axis is not None
        and a.sub_axis.pre_size * a.sub_axis.size == b.sub_axis.pre_size
    )


def check_mesh_sharding(ms: MeshSharding) -> None:
    """Known axes, valid sub-axes, no axis used twice, no mergeable neighbours, sorted axis sets."""
    mesh = ms.mesh
    check_mesh(mesh)
    used: dict[str, list[tuple[int, int, AxisRef]]] = {}
    lists = [d.axes for d in ms.dims] + [ms.replicated, ms.unreduced, ms.manual]
    for axes in lists:
        for a in axes:
            if not mesh.has_axis(a.name):
                raise ShardingValidationError(f"unknown axis '{a.name}' (mesh axes: {', '.join(mesh.axis_names)})")
            lo, hi = _span(a, mesh)
            for olo, ohi, other in used.get(a.name, []):
                if lo < ohi and olo < hi:
                    raise ShardingValidationError(f"axis {_ref(a)} overlaps {_ref(other)}, which is already used")
            used.setdefault(a.name, []).append((lo, hi, a))
        for x, y in zip(axes, axes[1:]):
            if _mergeable(x, y):
                raise ShardingValidationError(f"sub-axes {_ref(x)} and {_ref(y)} are adjacent; merge them")
    index = {n: i for i, n in enumerate(mesh.axis_names)}
    for key, axes in (("replicated", ms.replicated), ("unreduced", ms.unreduced), ("manual", ms.manual)):
        keys = [(index[a.name], a.sub_axis.pre_size if a.sub_axis else 0) for a in axes]
        if keys != sorted(keys):
            raise ShardingValidationError(f"{key}={{...}} axes must be listed in mesh order")
