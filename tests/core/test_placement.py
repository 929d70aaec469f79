"""The core HLO placement: tile order, XLA's padding rule, replica groups (shared by show and the reference backend)."""

from __future__ import annotations

from shardconv.backends.slices_hlo import hlo_slices
from shardconv.formats import parse_hlo
from shardconv.core.placement import placement, replica_groups, tile_blocks, tile_box


def test_tile_box_pads_like_xla_short_or_empty_last_shards() -> None:
    assert [tile_box((i,), (4,), (3,)) for i in range(4)] == [((0, 1),), ((1, 2),), ((2, 3),), ((3, 3),)]
    assert tile_box((1, 2), (2, 3), (5, 7)) == ((3, 5), (6, 7))


def test_tile_blocks_walk_tiles_row_major_with_subgroups_last() -> None:
    h = parse_hlo("{devices=[2,2,2]<=[2,2,2]T(2,1,0) last_tile_dim_replicate}")
    assert list(tile_blocks(h)) == [((0, 0), (0, 4)), ((0, 1), (2, 6)), ((1, 0), (1, 5)), ((1, 1), (3, 7))]


def test_replica_groups_only_replicated_subgroup_dims_copy_data() -> None:
    assert replica_groups((0, 1, 2, 3), (2, 2), [1]) == [(0, 1), (2, 3)]
    assert replica_groups((0, 1), (2,), []) == [(0,), (1,)]


def test_show_and_reference_backend_agree_on_every_device() -> None:
    h = parse_hlo("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}")
    shape = (3, 7)
    boxes = {d: t.slice for t in placement(h, shape=shape).tiles for d in t.devices}
    s = hlo_slices(h, shape, 8)
    assert all(s.box(d) == boxes[d] for d in range(8))
