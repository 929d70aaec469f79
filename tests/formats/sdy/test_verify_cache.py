"""verify_mesh remembers a successful check on the (frozen) Mesh; the device ceiling is still enforced."""

from __future__ import annotations

import pytest

from shardconv.core.errors import LimitExceededError, ShardingValidationError
from shardconv.core.limits import set_max_devices
from shardconv.core.model import Mesh
from shardconv.formats.sdy.verify import verify_mesh


def test_cached_check_still_honours_a_lowered_ceiling() -> None:
    mesh = Mesh.of({"a": 4, "b": 4}, device_ids=list(range(16))[::-1])
    verify_mesh(mesh)
    verify_mesh(mesh)  # cached
    try:
        set_max_devices(8)
        with pytest.raises(LimitExceededError, match="16 devices exceeds the device limit of 8"):
            verify_mesh(mesh)
    finally:
        set_max_devices(None)
    verify_mesh(mesh)


def test_failed_check_is_not_cached() -> None:
    mesh = Mesh.of({"a": 2}, device_ids=[0, 0])
    for _ in range(2):
        with pytest.raises(ShardingValidationError, match="sorted device ids must be iota"):
            verify_mesh(mesh)


def test_cache_does_not_affect_equality_or_hash() -> None:
    a, b = Mesh.of({"a": 2, "b": 2}, device_ids=[3, 2, 1, 0]), Mesh.of({"a": 2, "b": 2}, device_ids=[3, 2, 1, 0])
    verify_mesh(a)
    _ = a.axis_sizes, a.num_devices, a._position_of
    assert a == b and hash(a) == hash(b) and repr(a) == repr(b)
