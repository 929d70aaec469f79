"""Open dims in HLO V3 (``{mesh['a'=2,'b'=4], [{'a', ?}, {?}]}``): jaxlib 0.10.2 keeps them, and so does
every V3 path of shardconv (V3 → sdy → V3, sdy → V3, ``convert --to v3``), byte for byte as XLA prints."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings

from support.cli_util import run
from support.hlo_strategies import v3, v3_is_valid
from support.sdy_strategies import valid_on_mesh
from support.oracle_xla import xla_result, xla_sharding, xla_v3_to_v2
from support.validate import validate_all, validate_identity
from shardconv.convert import to_hlo, to_v3
from shardconv.core.model import Mesh, TensorSharding
from shardconv.formats import parse_hlo, parse_sdy

pytestmark = pytest.mark.oracle

# The issue's two texts: jaxlib 0.10.2's round trip, and the text XLA's export tests print.
ISSUE = ["{mesh['a'=2,'b'=4], [{'a', ?}, {?}]}", "{mesh['i'=2,'j'=2], [{'i', ?}, {?}], replicated={'j'}}"]


def _has_open_dim(s: str) -> bool:
    ms = parse_hlo(s).mesh_sharding
    return ms is not None and any(not d.is_closed for d in ms.dims)


@pytest.mark.parametrize("text", ISSUE)
def test_issue_texts_keep_their_open_dims(text: str) -> None:
    assert xla_result(text).text == text
    validate_identity(text)
    validate_all(text, v3=text)  # V3 → Shardy → V3, the path ``convert --to v3`` takes for other inputs
    assert run("convert", text, "--to", "v3").out == text + "\n"
    sdy = run("convert", text, "--to", "sdy").out.strip()
    mesh = "a=2,b=4" if "'a'" in text else "i=2,j=2"
    assert run("convert", sdy, "--mesh", mesh, "--to", "v3").out == text + "\n"


def test_sdy_open_dims_to_v3_as_the_issue_writes_them() -> None:
    s = parse_sdy('#sdy.sharding<@mesh, [{"a", ?}, {?}]>')
    assert str(to_v3(s, Mesh.of({"a": 2, "b": 4}))) == "{mesh['a'=2,'b'=4], [{'a', ?}, {?}]}"


def test_priorities_still_go_and_the_note_says_only_that() -> None:
    r = run("convert", '#sdy.sharding<@mesh, [{"a", ?}p1, {?}]>', "--mesh", "a=2,b=4", "--to", "v3", "--explain")
    assert r.out == "{mesh['a'=2,'b'=4], [{'a', ?}, {?}]}\n"
    assert "HLO V3 has no priorities" in r.err and "open dims" not in r.err
    r = run("convert", '#sdy.sharding<@mesh, [{"a", ?}, {?}]>', "--mesh", "a=2,b=4", "--to", "hlo", "--explain")
    assert "HLO has no open dims" in r.err


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(v3(id_kinds=("none", "explicit")).filter(v3_is_valid).filter(_has_open_dim))
def test_generated_open_v3_round_trips_as_xla(s: str) -> None:
    """Parse → print, the proto, and the trip through Shardy all equal jaxlib 0.10.2's printing of ``s``."""
    r = xla_result(s)
    assert r.accepted and r.text is not None and r.proto is not None
    h = parse_hlo(s)
    assert str(h) == r.text and h.to_proto() == r.proto
    assert h.mesh_sharding is not None
    # A manual sub-axis has no manual_computation spelling (manual_axes names whole axes): not this test's.
    assume(all(a.sub_axis is None for a in h.mesh_sharding.manual))
    validate_all(s, v3=r.text)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(valid_on_mesh(open_dims=True))
def test_generated_open_sdy_to_v3_is_what_xla_reads_and_prints(case: tuple[TensorSharding, Mesh]) -> None:
    """XLA reads our V3 text of an open Shardy sharding, prints it unchanged, keeps the open dims, and derives
    from it the tile array our sdy → HLO export gives."""
    s, mesh = case
    text = str(to_v3(s, mesh))
    assert xla_result(text).text == text, text
    assert [d.is_closed for d in parse_hlo(text).mesh_sharding.dims] == [d.is_closed for d in s.dims]  # type: ignore[union-attr]
    assert xla_v3_to_v2(text) == str(to_hlo(s, mesh)), text
    assert xla_sharding(text).to_proto().SerializeToString() == to_v3(s, mesh).to_proto()
