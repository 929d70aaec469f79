"""``convert --to proto-hex / proto-v2 / proto-v3``: the proto of a V3 sharding is XLA's named one (an
OpSharding holding only field 14), as jaxlib 0.10.2 serializes it; ``proto-v2`` and ``proto-v3`` choose."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from support.cli_util import run
from support.hlo_strategies import tuple_sharding, v3, v3_is_valid
from support.oracle_xla import xla_proto, xla_result, xla_sharding
from shardconv.formats import parse_hlo

pytestmark = pytest.mark.oracle

ISSUE = "{mesh['a'=2,'b'=4], [{'a'}, {}]}"
MIXED_TUPLE = "{{mesh['a'=2,'b'=2], [{'a'}, {}]}, {replicated}}"


def _convert(text: str, target: str, *more: str) -> str:
    r = run("convert", text, "--to", target, *more)
    assert r.code == 0, r.err
    return r.out.strip()


def test_issue_v3_gives_the_named_proto() -> None:
    named = xla_proto(ISSUE).hex()
    assert named.startswith("721a120e") and named == _convert(ISSUE, "proto-hex") == _convert(ISSUE, "proto-v3")
    v2 = xla_sharding(ISSUE).v3_to_v2_sharding().to_proto().SerializeToString().hex()
    assert v2.startswith("0803") and _convert(ISSUE, "proto-v2") == v2


def test_a_v3_element_of_a_tuple_stays_named() -> None:
    assert _convert(MIXED_TUPLE, "proto-hex") == xla_proto(MIXED_TUPLE).hex()


def test_other_inputs_choose_the_form() -> None:
    sdy = '#sdy.sharding<@mesh, [{"a"}, {}]>'
    assert _convert(sdy, "proto-v3", "--mesh", "a=2,b=4") == xla_proto(ISSUE).hex()
    v2 = _convert(sdy, "proto-hex", "--mesh", "a=2,b=4")  # XLA's export of a Shardy sharding is V2
    assert v2 == _convert(sdy, "proto-v2", "--mesh", "a=2,b=4") == xla_proto("{devices=[2,1,4]<=[8] last_tile_dim_replicate}").hex()
    named = xla_proto(ISSUE).hex()
    assert _convert(named, "v3") == ISSUE and _convert(named, "proto-hex") == named  # a named proto stays named
    assert _convert(named, "proto-v2") == v2


def test_help_lists_the_forms() -> None:
    out = run("convert", "--help").out
    assert "proto-v2" in out and "proto-v3" in out


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(v3().filter(v3_is_valid))
def test_generated_v3_protos_are_xla_bytes(s: str) -> None:
    r = xla_result(s)
    assert r.accepted and r.proto is not None
    xla_v2 = xla_sharding(s).v3_to_v2_sharding().to_proto().SerializeToString()
    assert _convert(s, "proto-hex") == r.proto.hex() == _convert(s, "proto-v3"), s
    assert _convert(s, "proto-v2") == xla_v2.hex(), s


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(tuple_sharding())
def test_generated_tuples_protos_are_xla_bytes(s: str) -> None:
    """Tuples mixing V3 and V2 elements: each element keeps its own form, as in XLA's proto."""
    r = xla_result(s)
    assert r.accepted and r.proto is not None
    parse_hlo(s)
    assert _convert(s, "proto-hex") == r.proto.hex(), s


def test_show_lists_the_named_proto_of_a_v3_input() -> None:
    assert f"proto   {xla_proto(ISSUE).hex()}" in run("show", ISSUE).out
