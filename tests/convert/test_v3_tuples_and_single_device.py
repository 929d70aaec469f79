"""A tuple mixing V3 and V2 elements lands on the V3 elements' mesh, one rank per element; a
single-device V3 sharding imports as the rank-0 sharding whatever the value's rank."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.cli_util import run
from support.oracle_sdy import sdy_print_attr
from support.oracle_xla import xla_result, xla_sharding
from support.sdy_strategies import small_meshes, valid_on
from shardconv.convert import to_hlo, to_sdy, to_v3
from shardconv.core.model import HloSharding, Mesh, TensorSharding, TensorShardingPerValue
from shardconv.formats import parse_hlo

pytestmark = pytest.mark.oracle

MIXED = "{{mesh['a'=2,'b'=2], [{'a'}, {}]}, {replicated}}"


def test_the_issue_tuple_converts_with_one_rank_per_element() -> None:
    assert xla_result(MIXED).text == MIXED
    want = '#sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>, <@mesh, []>]>'
    assert str(to_sdy(MIXED, rank=[2, 0])) == want == sdy_print_attr(want)
    r = run("convert", MIXED, "--rank", "2,0")
    assert (r.code, r.out) == (0, want + "\n")
    r = run("convert", MIXED, "--rank", "2,2", "--to", "hlo")
    assert r.out.strip() == repr(xla_sharding(MIXED).v3_to_v2_sharding())


def test_a_tuple_still_needs_a_rank_for_an_any_rank_element() -> None:
    r = run("convert", MIXED)
    assert r.code == 2 and "tuple element 1 ({replicated}) applies to any rank" in r.err


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_generated_mixed_tuples_place_each_element_as_xla(data: st.DataObject) -> None:
    """Elements on one mesh, some written V3 and some as XLA's own V2 of them: converted without --mesh,
    each lands on the V3 elements' mesh and exports to the V2 tile array XLA derives for that element."""
    mesh: Mesh = data.draw(small_meshes())
    shardings = data.draw(st.lists(valid_on(mesh), min_size=1, max_size=4))
    as_v2 = data.draw(st.lists(st.booleans(), min_size=len(shardings), max_size=len(shardings)))
    as_v2[data.draw(st.integers(0, len(shardings) - 1))] = False  # at least one V3 element carries the mesh
    v3 = [str(to_v3(s, mesh)) for s in shardings]
    elems = [repr(xla_sharding(t).v3_to_v2_sharding()) if v2 else t for t, v2 in zip(v3, as_v2)]
    text = "{" + ", ".join(elems) + "}"
    assert xla_result(text).accepted, text
    got = to_sdy(parse_hlo(text), rank=[s.rank for s in shardings])
    assert isinstance(got, TensorShardingPerValue)
    for t, s in zip(v3, got.shardings):
        assert str(to_hlo(s, mesh)) == repr(xla_sharding(t).v3_to_v2_sharding()), text


SINGLE = "{maximal_mesh[device_id=0]}"


@pytest.mark.parametrize("rank", [0, 1, 2, 3])
def test_single_device_mesh_imports_as_rank_0(rank: int) -> None:
    """XLA writes ``#sdy.sharding<@mesh, []>`` for a single-device V3 sharding on a value of any rank."""
    assert xla_result(SINGLE).text == SINGLE
    got = to_sdy(SINGLE, rank=rank)
    assert isinstance(got, TensorSharding) and got.dims == ()
    assert run("convert", SINGLE, "--rank", str(rank)).out == "#sdy.sharding<@mesh, []>\n"
    back = to_hlo(got, parse_hlo(SINGLE).mesh_sharding.mesh)  # type: ignore[union-attr]
    assert back == HloSharding.maximal(0) and str(back) == repr(xla_sharding(SINGLE).v3_to_v2_sharding())
