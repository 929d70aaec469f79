"""convert.distortion: which module meshes XLA's mesh-less import distorts, and which shardings cause it."""

from __future__ import annotations

import pytest

from shardconv.convert.distortion import (
    analyse_import,
    merges_only,
    on_global,
)
from shardconv.convert.xla_import import listed_iota
from shardconv.core.errors import NotExpressibleError
from shardconv.formats import parse_hlo, parse_mesh

GLOB = parse_mesh("batch=2,model=4")
SEED = "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"


@pytest.mark.parametrize(
    ("shardings", "distorts", "renames", "causes"),
    [
        ([SEED], True, False, (0,)),  # 4x2 for 2x4: the seed
        (["{devices=[2,1,4]<=[8] last_tile_dim_replicate}"], False, True, ()),  # _axis_0=2, _axis_1=4
        (["{devices=[8,1]<=[8]}"], False, False, (0,)),  # both axes merged: 8 is 2x4 coarsened (``merges``)
        (["{devices=[2,1,4]<=[8] last_tile_dim_replicate}", SEED], True, False, (1,)),  # only the seed causes it
        (["{replicated}", "{maximal device=3}"], False, False, ()),  # nothing tiled: no mesh to invent
        (["{devices=[1,4,2]0,1,2,3,4,5,6,7 last_tile_dim_replicate}"], True, False, (0,)),  # torch-xla's V1 iota
    ],
)
def test_analyse_import(shardings: list[str], distorts: bool, renames: bool, causes: tuple[int, ...]) -> None:
    a = analyse_import([parse_hlo(s) for s in shardings], GLOB)
    assert (a.distorts, a.renames_only, a.causes) == (distorts, renames, causes)
    assert a.merges == (shardings == ["{devices=[8,1]<=[8]}"])


def test_invented_mesh_without_a_global_one_and_unimportable_lists() -> None:
    a = analyse_import([parse_hlo(SEED)])
    assert a.invented is not None and a.invented.axis_sizes == (4, 2) and not a.distorts
    b = analyse_import([parse_hlo("{devices=[2,2]0,3,1,2}")], parse_mesh("a=2,b=2"))
    assert b.invented is None and "explicit device lists" in b.reason


def test_listed_iota_and_merges_only() -> None:
    assert listed_iota(parse_hlo("{devices=[2,2]0,1,2,3}")) == parse_hlo("{devices=[2,2]<=[4]}")
    assert listed_iota(parse_hlo("{devices=[2,2]0,2,1,3}")) == parse_hlo("{devices=[2,2]0,2,1,3}")
    assert merges_only([2, 4], [8]) and merges_only([2, 4], [2, 4]) and not merges_only([2, 4], [4, 2])


def test_on_global_gives_the_right_sharding_or_says_why_not() -> None:
    assert str(on_global(parse_hlo(SEED), GLOB, 2)) == '#sdy.sharding<@mesh, [{}, {"batch", "model":(1)2}]>'
    with pytest.raises(NotExpressibleError):
        on_global(parse_hlo("{devices=[2,4]0,1,2,3,4,5,7,6}"), GLOB, 2)
