"""XLA's normalisations (``core/canonical.py`` on iota forms, ``core/normalise.py`` on tiled shardings),
checked on the device order they must keep: numpy's reshape + transpose stands in for XLA's arrays."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardconv.core.canonical import canonical_iota, group_sorted_iota, transpose_iota
from shardconv.core.device_order import iota_order
from shardconv.core.model import HloSharding, Kind, SubgroupType, TileAssignment
from shardconv.core.normalise import canonical_tiled, partial_tile
from shardconv.formats.hlo.read import parse_hlo

R, M, U = SubgroupType.REPLICATED, SubgroupType.MANUAL, SubgroupType.UNREDUCED
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4)


def _factor(n: int, data: st.DataObject) -> list[int]:
    """Tile dims with ``n`` devices in all."""
    dims: list[int] = []
    while n > 1 and len(dims) < 3:
        d = data.draw(st.sampled_from([f for f in range(1, n + 1) if n % f == 0]))
        dims.append(d)
        n //= d
    return [*dims, n]


@given(shapes, st.data())
@settings(max_examples=200, deadline=None)
def test_canonical_iota_keeps_the_device_order(dims: list[int], data: st.DataObject) -> None:
    perm = data.draw(st.permutations(range(len(dims))))
    cdims, cperm = canonical_iota(dims, perm)
    assert iota_order(cdims, cperm) == iota_order(dims, perm)
    assert canonical_iota(cdims, cperm) == (cdims, cperm)  # a fixed point
    assert 1 not in cdims or len(cdims) == 1


@pytest.mark.parametrize(
    ("reshape", "perm", "want"),
    [
        ((2, 4), (0, 1), ((8,), (0,))),  # no transpose: one run
        ((2, 1, 4), (2, 1, 0), ((2, 4), (1, 0))),  # size-1 dims dropped
        ((2, 3, 4), (1, 2, 0), ((2, 12), (1, 0))),  # consecutive source dims fold
        ((1, 1), (1, 0), ((1,), (0,))),
        ((), (), ((1,), (0,))),
    ],
)
def test_canonical_iota_is_xlas_canonicalize_iota_dims(
    reshape: tuple[int, ...], perm: tuple[int, ...], want: tuple[tuple[int, ...], tuple[int, ...]]
) -> None:
    assert canonical_iota(reshape, perm) == want


@given(shapes, st.data())
def test_transpose_iota_keeps_the_devices_or_declines(dims: list[int], data: st.DataObject) -> None:
    n = int(np.prod(dims))
    rperm = data.draw(st.permutations(range(len(dims))))
    tile = _factor(n, data)
    tperm = data.draw(st.permutations(range(len(tile))))
    want = np.asarray(iota_order(dims, rperm)).reshape(tile).transpose(tperm).ravel().tolist()
    got = transpose_iota(tile, dims, rperm, tperm)
    if got is not None:
        assert iota_order(*got) == want
    assert list(TileAssignment.iota(tile, dims, rperm).transpose(tuple(tperm)).devices) == want


def test_transpose_iota_declines_when_xla_materialises() -> None:
    """<=[2,3]T(1,0) as tile dims [2,3]: the tile dim 2 meets a reshape piece of 3, neither divides the
    other, so XLA builds the array; as tile dims [3,2] the transpose is plain iota again."""
    assert transpose_iota((2, 3), (2, 3), (1, 0), (1, 0)) is None
    assert transpose_iota((3, 2), (2, 3), (1, 0), (1, 0)) == ((6,), (0,))
    t = TileAssignment.iota([2, 3], [2, 3], [1, 0]).transpose((1, 0))
    assert not t.is_iota and t.devices == (0, 4, 3, 2, 1, 5)
    assert TileAssignment.iota([3, 2], [2, 3], [1, 0]).transpose((1, 0)) == TileAssignment.iota([2, 3])


@given(shapes, st.data())
def test_group_sorted_iota_sorts_each_group(dims: list[int], data: st.DataObject) -> None:
    n = int(np.prod(dims))
    perm = data.draw(st.permutations(range(len(dims))))
    group = data.draw(st.sampled_from([g for g in range(1, n + 1) if n % g == 0]))
    order = iota_order(dims, perm)
    want = [d for k in range(0, n, group) for d in sorted(order[k : k + group])]
    got = group_sorted_iota(dims, perm, group)
    if got is not None:
        assert iota_order(*got) == want
    h = partial_tile(TileAssignment.iota([n // group, group], dims, perm))
    if h.kind is Kind.TILED:
        assert h.tile is not None and list(h.tile.devices) == want


# --- tiled shardings: HloSharding::Subgroup and ::PartialTile ------------------------------------------


@pytest.mark.parametrize(
    ("iota", "explicit"),
    [
        ("{devices=[2,2]<=[4]}", "{devices=[2,2]0,1,2,3}"),
        ("{devices=[2,2]<=[2,2]T(1,0)}", "{devices=[2,2]0,2,1,3}"),
        ("{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}", "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}"),
        ("{devices=[4,2]<=[2,4]T(1,0)}", "{devices=[4,2]0,4,1,5,2,6,3,7}"),
    ],
)
def test_iota_forms_equal_their_explicit_lists(iota: str, explicit: str) -> None:
    """XLA compares tile arrays, not spellings: the iota and the list place every device alike."""
    from shardconv.convert.spellings import to_v1, to_v2
    from shardconv.core.placement import same_assignment

    a, b = parse_hlo(iota), parse_hlo(explicit)
    assert a.tile is not None and b.tile is not None and a.tile.is_iota and not b.tile.is_iota
    assert a.tile.devices == b.tile.devices and a.subgroups == b.subgroups
    assert same_assignment(a, b) and to_v1(a) == b and to_v2(b) == a


@pytest.mark.parametrize(
    ("dims", "subgroups", "want"),
    [
        ([1, 4], [R], "{replicated}"),  # every device in the replicated group
        ([1, 1, 4], [R], "{replicated}"),
        ([4], [R], "{replicated}"),
        ([1, 4], [M], "{manual}"),
        ([1, 2, 2], [M, R], "{devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}"),
        ([2, 2], [U], "{devices=[2,2]<=[4] last_tile_dims={unreduced}}"),
        ([1, 2, 2], [R, R], "{replicated}"),  # repeats merge, then collapse
        ([2, 1, 2], [R, M], "{devices=[2,2]<=[4] last_tile_dims={manual}}"),  # size-1 subgroup dim dropped
        ([2, 2, 1], [R], "{devices=[2,2]<=[4]}"),  # a last dim of 1 replicates nothing
        ([2, 2, 2], [R, M], "{devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dims={manual, replicated}}"),
    ],
)
def test_subgroups_normalise_as_xla_does(dims: list[int], subgroups: list[SubgroupType], want: str) -> None:
    h = canonical_tiled(TileAssignment.iota(dims), subgroups)
    assert str(h) == want and parse_hlo(want) == h
    e = canonical_tiled(TileAssignment.from_devices(dims, list(range(int(np.prod(dims))))), subgroups)
    assert (e.kind, e.subgroups) == (h.kind, h.subgroups)  # the same normalisation on the explicit list
    assert (e.tile.devices if e.tile else None) == (h.tile.devices if h.tile else None)


def test_partial_tile_sorts_each_replica_group() -> None:
    h = canonical_tiled(TileAssignment.from_devices([2, 2], [3, 2, 1, 0]), [R])
    assert str(h) == "{devices=[2,2]2,3,0,1 last_tile_dim_replicate}"
    assert str(parse_hlo("{devices=[2,2]3,2,1,0 last_tile_dim_replicate}")) == str(h)


@given(shapes, st.data())
def test_replication_keeps_who_holds_each_tile(dims: list[int], data: st.DataObject) -> None:
    """Normalising only reorders devices inside a replica group and merges groups: each data tile is held
    by the same set of devices before and after."""
    n = int(np.prod(dims))
    perm = data.draw(st.permutations(range(len(dims))))
    tile = _factor(n, data)
    if len(tile) < 2:
        tile = [1, *tile]
    reps = data.draw(st.integers(1, len(tile) - 1))
    before = TileAssignment.iota(tile, dims, perm)
    h = canonical_tiled(before, [R] * reps)
    data_dims = tile[: len(tile) - reps]
    holders = np.asarray(before.devices).reshape(*data_dims, -1)
    if h.kind is Kind.REPLICATED:
        assert int(np.prod(data_dims)) == 1
        return
    assert h.tile is not None and h.subgroups in ((), (R,))
    after = np.asarray(h.tile.devices).reshape(*data_dims, -1)
    for idx in np.ndindex(*data_dims):
        assert sorted(holders[idx].tolist()) == sorted(after[idx].tolist())
    assert canonical_tiled(h.tile, h.subgroups) == h  # a fixed point


def test_maximal_and_flags_are_not_tiled() -> None:
    assert parse_hlo("{maximal device=3}") == HloSharding.maximal(3)
    assert parse_hlo("{replicated}") == HloSharding.replicated() != HloSharding.manual()
    assert parse_hlo("{devices=[1,1,4]<=[4] last_tile_dims={replicated}}") == HloSharding.replicated()
