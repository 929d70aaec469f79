"""Every spelling that differs between releases, from XLA's and Shardy's public tests (each case names its
source file): shardconv reads it into the one model, prints it back as each release writes it (0.10.2 checked
against jaxlib 0.10.2 itself), and the placement survives every printing."""

from __future__ import annotations

import pytest
from cases import HLO, HloCase
from support.oracle_sdy import sdy_print_attr, sdy_verify
from support.oracle_xla import xla_result, xla_v3_to_v2

from shardconv.convert import to_sdy
from shardconv.convert.spellings import v3_to_v2
from shardconv.core.errors import ShardingSyntaxError
from shardconv.core.placement import placement
from shardconv.formats import parse_hlo, parse_mesh, parse_sdy
from shardconv.formats.hlo.write import print_hlo
from shardconv.formats.releases import releases_of
from shardconv.formats.xla_versions import XLA_VERSIONS
from shardconv.formats.sdy.verify import verify

pytestmark = pytest.mark.oracle


def _id(case: HloCase) -> str:
    return f"{case.source.rsplit('/', 1)[-1]}: {case.text}"


@pytest.mark.parametrize("case", HLO, ids=_id)
def test_prints_each_release_spelling(case: HloCase) -> None:
    h = parse_hlo(case.text)
    printed = {v: print_hlo(h, xla_version=v) for v in XLA_VERSIONS if case.prints[v] is not None}
    assert printed == {v: p for v, p in case.prints.items() if p is not None}
    assert str(h) == case.prints["0.10.2"]  # the default is jaxlib 0.10.2


@pytest.mark.parametrize("case", HLO, ids=_id)
def test_jaxlib_0_10_2_agrees(case: HloCase) -> None:
    """jaxlib 0.10.2 prints our 0.10.2 spelling unchanged and derives the same tile array from it; it
    reads the source's own text exactly when formats/releases.py says 0.10.2 writes its spellings."""
    ours = str(case.prints["0.10.2"])
    assert xla_result(ours).text == ours
    assert str(v3_to_v2(parse_hlo(ours))) == xla_v3_to_v2(ours)
    written_by = releases_of(case.text)
    assert xla_result(case.text).accepted == (written_by is None or "0.10.2" in written_by), written_by


@pytest.mark.parametrize("case", HLO, ids=_id)
def test_every_printing_has_the_same_placement(case: HloCase) -> None:
    """Re-read, every printing places the data as the source did (a shorthand may re-read as other,
    equal axes); only jaxlib 0.9.1's dropping of axis-less dims and XLA head's short forms at any rank
    lose the rank, never the device groups."""
    h = parse_hlo(case.text)
    want = placement(v3_to_v2(h))
    for version in XLA_VERSIONS:
        got = placement(v3_to_v2(parse_hlo(print_hlo(h, xla_version=version))))
        if got.rank != want.rank:
            assert version in ("0.9.1", "head") and got.rank == 0
            assert (got.groups, got.subgroups) == (want.groups, want.subgroups)
        else:
            assert got == want, version


def test_v3_priorities_are_read_and_kept_for_shardy() -> None:
    """Priorities in V3 dims (no release writes them, none of jaxlib 0.9.2 to 0.10.2
    reads them): kept in the model, carried to Shardy, and dropped by every HLO printer."""
    text = "{mesh['i'=2,'j'=2], [{'i'}p1, {?}p0]}"
    h = parse_hlo(text)
    assert h.mesh_sharding is not None
    assert [d.priority for d in h.mesh_sharding.dims] == [1, 0]
    assert {print_hlo(h, xla_version=v) for v in XLA_VERSIONS} == {
        "{mesh[i=2,j=2], [{i}, {?}]}", "{mesh['i'=2,'j'=2], [{'i'}, {?}]}"}
    assert not xla_result(text).accepted
    assert releases_of(text) == frozenset()
    mesh = parse_mesh('<["i"=2, "j"=2]>')
    assert str(to_sdy(h, mesh)) == '#sdy.sharding<@mesh, [{"i"}p1, {?}p0]>'


