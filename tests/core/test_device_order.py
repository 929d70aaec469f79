"""The one device-order routine, checked against numpy's reshape + transpose (which stands in for XLA's
arrays): iota materialisation, explicit-list transposes, strides and their inverses."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardconv.core.device_order import (
    inverse_permutation,
    iota_order,
    position_of,
    strides,
    transposed,
    transposed_indices,
    unravel,
)

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4)


@given(shapes, st.data())
@settings(max_examples=200, deadline=None)
def test_iota_order_is_numpy_reshape_transpose(dims: list[int], data: st.DataObject) -> None:
    perm = data.draw(st.permutations(range(len(dims))))
    want = np.arange(int(np.prod(dims))).reshape(dims).transpose(perm).ravel().tolist()
    assert iota_order(dims, perm) == want
    values = data.draw(st.permutations(range(len(want))))
    assert transposed(values, dims, perm) == np.asarray(values).reshape(dims).transpose(perm).ravel().tolist()


def test_strides_unravel_and_inverses() -> None:
    dims = [2, 3, 4]
    assert strides(dims) == [12, 4, 1]
    for flat in range(24):
        assert sum(c * s for c, s in zip(unravel(flat, dims), strides(dims))) == flat
    for perm in itertools.permutations(range(3)):
        inv = inverse_permutation(perm)
        assert [perm[i] for i in inv] == [0, 1, 2]
    assert position_of([5, 3, 9]) == {5: 0, 3: 1, 9: 2}


@given(shapes)
def test_strides_and_unravel_are_numpys(dims: list[int]) -> None:
    itemsize = np.zeros(1, dtype=np.int64).itemsize
    assert strides(dims) == [s // itemsize for s in np.zeros(dims, dtype=np.int64).strides]
    for flat in range(int(np.prod(dims))):
        assert unravel(flat, dims) == tuple(int(c) for c in np.unravel_index(flat, dims))


@given(shapes, st.data())
def test_transposing_back_by_the_inverse_restores_the_order(dims: list[int], data: st.DataObject) -> None:
    perm = data.draw(st.permutations(range(len(dims))))
    values = list(range(100, 100 + int(np.prod(dims))))
    there = transposed(values, dims, perm)
    back = transposed(there, [dims[p] for p in perm], inverse_permutation(perm))
    assert back == values
    assert sorted(transposed_indices(dims, perm)) == list(range(len(values)))  # a permutation of positions


def test_the_identity_permutation_and_size_one_dims_keep_the_order() -> None:
    assert iota_order([2, 3], [0, 1]) == list(range(6))
    assert iota_order([1, 4, 1], [2, 1, 0]) == [0, 1, 2, 3]  # only size-1 dims move: a reshape
    assert iota_order([4, 2], [1, 0]) == [0, 2, 4, 6, 1, 3, 5, 7]
    assert iota_order([1], [0]) == [0]


def test_transposed_refuses_a_shape_of_another_size() -> None:
    with pytest.raises(ValueError, match=r"cannot reshape 5 values into \[2, 3\]"):
        transposed([0, 1, 2, 3, 4], [2, 3], [1, 0])


def test_inverse_and_positions_are_inverse_maps() -> None:
    perm = [2, 0, 3, 1]
    inv = inverse_permutation(perm)
    assert inv == [1, 3, 0, 2] and inverse_permutation(inv) == perm
    where = position_of(perm)  # device -> position: the inverse permutation, as a map
    assert where == {2: 0, 0: 1, 3: 2, 1: 3} and [where[d] for d in range(4)] == inv
