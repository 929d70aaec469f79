"""Which Shardy reads what ``convert --to sdy`` writes (docs/releases.md, "Shardy attributes"): the Shardy
dialect version of each target is jaxlib 0.10.2's own answer, and every Shardy text written for jaxlib 0.10.2
is one its Shardy parses and prints back unchanged, or a refusal naming the release, for a text it rejects.
Reduction kinds are head-only (Shardy dialect 0.0.2): shardy/dialect/sdy/ir/test/tensor_sharding_parse_print.mlir
(``unreduced_axes_max``) is the public test that reads and prints them."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.cli_util import run
from support.oracle_sdy import sdy_print_attr
from support.sdy_strategies import valid_on_mesh

from shardconv.convert.reduction import require_spelling
from shardconv.core.errors import NotExpressibleError
from shardconv.core.model import Mesh, TensorSharding
from shardconv.formats.sdy.write import print_sharding
from shardconv.formats.xla_versions import REDUCTION_KINDS, SHARDY_DIALECT, reads


@pytest.mark.oracle
def test_jaxlib_0_10_2_names_its_shardy_dialect_as_the_table_does() -> None:
    from jaxlib.mlir.dialects import sdy

    for requirement in ("NONE", "WEEK_4", "WEEK_12", "MAX"):
        got = sdy.get_version_from_compatibility_requirement(getattr(sdy.CompatibilityRequirement, requirement))
        assert str(got) == SHARDY_DIALECT["0.10.2"], requirement
    assert not reads(REDUCTION_KINDS, "0.10.2") and reads(REDUCTION_KINDS, "head")


@pytest.mark.oracle
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(valid_on_mesh(), st.sampled_from(["sum", "max", "min"]))
def test_what_is_written_for_jaxlib_0_10_2_its_shardy_reads(case: tuple[TensorSharding, Mesh], op: str) -> None:
    s, _ = case
    s = replace(s, unreduced_op=op) if s.unreduced else s
    text = print_sharding(s)
    try:
        require_spelling(s, "sdy", "0.10.2")
    except NotExpressibleError as e:
        assert "cannot be read by jaxlib 0.10.2 (Shardy dialect 0.0.1)" in e.message
        with pytest.raises(ValueError):
            sdy_print_attr(text)  # refused exactly where jaxlib 0.10.2's Shardy rejects the text
        require_spelling(s, "sdy", "head")  # written for XLA head
    else:
        assert sdy_print_attr(text) == text


def test_the_cli_refuses_with_the_release_named_and_writes_for_head() -> None:
    """HLO head's reduction kind spelled for jaxlib 0.10.2's Shardy is refused with the release named;
    Shardy text in is Shardy text out, written as given at any release (nothing is dropped)."""
    head_v3 = "{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced=min{'b'}}"
    text = '#sdy.sharding<@mesh, [{"a"}, {}], unreduced=min{"b"}>'
    r = run("convert", head_v3, "--to", "sdy")
    assert r.code == 2 and r.out == ""
    assert "cannot be read by jaxlib 0.10.2 (Shardy dialect 0.0.1)" in r.err
    assert "from XLA head (Shardy dialect 0.0.2) on" in r.err and "--xla-version head" in r.err
    assert run("convert", head_v3, "--to", "sdy", "--xla-version", "head").out.strip().endswith("unreduced=min{\"b\"}>")
    for version in ("0.10.2", "head"):
        assert run("convert", text, "--mesh", "a=2,b=4", "--to", "sdy", "--xla-version", version).out == text + "\n"
