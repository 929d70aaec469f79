"""jax backend: real XLA on CPU devices must hold exactly what the reference backend predicts.

One persistent worker per device count serves every test here (see jax_worker_pool)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jax  # noqa: F401  - the jax extra is required for these tests, never skipped
from support.backend_strategies import meshes, shardings
from shardconv.backends import DIFFER, Example, get_backend
from shardconv.backends.examples import load_examples
from shardconv.backends.jax_worker_pool import worker
from shardconv.convert import to_hlo
from shardconv.core.model import Mesh

BM = Mesh.of({"batch": 2, "model": 4})
JAX = get_backend("jax")
REF = get_backend("reference")
SPECS = load_examples()


def same_placement(a, b) -> bool:  # type: ignore[no-untyped-def]
    return len(a) == len(b) and all(not x.differing(y) for x, y in zip(a, b))


def test_available() -> None:
    assert JAX.available()


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_jax_backend_agrees_with_reference_on_every_example(spec) -> None:  # type: ignore[no-untyped-def]
    ex = spec.load()
    got, ref = JAX.run(ex), REF.run(ex)
    assert got.verdict(ex.expect), [(c.name, c.detail) for c in got.checks if c.failed]
    assert same_placement(got.slices, ref.slices), "XLA placed side A differently from the reference"
    if ex.expect == DIFFER:
        assert got.differing_devices == ref.differing_devices != ()


def test_wrong_pair_is_a_failure_naming_devices_on_xla() -> None:
    r = JAX.run(Example(name="w", mesh=BM, sharding='#sdy.sharding<@mesh, [{}, {"model"}]>', other="{devices=[1,4,2]<=[8] last_tile_dim_replicate}"))
    assert not r.ok and r.differing_devices == (1, 2, 3, 4, 5, 6)
    bad = [c for c in r.checks if c.failed]
    assert [c.name for c in bad] == ["same data on every device (XLA)"]  # each side alone is placed right
    assert "device 1: A [0:2, 2:4] vs B [0:2, 0:2]" in bad[0].detail


def test_uneven_shapes_are_placed_by_xla_with_padding() -> None:
    r = JAX.run(Example(name="u", mesh=BM, sharding="{devices=[1,4,2]<=[8] last_tile_dim_replicate}", shape=(3, 7)))
    assert r.ok, [c for c in r.checks if c.failed]
    assert r.slices[0].box(7) == ((0, 3), (6, 7))  # the last shard is short: ceil(7/4)=2 but 1 left
    assert any("GSPMD" in c.name for c in r.checks)


def test_the_worker_is_reused_per_device_count() -> None:
    w = worker(8)
    JAX.run(Example(name="a", mesh=BM, sharding="{devices=[2,4]<=[8]}"))
    JAX.run(Example(name="b", mesh=BM, sharding="{devices=[4,2]<=[8]}"))
    assert worker(8) is w


@settings(max_examples=25)
@given(st.data())
def test_generated_examples_agree_on_xla(data: st.DataObject) -> None:
    mesh = data.draw(meshes())
    rank = data.draw(st.integers(1, 2))
    sharding = data.draw(shardings(mesh, rank))
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    ex = Example(name="gen", mesh=mesh, sharding=sharding, other=to_hlo(sharding, mesh), shape=shape)
    got, ref = JAX.run(ex), REF.run(ex)
    assert got.ok, [(c.name, c.detail) for c in got.checks if c.failed]
    assert same_placement(got.slices, ref.slices) and same_placement(got.other, ref.other)