@pytest.mark.parametrize("text", ["{mesh['a'=2], [{}p1]}", "{mesh[a=2], [{a}p01]}", "{mesh['a'=2], [{'a'} p1x]}"])
def test_bad_v3_priorities_are_refused_with_a_caret(text: str) -> None:
    with pytest.raises(Exception) as e:
        parse_hlo(text)
    assert e.value.column is not None and "^" in str(e.value)  # type: ignore[attr-defined]


def test_reduction_metadata_on_v2_is_kept() -> None:
    """The reduction of an unreduced V2 sharding rides in its metadata: kept as written."""
    text = '{devices=[2,2]<=[4] last_tile_dims={unreduced} metadata={op_type="sdy::reduction_op" op_name="MAX"}}'
    h = parse_hlo(text)
    assert h.to_text(include_metadata=True) == text
    assert xla_result(text).text == str(h)


# shardy/dialect/sdy/ir/test/reshard_verification.mlir
MAX = '#sdy.sharding<@mesh, [{}], unreduced=max{"x"}>'


def test_unreduced_max_from_reshard_verification_mlir() -> None:
    s = parse_sdy(MAX)
    assert s.unreduced_op == "max" and [a.name for a in s.unreduced] == ["x"]
    assert str(s) == MAX
    verify(s, parse_mesh('<["x"=2, "y"=2]>'), 1)
    with pytest.raises(ValueError):
        sdy_print_attr(MAX)  # jaxlib 0.10.2's Shardy does not read it
    assert sdy_verify([("mesh", '<["x"=2, "y"=2]>')], MAX.replace("max", ""), (8,)) is None  # the sum spelling it does


def test_unreduced_min_and_unknown_reductions() -> None:
    assert parse_sdy('#sdy.sharding<@mesh, [{}], unreduced=min{"x"}>').unreduced_op == "min"
    with pytest.raises(ShardingSyntaxError, match="unknown reduction 'avg'") as e:
        parse_sdy('#sdy.sharding<@mesh, [{}], unreduced=avg{"x"}>')
    assert e.value.column == 38
    with pytest.raises(ShardingSyntaxError, match="expected '{'"):
        parse_sdy('#sdy.sharding<@mesh, [{}], replicated=max{"x"}>')


@pytest.mark.parametrize("key", ["replicated", "unreduced"])
def test_empty_axis_lists(key: str) -> None:
    """``replicated={}``: newer Shardy reads it, jaxlib 0.10.2's does not; it holds nothing."""
    text = f'#sdy.sharding<@mesh, [{{"x"}}], {key}={{}}>'
    assert str(parse_sdy(text)) == '#sdy.sharding<@mesh, [{"x"}]>'
    with pytest.raises(ValueError):
        sdy_print_attr(text)


@pytest.mark.parametrize(("long", "short"), [
    ("{mesh['x'=8,'y'=4], [{}], manual={'x', 'y'}}", "{mesh['x'=8,'y'=4], manual}"),
    ("{mesh['axis_0'=16], [{}, {}]}", "{mesh[], replicated}"),
])
def test_head_short_forms_and_what_jaxlib_0_10_2_makes_of_them(long: str, short: str) -> None:
    """XLA head's export writes the short form at any rank; jaxlib 0.10.2 prints the long form
    unchanged. It does read the short form (docs/formats.md §6 says it does not; the oracle wins), but as a
    rank-0 sharding, which is why the 0.10.2 printing keeps the long one. Both place the devices alike."""
    h = parse_hlo(long)
    assert (str(h), print_hlo(h, xla_version="head")) == (long, short)
    assert xla_result(long).text == long and xla_result(short).text == short
    assert parse_hlo(short).rank is None and xla_v3_to_v2(short) == xla_v3_to_v2(long) == str(v3_to_v2(h))
