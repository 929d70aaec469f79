"""Every converter taking a Shardy sharding + mesh runs Shardy's verifier: one message per rule,
with the mesh appended in one place (``verify.on_mesh``)."""

from __future__ import annotations

import pytest

from shardconv.backends.slices_sdy import sdy_slices
from shardconv.convert import from_partition_spec, to_hlo, to_partition_spec, to_v3
from shardconv.core.errors import ShardingValidationError
from shardconv.core.model import Mesh, PartitionSpec
from shardconv.formats import parse_sdy

MESH = Mesh.of({"a": 2, "b": 2})
UNKNOWN = 'unknown axis name: "c" (mesh is a=2,b=2)'


@pytest.mark.parametrize(
    "convert",
    [
        lambda s: to_hlo(s, MESH),
        lambda s: to_partition_spec(s, MESH),
        lambda s: to_v3(s, MESH),
        lambda s: sdy_slices(s, MESH, (4,)),
    ],
    ids=["to_hlo", "to_partition_spec", "to_v3", "sdy_slices"],
)
def test_unknown_axis_has_one_message(convert) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ShardingValidationError) as e:
        convert(parse_sdy('#sdy.sharding<@mesh, [{"c"}]>'))
    assert e.value.message == UNKNOWN


def test_partition_spec_names_share_the_message() -> None:
    with pytest.raises(ShardingValidationError) as e:
        from_partition_spec(PartitionSpec(("c",)), MESH)
    assert e.value.message == UNKNOWN


def test_to_hlo_uses_shardys_rules_beyond_unknown_names() -> None:
    with pytest.raises(ShardingValidationError, match='^1:24: duplicate axis ref: "a"'):  # points into the text (at the first "a")
        to_hlo(parse_sdy('#sdy.sharding<@mesh, [{"a"}, {"a"}]>'), MESH)
    with pytest.raises(ShardingValidationError, match="^sorted device ids must be iota"):
        to_hlo(parse_sdy('#sdy.sharding<@mesh, [{"a"}]>'), Mesh.of({"a": 2}, device_ids=[0, 2]))


def test_roundtrip_verifies_before_it_looks_at_the_axes() -> None:
    from shardconv.convert import roundtrip

    with pytest.raises(ShardingValidationError) as e:  # was a KeyError from the drop analysis
        roundtrip(parse_sdy('#sdy.sharding<@mesh, [{"c"}]>'), MESH)
    assert e.value.message == UNKNOWN
