"""xla_import reproduces every docs/formats.md §3.2 golden case (XLA's mesh-less import, distorted mesh)."""

from __future__ import annotations

import pytest

from shardconv.convert import xla_import
from shardconv.convert.factoring import common_factors
from shardconv.convert.xla_import import local_mesh
from shardconv.core.errors import NotExpressibleError
from shardconv.core.model import Mesh
from shardconv.formats import parse_hlo, parse_mesh, parse_sdy


def _sdy(text: str):  # type: ignore[no-untyped-def]
    return parse_sdy(f"#sdy.sharding<@mesh, {text}>")


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [([4, 8], [8, 4], [4, 2, 4]), ([6, 1, 4], [2, 6, 2], [2, 3, 2, 2]), ([2, 3], [3, 2], None), ([1, 1], [1], [])],
)
def test_common_factors(a: list[int], b: list[int], want: list[int] | None) -> None:
    assert common_factors(a, b) == want


@pytest.mark.parametrize(
    ("hlo", "mesh", "dims"),
    [
        ("{devices=[1,4,2]<=[8] last_tile_dim_replicate}", '<["_axis_0"=4, "_axis_1"=2]>', '[{}, {"_axis_0"}]'),
        ("{devices=[16,1]<=[16]}", '<["_axis_0"=16]>', '[{"_axis_0"}, {}]'),
        (
            "{devices=[6,35]<=[7,10,3]T(2,1,0)}",
            '<["_axis_0"=7, "_axis_1"=2, "_axis_2"=5, "_axis_3"=3]>',
            '[{"_axis_3", "_axis_1"}, {"_axis_2", "_axis_0"}]',
        ),
    ],
)
def test_golden_single(hlo: str, mesh: str, dims: str) -> None:
    got_mesh, got = xla_import([parse_hlo(hlo)])
    assert got_mesh == parse_mesh(mesh) and got_mesh.name == "mesh"
    assert got == [_sdy(dims)]


def test_golden_module() -> None:
    hs = [
        parse_hlo("{devices=[4,8]<=[8,4]T(1,0)}"),
        parse_hlo("{devices=[1,2,16]<=[32] last_tile_dim_replicate}"),
        parse_hlo("{devices=[4,4,2]<=[2,16]T(1,0) last_tile_dim_replicate}"),
    ]
    assert [local_mesh(h) for h in hs] == [[8, 4], [2, 16], [2, 4, 4]]
    mesh, got = xla_import(hs)
    assert mesh == parse_mesh('<["_axis_0"=2, "_axis_1"=4, "_axis_2"=4]>')
    assert got == [
        _sdy('[{"_axis_2"}, {"_axis_0", "_axis_1"}]'),
        _sdy('[{}, {"_axis_0"}]'),
        _sdy('[{"_axis_1"}, {"_axis_2"}]'),
    ]


def test_golden_kinds() -> None:
    mesh, got = xla_import(
        [parse_hlo("{unknown}"), parse_hlo("{replicated}"), parse_hlo("{maximal device=4}")], ranks=[2, 2, None]
    )
    assert got[0] == _sdy("[{?}, {?}]")
    assert got[1] == _sdy("[{}, {}]")
    mx = got[2]
    assert isinstance(mx.mesh, Mesh) and mx.mesh.name == "maximal_mesh_4" and mx.dims == ()  # type: ignore[union-attr]
    assert mx.mesh == Mesh.of([], device_ids=[4])  # type: ignore[union-attr]


def test_aborts_where_xla_does() -> None:
    with pytest.raises(NotExpressibleError, match="explicit device lists"):
        xla_import([parse_hlo("{devices=[2,2]0,1,2,3}")])
    with pytest.raises(NotExpressibleError, match="cannot factor"):
        xla_import([parse_hlo("{devices=[2,3]<=[2,3]T(1,0)}")])
    with pytest.raises(NotExpressibleError, match="intersect"):
        xla_import([parse_hlo("{devices=[2,3]<=[6]}"), parse_hlo("{devices=[3,2]<=[6]}")])


def test_seed_distorted_mesh() -> None:
    """The seed's string imports on a distorted 4x2 mesh; XLA's own export of {}, {model} on
    batch=2,model=4 would have imported on a 2x4 one (the seed string is a different sharding)."""
    from shardconv.convert import to_hlo

    mesh, [s] = xla_import([parse_hlo("{devices=[1,4,2]<=[8] last_tile_dim_replicate}")])
    assert mesh == parse_mesh('<["_axis_0"=4, "_axis_1"=2]>')
    assert s == _sdy('[{}, {"_axis_0"}]')
    real = parse_mesh('<["batch"=2, "model"=4]>')
    mesh, [s] = xla_import([to_hlo(_sdy('[{}, {"model"}]'), real)])
    assert mesh == parse_mesh('<["_axis_0"=2, "_axis_1"=4]>')
    assert s == _sdy('[{}, {"_axis_1"}]')
