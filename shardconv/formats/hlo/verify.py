"""The checks both HLO readers (sharding text and serialized OpSharding) make, each worded once.

For V3 (mesh-based) shardings: everything XLA aborts on, plus what it wrongly accepts. Errors carry no
position; the text reader points them at the token they concern."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from math import prod

from shardconv.core.errors import ShardingValidationError, did_you_mean
from shardconv.core.model import AxisRef, Mesh, MeshSharding, SubgroupType, TileAssignment


def check_device_id(device: int, num_devices: int | None) -> None:
    """``device`` is one of the ``num_devices`` devices (any non-negative id when that is unknown)."""
    if device < 0:
        raise ShardingValidationError(f"negative device id {device}")
    if num_devices is not None and device >= num_devices:
        raise ShardingValidationError(f"device id {device} is outside 0..{num_devices - 1}")


def maximal_device(devices: Sequence[int], num_devices: int | None) -> int:
    """The one device of a maximal sharding."""
    if len(devices) != 1:
        raise ShardingValidationError("maximal shardings need exactly one device: add device=N")
    check_device_id(devices[0], num_devices)
    return devices[0]


def check_iota_fits(tile: TileAssignment, num_devices: int | None) -> None:
    """An iota tile array names devices 0..N-1: there must be N of them."""
    if num_devices is not None and tile.num_devices > num_devices:
        raise ShardingValidationError(f"iota uses devices 0..{tile.num_devices - 1} but there are only {num_devices}")


def check_subgroup_fields(replicate_last: bool, last_tile_dims: bool) -> None:
    """The two ways of marking the last tile dim are exclusive."""
    if replicate_last and last_tile_dims:
        raise ShardingValidationError("last_tile_dim_replicate and last_tile_dims cannot both be given")


def subgroup_type(name: str) -> SubgroupType:
    """A ``last_tile_dims`` entry, by its lower-case OpSharding type name."""
    try:
        return SubgroupType(name)
    except ValueError:
        raise ShardingValidationError(
            f"last_tile_dims entry '{name}' is not one of manual, unreduced, replicated"
        ) from None


def check_mesh_fits(mesh: Mesh, num_devices: int | None) -> None:
    """A V3 sharding's devices (its mesh, or the one device of a maximal mesh) are among ``num_devices``."""
    if mesh.is_maximal:
        assert mesh.explicit_device_ids is not None
        check_device_id(mesh.explicit_device_ids[0], num_devices)
    elif num_devices is not None and mesh.num_devices > num_devices:
        raise ShardingValidationError(f"the mesh has {mesh.num_devices} devices but there are only {num_devices}")


def mesh_device_ids(
    n: int, listed: tuple[int, ...] | None, iota: tuple[tuple[int, ...], tuple[int, ...]] | None
) -> tuple[tuple[int, ...] | None, tuple[tuple[int, ...], tuple[int, ...]] | None]:
    """A V3 mesh of ``n`` devices' ``device_ids=(...)``, given as a list or as an iota (reshape, perm):
    its ids and, for a non-trivial iota, that iota (a plain one means no device_ids at all)."""
    if listed is not None:
        if len(listed) == n and listed == tuple(range(n)):
            raise ShardingValidationError("device_ids equal to iota must be omitted (XLA aborts on them)")
        return listed, None
    if iota is None:
        return None, None
    tile = TileAssignment.iota((n,), *iota)
    if tile.reshape_dims is not None and tile.perm is not None and len(tile.reshape_dims) > 1:
        return tile.devices, (tile.reshape_dims, tile.perm)
    return None, None


def check_named(ms: MeshSharding, num_devices: int | None) -> None:
    """A V3 sharding XLA accepts: its axes against its mesh (``check_mesh_sharding``), among ``num_devices``."""
    check_mesh_sharding(ms)
    check_mesh_fits(ms.mesh, num_devices)


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
                raise ShardingValidationError(
                    f"unknown axis '{a.name}' (mesh axes: {', '.join(mesh.axis_names)})",
                    suggestions=did_you_mean(a.name, mesh.axis_names, spelled="'{}'"),
                )
            lo, hi = _span(a, mesh)
            for olo, ohi, other in used.get(a.name, []):
                if lo < ohi and olo < hi:
                    raise ShardingValidationError(f"axis {_ref(a)} overlaps {_ref(other)}, which is already used")
            used.setdefault(a.name, []).append((lo, hi, a))
        for x, y in pairwise(axes):
            if _mergeable(x, y):
                raise ShardingValidationError(f"sub-axes {_ref(x)} and {_ref(y)} are adjacent; merge them")
    index = {n: i for i, n in enumerate(mesh.axis_names)}
    for key, axes in (("replicated", ms.replicated), ("unreduced", ms.unreduced), ("manual", ms.manual)):
        keys = [(index[a.name], a.sub_axis.pre_size if a.sub_axis else 0) for a in axes]
        if keys != sorted(keys):
            raise ShardingValidationError(f"{key}={{...}} axes must be listed in mesh order")
