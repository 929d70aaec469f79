"""Reduction kinds of unreduced axes (``unreduced=max{"b"}``, ``min``; ``sum`` is the default): carried in
the model from Shardy to HLO and back, printed in every notation that spells them, refused with the
reason and a suggestion everywhere else, and never dropped."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from support.cli_util import run
from support.oracle_sdy import sdy_print_attr
from support.hlo_strategies import v3, v3_is_valid
from support.oracle_xla import xla_result, xla_v3_to_v2
from support.sdy_strategies import valid_on_mesh
from shardconv.cli.spell import TARGETS
from shardconv.convert import to_hlo, to_partition_spec, to_sdy, to_sdy_manual, to_v3, v3_to_v2
from shardconv.convert.reduction import hlo_reduction, reductions
from shardconv.core.errors import NotExpressibleError
from shardconv.core.model import Mesh, TensorSharding
from shardconv.core.placement import placement
from shardconv.formats import parse_hlo, parse_sdy
from shardconv.formats.hlo.write import print_hlo
from shardconv.formats.proto import from_proto_bytes
from shardconv.formats.xla_versions import XLA_VERSIONS

MAX = '#sdy.sharding<@mesh, [{"a"}, {}], unreduced=max{"b"}>'
MESH = Mesh.of({"a": 2, "b": 4})
HEAD_V2 = '{devices=[2,1,4]<=[8] last_tile_dims={unreduced} metadata={op_type="sdy::reduction_op" op_name="MAX"}}'


def test_the_issue_sharding_is_carried_to_hlo_and_back() -> None:
    s = parse_sdy(MAX)
    h = to_hlo(s, MESH)
    assert h.to_text(include_metadata=True) == HEAD_V2 and hlo_reduction(h) == "max"
    assert to_sdy(h, MESH) == s
    assert placement(h) == placement(to_hlo(replace(s, unreduced_op="sum"), MESH))  # the kind moves no data


@pytest.mark.oracle
def test_jaxlib_0_10_2_reads_the_head_v2_spelling_as_metadata() -> None:
    """XLA head's V2 spelling is plain metadata to jaxlib 0.10.2: it reads it, keeps it in the proto (our
    bytes are its bytes), and prints the sharding without it; its Shardy does not read the sdy spelling."""
    r = xla_result(HEAD_V2)
    assert r.text == "{devices=[2,1,4]<=[8] last_tile_dims={unreduced}}"
    assert r.proto == to_hlo(MAX, MESH).to_proto() == parse_hlo(HEAD_V2).to_proto()
    with pytest.raises(ValueError):
        sdy_print_attr(MAX)


@pytest.mark.oracle
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(valid_on_mesh(), st.sampled_from(["max", "min"]))
def test_generated_reductions_survive_the_export_as_xla_reads_it(case: tuple[TensorSharding, Mesh], op: str) -> None:
    s, mesh = case
    assume(any(r.size(mesh) > 1 for r in s.unreduced) and mesh.num_devices > 1)
    s = replace(s, unreduced_op=op)
    h = to_hlo(s, mesh)
    assert reductions(h) == (op,)
    text = h.to_text(include_metadata=True)
    r = xla_result(text)
    assert r.text == str(h) and r.proto == h.to_proto(), text
    back = to_sdy(parse_hlo(text), mesh, rank=s.rank)
    assert isinstance(back, TensorSharding) and back.unreduced_op == op


def test_notations_without_a_spelling_refuse_with_reason_and_suggestion() -> None:
    s = parse_sdy(MAX)
    with pytest.raises(NotExpressibleError, match="PartitionSpec has no reduction kind") as e:
        to_partition_spec(s, MESH)
    assert e.value.suggestions and "Shardy form" in e.value.suggestions[0].description


# XLA's hlo_parser_test.cc, ParseNamedShardingUnreducedMax (XLA head): V3 text spells the reduction.
HEAD_V3 = "{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced=max{'b'}}"


def test_v3_at_head_carries_it_to_shardy_v2_and_back() -> None:
    v3 = to_v3(MAX, MESH)
    assert print_hlo(v3, xla_version="head") == HEAD_V3 and reductions(v3) == ("max",)
    assert to_sdy(parse_hlo(HEAD_V3)) == replace(parse_sdy(MAX), mesh=MESH.symbol)
    r = run("convert", HEAD_V3, "--to", "v2", "--xla-version", "head")
    assert (r.code, r.out) == (0, HEAD_V2 + "\n"), r.err
    assert run("convert", HEAD_V3, "--to", "v3", "--xla-version", "head").out == HEAD_V3 + "\n"


@pytest.mark.parametrize("version", XLA_VERSIONS)
@pytest.mark.parametrize("target", [t for t in TARGETS if t != "json"])
def test_no_target_drops_the_reduction(target: str, version: str) -> None:
    """Every --to at every --xla-version either writes the reduction or refuses, saying why (exit 2)."""
    r = run("convert", MAX, "--mesh", "a=2,b=4", "--to", target, "--xla-version", version)
    if r.code == 0:
        # Shardy text in, Shardy text out: nothing is dropped at any release.
        assert target == "sdy" or (version == "head" and target not in ("proto-v3", "spec"))
        out = r.out.strip()
        written = bytes.fromhex(out) if target in ("proto-hex", "proto-v2") else out.encode()
        if target == "proto-base64":
            import base64

            written = base64.b64decode(out)
        assert b"max" in written or b"MAX" in written, out
    else:
        assert r.code == 2 and "would be dropped" in r.err and "try:" in r.err, r.err
        assert "^" in r.err  # the caret is under the reduced axes


def test_jaxlib_0_10_2_is_refused_as_head_only_spellings_are() -> None:
    r = run("convert", MAX, "--mesh", "a=2,b=4", "--xla-version", "0.10.2")
    assert r.code == 2 and r.out == ""
    assert "jaxlib 0.10.2 predates reduction kinds" in r.err and "--xla-version head" in r.err
    head = run("convert", MAX, "--mesh", "a=2,b=4", "--xla-version", "head")
    assert head.out == HEAD_V2 + "\n"
    assert run("convert", HEAD_V2, "--mesh", "a=2,b=4", "--xla-version", "head").out == MAX + "\n"


def test_json_names_the_reduction() -> None:
    doc = json.loads(run("convert", MAX, "--mesh", "a=2,b=4", "--to", "json").out)
    assert doc["sdy"]["unreduced_op"] == "max"


def test_roundtrip_keeps_it() -> None:
    r = run("roundtrip", MAX, "--mesh", "a=2,b=4")
    assert r.code == 0 and 'op_name="MAX"' in r.out and "dropped: nothing" in r.out


def test_jax_0_10_2_partition_specs_have_no_unreduced_kind() -> None:
    """JAX at head writes ``P(..., unreduced={...}, unreduced_kind=...)``; jax 0.10.2 has no such argument,
    so ``to_jax`` refuses a reduction instead of dropping it."""
    from jax.sharding import PartitionSpec as P

    import shardconv as sc

    with pytest.raises(TypeError, match="unreduced_kind"):
        P("a", unreduced={"b"}, unreduced_kind="max")  # type: ignore[call-arg]
    with pytest.raises(NotExpressibleError, match="unreduced_kind"):
        sc.to_jax(MAX, MESH)


def test_show_lists_every_spelling_of_the_release_asked_for() -> None:
    rows = {v: run("show", MAX, "--mesh", "a=2,b=4", "--xla-version", v).out for v in ("0.10.2", "head")}
    assert f"HLO V2  {HEAD_V2}" in rows["head"] and f"sdy     {MAX}" in rows["head"]
    assert f"sdy     {MAX}" in rows["0.10.2"] and "predates reduction kinds" in rows["0.10.2"]


def _with_kind(text: str, op: str) -> str | None:
    """``text`` (a V3 string with unreduced axes) spelled as XLA head writes it with reduction ``op``."""
    h = parse_hlo(text)
    ms = h.mesh_sharding
    if ms is None or not ms.dims or not any(r.size(ms.mesh) > 1 for r in ms.unreduced):
        return None  # size-1 unreduced axes leave no unreduced devices, so no V2 subgroup to carry a kind
    return print_hlo(replace(h, mesh_sharding=replace(ms, unreduced_op=op)), xla_version="head")


@pytest.mark.oracle
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(v3().filter(v3_is_valid), st.sampled_from(["max", "min"]))
def test_generated_v3_reductions_move_no_device_and_keep_the_kind(text: str, op: str) -> None:
    """The kind moves no data: XLA head's V3 text with ``unreduced=max{...}`` reads back to the same model,
    its V2 is jaxlib 0.10.2's V2 of the sum form plus head's metadata (jaxlib 0.10.2 reads that metadata and
    serializes it as we do), and the Shardy form carries the kind."""
    head = _with_kind(text, op)
    assume(head is not None)
    assert head is not None
    h = parse_hlo(head)
    assert h.mesh_sharding is not None and h.mesh_sharding.unreduced_op == op and f"unreduced={op}{{" in head
    assert print_hlo(h, xla_version="head") == head
    summed = print_hlo(replace(h, mesh_sharding=replace(h.mesh_sharding, unreduced_op="sum")))
    v2 = v3_to_v2(h)
    assert hlo_reduction(v2) == op
    assert str(v2) == xla_v3_to_v2(summed)  # XLA's V2 of the same placement
    with_meta = v2.to_text(include_metadata=True)
    r = xla_result(with_meta)
    assert r.text == str(v2) and r.proto == v2.to_proto(), with_meta
    sdy, _ = to_sdy_manual(h)
    assert isinstance(sdy, TensorSharding) and sdy.unreduced_op == op


def test_the_named_proto_refuses_a_reduction_instead_of_dropping_it() -> None:
    with pytest.raises(NotExpressibleError, match="would be dropped") as e:
        parse_hlo(HEAD_V3).to_proto()
    assert e.value.suggestions
    assert hlo_reduction(from_proto_bytes(v3_to_v2(parse_hlo(HEAD_V3)).to_proto())) == "max"
