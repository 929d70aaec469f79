"""A mesh verifies itself: `Mesh.of` refuses what Shardy's mesh verifier refuses, and `verify_mesh` remembers a
successful check on the (frozen) Mesh while the device ceiling is still enforced."""

from __future__ import annotations

import pytest

from shardconv.core.errors import LimitExceededError, ShardingValidationError
from shardconv.core.limits import Limits, within
from shardconv.core.model import Mesh, MeshAxis
from shardconv.core.mesh_invariants import verify_mesh


def test_cached_check_still_honours_a_lowered_ceiling() -> None:
    mesh = Mesh.of({"a": 4, "b": 4}, device_ids=list(range(16))[::-1])
    verify_mesh(mesh)
    verify_mesh(mesh)  # cached
    with within(Limits(8)), pytest.raises(LimitExceededError, match="16 devices exceeds the device limit of 8"):
        verify_mesh(mesh)
    verify_mesh(mesh)


def test_failed_check_is_not_cached() -> None:
    mesh = Mesh(axes=(MeshAxis("a", 2),), explicit_device_ids=(0, 0))  # built around Mesh.of, as a caller can
    for _ in range(2):
        with pytest.raises(ShardingValidationError, match="sorted device ids must be iota"):
            verify_mesh(mesh)


def test_cache_does_not_affect_equality_or_hash() -> None:
    a, b = Mesh.of({"a": 2, "b": 2}, device_ids=[3, 2, 1, 0]), Mesh.of({"a": 2, "b": 2}, device_ids=[3, 2, 1, 0])
    verify_mesh(a)
    _ = a.axis_sizes, a.num_devices, a._position_of
    assert a == b and hash(a) == hash(b) and repr(a) == repr(b)


@pytest.mark.parametrize(
    ("axes", "ids", "message"),
    [
        ([("x", 2), ("x", 4)], None, 'duplicate axis name: "x"'),
        ([("x", 0)], None, "axis size must be at least 1, got: 0"),
        ([("x", 2)], [0, 2], "sorted device ids must be iota(product(axes)), got: 0, 2"),
        ([("x", 2)], [0, 1, 2], "total product of axis sizes must match total number of device ids, got: 2 != 3"),
        ([("x", 2)], [-1, 0], "device id must be non-negative, got: -1"),
        ([], [0, 1], "axes is empty and device_ids has more than one element"),
    ],
)
def test_mesh_of_builds_only_meshes_shardy_would_verify(
    axes: list[tuple[str, int]], ids: list[int] | None, message: str
) -> None:
    """A Mesh verifies itself when it is built, as Shardy's MeshAttr does: no entry point re-checks it."""
    with pytest.raises(ShardingValidationError) as e:
        Mesh.of(axes, ids)
    assert e.value.message == message


def test_mesh_of_remembers_it_verified() -> None:
    mesh = Mesh.of([("x", 2), ("y", 4)], [0, 2, 4, 6, 1, 3, 5, 7])
    assert mesh.__dict__.get("_shardconv_verified_devices") == 8
