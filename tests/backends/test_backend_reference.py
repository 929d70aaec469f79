"""Reference backend: the HLO and Shardy slice derivations, the example set, and generated examples."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.backend_strategies import meshes, shardings
from shardconv.backends import DIFFER, Example, get_backend
from shardconv.backends.examples import load_examples
from shardconv.backends.slices_hlo import hlo_slices
from shardconv.backends.slices_sdy import sdy_slices
from shardconv.convert import to_hlo
from shardconv.core.errors import ShardingError
from shardconv.core.model import AxisRef, DimSharding, HloSharding, Mesh, SubAxis, TensorSharding
from shardconv.formats import parse_hlo

BM = Mesh.of({"batch": 2, "model": 4})
REF = get_backend("reference")


def ts(*dims: tuple[AxisRef, ...]) -> TensorSharding:
    return TensorSharding(mesh="mesh", dims=tuple(DimSharding(d) for d in dims))


def test_hlo_slices_pad_like_xla_last_shards_short_or_empty() -> None:
    # 3 elements over 4 tiles: ceil(3/4)=1 per shard, the last one empty.
    s = hlo_slices(parse_hlo("{devices=[4]<=[4]}"), (3,), 4)
    assert [s.box(d) for d in range(4)] == [((0, 1),), ((1, 2),), ((2, 3),), ((3, 3),)]
    assert s.held(3) is None
    s = hlo_slices(parse_hlo("{devices=[1,4,2]<=[8] last_tile_dim_replicate}"), (3, 7), 8)
    assert s.box(6) == s.box(7) == ((0, 3), (6, 7))


def test_hlo_slices_replicated_and_maximal() -> None:
    assert hlo_slices(HloSharding.replicated(), (2, 2), 4).box(3) == ((0, 2), (0, 2))
    s = hlo_slices(HloSharding.maximal(2), (4,), 4)
    assert [s.held(d) for d in range(4)] == [None, None, ((0, 4),), None]


def test_sdy_sub_axis_takes_the_middle_of_the_axis() -> None:
    # "model":(1)2 on model=4 is the major half: model coordinate m -> m // 2.
    s = sdy_slices(ts((), (AxisRef("batch"), AxisRef("model", SubAxis(1, 2)))), BM, (2, 8))
    assert [s.box(d)[1] for d in range(8)] == [(0, 2), (0, 2), (2, 4), (2, 4), (4, 6), (4, 6), (6, 8), (6, 8)]


def test_sdy_device_ids_map_positions_to_devices() -> None:
    mesh = Mesh.of({"x": 2, "y": 2}, device_ids=[3, 1, 2, 0])
    s = sdy_slices(ts((AxisRef("x"),), ()), mesh, (4, 2))
    assert s.box(3) == s.box(1) == ((0, 2), (0, 2)) and s.box(2) == s.box(0) == ((2, 4), (0, 2))


def test_both_derivations_reject_bad_input() -> None:
    with pytest.raises(ShardingError, match="rank"):
        hlo_slices(parse_hlo("{devices=[2,1]<=[2]}"), (4,), 2)
    with pytest.raises(ShardingError, match="unknown axis"):
        sdy_slices(ts((AxisRef("nope"),)), BM, (4,))


def test_wrong_pair_fails_naming_the_devices() -> None:
    r = REF.run(Example(name="w", mesh=BM, sharding='#sdy.sharding<@mesh, [{}, {"model"}]>', other="{devices=[1,4,2]<=[8] last_tile_dim_replicate}"))
    assert not r.ok and r.differing_devices == (1, 2, 3, 4, 5, 6)
    assert "device 1: A [0:2, 2:4] vs B [0:2, 0:2]" in next(c for c in r.checks if c.failed).detail


def test_seed_sharding_is_batch_and_half_of_model() -> None:
    r = REF.run(Example(name="s", mesh=BM, sharding='#sdy.sharding<@mesh, [{}, {"batch", "model":(1)2}]>', other="{devices=[1,4,2]<=[8] last_tile_dim_replicate}", shape=(32, 32)))
    assert r.ok and len(r.slices[0].devices) == 8


SPECS = load_examples()


def test_example_set_is_big_and_covers_the_brief() -> None:
    assert len(SPECS) >= 64
    tags = {t for s in SPECS for t in s.tags}
    assert {"seed", "2x4", "sub-axes", "device_ids", "uneven", "tuple", "3d", "wrong"} <= tags
    assert sum(s.name.startswith("2x4/spec") for s in SPECS) == 8


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_reference_backend_on_every_example(spec) -> None:  # type: ignore[no-untyped-def]
    ex = spec.load()
    r = REF.run(ex)
    assert r.verdict(ex.expect), [c for c in r.checks if c.failed]
    if ex.expect == DIFFER:
        assert r.differing_devices


@settings(max_examples=150)
@given(st.data())
def test_generated_sdy_agrees_with_its_hlo_export(data: st.DataObject) -> None:
    mesh = data.draw(meshes())
    rank = data.draw(st.integers(1, 3))
    sharding = data.draw(shardings(mesh, rank))
    shape = tuple(data.draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank)))
    r = REF.run(Example(name="gen", mesh=mesh, sharding=sharding, other=to_hlo(sharding, mesh), shape=shape))
    assert r.ok, [c.detail for c in r.checks if c.failed]
