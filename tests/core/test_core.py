"""core/ on its own: the device-order routine, XLA's iota canonicalisation, the limits, and the model's
smart constructors, each checked against a direct computation (numpy stands in for XLA's arrays)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardconv.core import limits
from shardconv.core.canonical import canonical_iota
from shardconv.core.device_order import (
    inverse_permutation,
    iota_order,
    position_of,
    strides,
    transposed,
    unravel,
)
from shardconv.core.errors import LimitExceededError
from shardconv.core.model import Mesh, MeshAxis, TileAssignment

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4)


@given(shapes, st.data())
@settings(max_examples=200, deadline=None)
def test_iota_order_is_numpy_reshape_transpose(dims: list[int], data: st.DataObject) -> None:
    perm = data.draw(st.permutations(range(len(dims))))
    want = np.arange(int(np.prod(dims))).reshape(dims).transpose(perm).ravel().tolist()
    assert iota_order(dims, perm) == want
    values = data.draw(st.permutations(range(len(want))))
    assert transposed(values, dims, perm) == np.asarray(values).reshape(dims).transpose(perm).ravel().tolist()


@given(shapes, st.data())
@settings(max_examples=200, deadline=None)
def test_canonical_iota_keeps_the_device_order(dims: list[int], data: st.DataObject) -> None:
    perm = data.draw(st.permutations(range(len(dims))))
    cdims, cperm = canonical_iota(dims, perm)
    assert iota_order(cdims, cperm) == iota_order(dims, perm)
    assert canonical_iota(cdims, cperm) == (cdims, cperm)  # a fixed point
    assert 1 not in cdims or len(cdims) == 1


def test_strides_unravel_and_inverses() -> None:
    dims = [2, 3, 4]
    assert strides(dims) == [12, 4, 1]
    for flat in range(24):
        assert sum(c * s for c, s in zip(unravel(flat, dims), strides(dims))) == flat
    for perm in itertools.permutations(range(3)):
        inv = inverse_permutation(perm)
        assert [perm[i] for i in inv] == [0, 1, 2]
    assert position_of([5, 3, 9]) == {5: 0, 3: 1, 9: 2}


def test_device_ceiling_refuses_before_allocating() -> None:
    with limits.within(limits.Limits(16)):
        assert limits.check_device_count([4, 4]) == 16
        with pytest.raises(LimitExceededError, match="exceeds the device limit of 16"):
            limits.check_device_count([4, 5])
        with pytest.raises(LimitExceededError, match="characters long"):
            limits.check_text_length(limits.current().max_text + 1)
    with pytest.raises(LimitExceededError, match="nested more than"):
        limits.check_nesting(limits.MAX_NESTING + 1, "tuple")


def test_mesh_of_drops_iota_device_ids_and_keeps_others() -> None:
    m = Mesh.of({"a": 2, "b": 2}, [0, 1, 2, 3])
    assert m.explicit_device_ids is None and m.device_ids == (0, 1, 2, 3)
    m = Mesh.of([("a", 2), ("b", 2)], [3, 1, 2, 0], name="m")
    assert m.explicit_device_ids == (3, 1, 2, 0) and m.name == "m"
    assert m.axes == (MeshAxis("a", 2), MeshAxis("b", 2)) and m.num_devices == 4


def test_tile_assignment_iota_matches_its_devices() -> None:
    t = TileAssignment.iota([2, 4], [2, 4], [1, 0])
    assert list(t.devices) == iota_order([2, 4], [1, 0])
    assert TileAssignment.from_devices([2, 4], list(t.devices)).devices == t.devices
