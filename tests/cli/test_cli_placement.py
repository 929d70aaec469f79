"""Placement (which device holds which tile) and its tile grids / lists."""

from __future__ import annotations

import io

import pytest

from shardconv.core.model import HloSharding, SubgroupType, TileAssignment
from shardconv.core.normalise import canonical_tiled
from shardconv.core.placement import placement
from shardconv.ui.device_ids import compress_ids
from shardconv.ui.tiles import render_placement

R = SubgroupType.REPLICATED


def seed() -> HloSharding:
    """{devices=[1,4,2]<=[8] last_tile_dim_replicate}: device 2t+r holds tile t."""
    return canonical_tiled(TileAssignment.iota((1, 4, 2)), [R])


def test_seed_placement_with_shape() -> None:
    p = placement(seed(), shape=(32, 32))
    assert p.tile_counts == (1, 4)
    assert [t.devices for t in p.tiles] == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert [t.slice for t in p.tiles][1] == ((0, 32), (8, 16))
    assert p.groups == ((0, 1), (2, 3), (4, 5), (6, 7))
    assert p.num_devices == 8


def test_transposed_iota_groups() -> None:
    """{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}: tile t held by t and t+4."""
    h = canonical_tiled(TileAssignment.iota((1, 4, 2), (2, 4), (1, 0)), [R])
    assert placement(h).groups == ((0, 4), (1, 5), (2, 6), (3, 7))


def test_uneven_shape_pads_like_xla() -> None:
    h = canonical_tiled(TileAssignment.iota((4,)))
    p = placement(h, shape=(10,))
    assert [t.slice for t in p.tiles] == [((0, 3),), ((3, 6),), ((6, 9),), ((9, 10),)]


def test_manual_subgroup_is_not_replication() -> None:
    h = canonical_tiled(TileAssignment.iota((2, 2, 2)), [SubgroupType.MANUAL, R])
    p = placement(h)
    assert p.tile_counts == (2,)
    assert p.groups == ((0, 1), (2, 3), (4, 5), (6, 7))


def test_untiled_kinds() -> None:
    assert placement(HloSharding.replicated(), shape=(4, 4), num_devices=4).groups == ((0, 1, 2, 3),)
    m = placement(HloSharding.maximal(3), shape=(4,))
    assert m.tiles[0].devices == (3,) and m.tiles[0].slice == ((0, 4),)


def test_shape_rank_mismatch() -> None:
    with pytest.raises(Exception, match="rank"):
        placement(seed(), shape=(32,))


def test_compress_ids() -> None:
    assert compress_ids([0, 1, 2, 3, 6, 8, 9]) == "0-3,6,8,9"
    assert compress_ids([5]) == "5"


def _render(h: HloSharding, width: int = 80, shape: tuple[int, ...] | None = None) -> str:
    from rich.console import Console

    buf = io.StringIO()
    c = Console(file=buf, width=width, color_system=None)
    for r in render_placement(placement(h, shape=shape), width=width, color=False):
        c.print(r)
    return buf.getvalue()


def test_grid_rank2_fits_80_columns() -> None:
    out = _render(seed(), shape=(32, 32))
    assert "[0:32, 8:16]" in out and "2,3" in out
    assert max(map(len, out.splitlines())) <= 80


def test_grid_rank3_one_grid_per_leading_index() -> None:
    out = _render(canonical_tiled(TileAssignment.iota((2, 2, 2))))
    assert "[0, :, :]" in out and "[1, :, :]" in out
    assert out.count("┌") == 2


def test_wide_grid_falls_back_to_tile_list() -> None:
    out = _render(canonical_tiled(TileAssignment.iota((1, 64))), shape=(8, 1024))
    assert "tile" in out and "(0, 63)" in out
    assert max(map(len, out.splitlines())) <= 80


def test_compact_grid_when_boxes_do_not_fit() -> None:
    out = _render(canonical_tiled(TileAssignment.iota((16, 16))), shape=(64, 64))
    assert "┌" not in out and "[0:4" not in out
    assert out.splitlines()[-1].split() == [str(d) for d in range(240, 256)]
    assert max(map(len, out.splitlines())) <= 80
