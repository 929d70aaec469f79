"""shardconv.formats.releases on real inputs: JAX's own dumps (jaxlib 0.10.2) are never flagged as
mixing releases; a dump that adds one head spelling is, at the right places."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.oracle_xla import xla_canonical

from shardconv.core.model import Mesh
from shardconv.formats.xla_versions import XLA_VERSIONS, check_xla_version
from shardconv.formats.releases import (
    mixed_spellings,
    releases_of,
    spellings,
)

DUMPS = Path(__file__).resolve().parent.parent / "data" / "dumps"
REAL_DUMPS = sorted(p for p in DUMPS.iterdir() if p.suffix in (".mlir", ".hlo") and p.name != "bad.mlir")


@pytest.mark.parametrize("path", REAL_DUMPS, ids=lambda p: p.name)
def test_jax_dumps_are_of_one_release(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert mixed_spellings(text) is None
    written_by = releases_of(text)
    assert written_by is None or "0.10.2" in written_by


def test_a_head_spelling_among_0_10_2_ones_is_a_mix() -> None:
    """XLA 0.10.2's own printing of a V3 and a maximal V3 sharding, then head's single_device."""
    ours = [xla_canonical("{mesh['a'=2,'b'=4], [{'a'}, {}]}"), xla_canonical("{maximal_mesh[device_id=3]}")]
    base = (DUMPS / "jax_lowered.mlir").read_text(encoding="utf-8")
    text = base + "".join(f'\n%{i} = "x"() {{mhlo.sharding = "{s}"}}' for i, s in enumerate(ours))
    assert mixed_spellings(text) is None and releases_of(text) == frozenset({"0.9.2", "0.10.2"})
    mixed = text + '\n%9 = "x"() {mhlo.sharding = "{single_device[device_id=1]}"}'
    pair = mixed_spellings(mixed)
    assert pair is not None
    first, later = pair
    assert mixed[first.pos:].startswith("{mesh['a'") and mixed[later.pos:].startswith("{single_device[")
    assert releases_of(mixed) == frozenset()


def test_spellings_in_shardy_text() -> None:
    text = '#sdy.sharding<@single_device_0, []> #sdy.sharding<@m, [{"x"}], unreduced=max{"y"}>, replicated={}>'
    assert [s.name for s in spellings(text)] == ["@single_device_N mesh", "sdy unreduced=max/min", "sdy empty axis list"]
    assert releases_of(text) == frozenset({"head"})


def test_empty_lists_inside_v3_are_no_release_spelling() -> None:
    """Every release's V3 parser takes ``replicated={}`` (and every printer drops it)."""
    assert [s.name for s in spellings("{mesh['a'=2], [{'a'}], replicated={}}")] == ["quoted V3 axis names"]


def test_unknown_versions_are_refused() -> None:
    assert [check_xla_version(v) for v in XLA_VERSIONS] == list(XLA_VERSIONS)
    with pytest.raises(ValueError, match="unknown xla_version '0.11'"):
        check_xla_version("0.11")


@pytest.mark.parametrize(("xla_version", "name"), [("0.10.2", "maximal_mesh_3"), ("head", "single_device_3")])
def test_xla_import_names_the_single_device_mesh_as_the_release_does(xla_version: str, name: str) -> None:
    """``sdy_round_trip_import_pipeline_hlo_sharding_v3.mlir`` (jaxlib 0.10.2 and XLA at head): the mesh
    a ``{maximal device=N}`` sharding refers to is ``@maximal_mesh_N`` in 0.10.2, ``@single_device_N`` at head."""
    from shardconv import xla_import

    _, (sharding,) = xla_import(["{maximal device=3}"], xla_version=xla_version)
    assert isinstance(sharding.mesh, Mesh) and sharding.mesh.name == name
    assert sharding.mesh.device_ids == (3,)


@pytest.mark.oracle
def test_head_v3_reductions_are_heads_alone() -> None:
    """jaxlib 0.10.2 refuses XLA head's V3 reduction spellings (hlo_parser_test.cc at head); the rank-0
    shorthand ``{mesh[...], unreduced}`` is not one of them (only its quoted names date it)."""
    from support.oracle_xla import xla_result

    for text in ("{mesh['x'=2], [{}], unreduced=max{'x'}}", "{mesh['x'=2], [{}], unreduced}"):
        assert not xla_result(text).accepted
        assert releases_of(text) == frozenset({"head"}), text
    rank0 = "{mesh['x'=2], unreduced}"
    assert xla_result(rank0).accepted and releases_of(rank0) == frozenset({"0.9.2", "0.10.2", "head"})  # quoted
