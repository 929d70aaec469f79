"""A mesh's structural invariants, in Shardy's order and words (jaxlib 0.10.2): what ``Mesh.of``
holds every mesh it builds to, as Shardy's ``MeshAttr`` verifies itself when it is built."""

from __future__ import annotations

from collections.abc import Sized
from math import prod
from typing import Any, Protocol

from shardconv.core.errors import ShardingValidationError
from shardconv.core.limits import check_device_count, current


class MeshShape(Protocol):
    """What the invariants read of a mesh (``core.model.Mesh`` has it; this module needs no more)."""

    __dict__: dict[str, Any]

    @property
    def axes(self) -> Sized: ...
    @property
    def axis_sizes(self) -> tuple[int, ...]: ...
    @property
    def axis_names(self) -> tuple[str, ...]: ...
    @property
    def explicit_device_ids(self) -> tuple[int, ...] | None: ...
    @property
    def num_devices(self) -> int: ...

_VERIFIED = "_shardconv_verified_devices"  # per-Mesh cache (in the instance dict, as cached_property does)


def verify_mesh(mesh: MeshShape) -> None:
    """Axis sizes >= 1, device ids non-negative, unique axis names, ids a permutation of iota.

    A Mesh is frozen, so a successful check is remembered on the object (its device count); later
    calls only re-check that count against the device ceiling in force, which can change."""
    n = mesh.__dict__.get(_VERIFIED)
    if n is not None:
        if n > current().max_devices:
            check_device_count(mesh.axis_sizes)  # raises the ceiling's own message
        return
    _verify_mesh(mesh)
    mesh.__dict__[_VERIFIED] = mesh.num_devices


def _verify_mesh(mesh: MeshShape) -> None:
    sizes = mesh.axis_sizes
    if sizes and min(sizes) < 1:
        bad = next(s for s in sizes if s < 1)
        raise ShardingValidationError(f"axis size must be at least 1, got: {bad}")
    check_device_count(sizes)
    ids = mesh.explicit_device_ids or ()
    if ids and min(ids) < 0:  # min() first: converters verify meshes of 65,536 ids on every call
        negative = next(d for d in ids if d < 0)
        raise ShardingValidationError(f"device id must be non-negative, got: {negative}")
    names = mesh.axis_names
    if len(set(names)) != len(names):
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise ShardingValidationError(f'duplicate axis name: "{name}"')
            seen.add(name)
    if not ids:
        return
    if not mesh.axes:
        if len(ids) != 1:
            raise ShardingValidationError("axes is empty and device_ids has more than one element")
        return
    total = prod(mesh.axis_sizes)
    if total != len(ids):
        raise ShardingValidationError(
            f"total product of axis sizes must match total number of device ids, got: {total} != {len(ids)}"
        )
    if max(ids) != len(ids) - 1 or len(set(ids)) != len(ids):  # non-negative: same as sorted == iota
        ordered = sorted(ids)
        raise ShardingValidationError(
            f"sorted device ids must be iota(product(axes)), got: {', '.join(map(str, ordered))}"
        )
