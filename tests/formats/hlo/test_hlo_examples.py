"""Every checked example of docs/formats.md §1, plus XLA's exact behaviour found by probing the oracle."""

from __future__ import annotations

import pytest

from support.oracle_xla import xla_canonical, xla_proto
from support.validate import validate_identity
from shardconv.core.errors import ShardingSyntaxError
from shardconv.core.model import HloSharding, Kind, OpMetadata, SubgroupType
from shardconv.formats.hlo.read import parse_hlo
from shardconv.formats.hlo.write import print_hlo
from shardconv.formats.proto import from_proto_bytes, to_proto_bytes, to_textproto

# (input, XLA's canonical text)
CANONICAL = [
    ("{replicated}", "{replicated}"),
    ("{manual}", "{manual}"),
    ("{unknown}", "{unknown}"),
    ("{unreduced}", "{unreduced}"),
    ("{maximal device=3}", "{maximal device=3}"),
    ("{devices=[2,4]0,1,2,3,4,5,6,7}", "{devices=[2,4]0,1,2,3,4,5,6,7}"),
    ("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}", "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"),
    ("{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}", "{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}"),
    ("{{replicated}, {devices=[2]0,1}}", "{{replicated}, {devices=[2]0,1}}"),
    ("{}", "{}"),
    ("{devices=[2]<=[2] shard_as 1}", "{devices=[2]<=[2] shard_as 1}"),
    ("{devices=[2]<=[2] shard_like 3}", "{devices=[2]<=[2] shard_like 3}"),
    ('{devices=[4,1]<=[4] metadata={op_name="a" source_file="x.py" source_line=3}}', "{devices=[4,1]<=[4]}"),
    ("{mesh['a'=2,'b'=4], [{'a'}, {}], replicated={'b'}}", "{mesh['a'=2,'b'=4], [{'a'}, {}], replicated={'b'}}"),
    ("{maximal_mesh[device_id=5]}", "{maximal_mesh[device_id=5]}"),
    ("{ devices=[2]<=[2] }", "{devices=[2]<=[2]}"),
    ("{devices=[2]<=[2] replicated}", "{replicated}"),
    # iota canonicalisation
    ("{devices=[60]<=[3,4,5]T(0,1,2)}", "{devices=[60]<=[60]}"),
    ("{devices=[60]<=[3,4,5]T(1,2,0)}", "{devices=[60]<=[3,20]T(1,0)}"),
    ("{devices=[60]<=[3,4,5]T(2,0,1)}", "{devices=[60]<=[12,5]T(1,0)}"),
    ("{devices=[60]<=[3,4,5]T(2,1,0)}", "{devices=[60]<=[3,4,5]T(2,1,0)}"),
    ("{devices=[32]<=[4,8]T(0,1)}", "{devices=[32]<=[32]}"),
    ("{devices=[8]<=[2,2,2]T(2,0,1)}", "{devices=[8]<=[4,2]T(1,0)}"),
    # replicate-last-dim normalisations
    ("{devices=[2,4,1]<=[8] last_tile_dim_replicate}", "{devices=[2,4]<=[8]}"),
    ("{devices=[1,8]<=[8] last_tile_dim_replicate}", "{replicated}"),
    ("{devices=[2,1,2]1,0,3,2 last_tile_dim_replicate}", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}"),
    ("{devices=[2,4]<=[2,4]T(1,0) last_tile_dim_replicate}", "{devices=[2,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}"),
    ("{devices=[2,1,4]<=[2,2,2]T(2,1,0) last_tile_dim_replicate}", "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"),
    ("{devices=[2,6]<=[4,3]T(1,0) last_tile_dim_replicate}", "{devices=[2,6]0,1,3,4,6,9,2,5,7,8,10,11 last_tile_dim_replicate}"),
    # subgroups
    ("{devices=[2,2,2]<=[8] last_tile_dims={replicated, manual}}",
     "{devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dims={manual, replicated}}"),
    ("{devices=[2,2,1,2]<=[8] last_tile_dims={manual, replicated}}", "{devices=[2,2,2]<=[8] last_tile_dim_replicate}"),
    ("{devices=[2,2]<=[4] last_tile_dims={replicated}}", "{devices=[2,2]<=[4] last_tile_dim_replicate}"),
    ("{devices=[1,4]<=[4] last_tile_dims={manual}}", "{manual}"),
    ("{devices=[1,1,4]<=[4] last_tile_dims={unreduced}}", "{unreduced}"),
    ("{devices=[2,2,2]7,6,5,4,3,2,1,0 last_tile_dims={replicated, manual}}",
     "{devices=[2,2,2]5,7,4,6,1,3,0,2 last_tile_dims={manual, replicated}}"),
    ("{devices=[2,2,2]<=[8] last_tile_dims={unreduced, manual}}",
     "{devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dims={manual, unreduced}}"),
    # V3
    ("{mesh['a'=2,'b'=4], [{'a'}, {'b':(2)2}]}", "{mesh['a'=2,'b'=4], [{'a'}, {'b':(2)2}]}"),
    ("{mesh['a'=2,'b'=4], [{'a'}, {'b':(2)2}], replicated={}}", "{mesh['a'=2,'b'=4], [{'a'}, {'b':(2)2}]}"),
    ('{mesh["a"=2,"b"=4], [{"a"}, {}]}', "{mesh['a'=2,'b'=4], [{'a'}, {}]}"),
    ("{mesh['a'=2,'b'=4], device_ids=([2,4]T(1,0)), [{'a', ?}, {?}]}", "{mesh['a'=2,'b'=4], device_ids=([2,4]T(1,0)), [{'a', ?}, {?}]}"),
    ("{mesh['a'=2,'b'=4], device_ids=([2,4]T(0,1)), [{'a'}, {}]}", "{mesh['a'=2,'b'=4], [{'a'}, {}]}"),
    ("{mesh['a'=2,'b'=4], []}", "{mesh['a'=2,'b'=4], replicated}"),
    ("{mesh['a'=2,'b'=2], [], unreduced={'a', 'b'}}", "{mesh['a'=2,'b'=2], unreduced}"),
    ("{mesh['a'=2,'b'=2], [], unreduced={'a'}, manual={'b'}}", "{mesh['a'=2,'b'=2], [], unreduced={'a'}, manual={'b'}}"),
    ("{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced={'b'}}", "{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced={'b'}}"),
    ("{mesh['a b'=2,'c\\'d'=4], [{'a b'}, {}]}", "{mesh['a b'=2,'c'd'=4], [{'a b'}, {}]}"),
    # tuples print /*index=N*/ every 5th element and accept comments anywhere
    ("{{replicated}, /*c*/{manual}, {manual}, {manual}, {manual}, {manual}}",
     "{{replicated}, {manual}, {manual}, {manual}, {manual}, /*index=5*/{manual}}"),
]


@pytest.mark.parametrize("text, expected", CANONICAL)
def test_canonical_text_and_proto(text: str, expected: str) -> None:
    validate_identity(text, write=expected)
    h = parse_hlo(text)
    assert xla_canonical(text) == expected  # the table itself is checked against XLA
    assert to_proto_bytes(h) == xla_proto(text)


def test_proto_hex_from_formats() -> None:
    h = parse_hlo("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}")
    assert to_proto_bytes(h).hex() == "08031a0301040230014a02020452020100"
    assert from_proto_bytes(bytes.fromhex("08031a0301040230014a02020452020100")) == h


def test_empty_means_replicated() -> None:
    assert parse_hlo(b"").kind is Kind.REPLICATED
    assert parse_hlo("").kind is Kind.REPLICATED
    assert to_proto_bytes(HloSharding.replicated()) == b""


def test_bytes_holding_text_parse_as_text() -> None:
    assert str(parse_hlo(b"{devices=[2]0,1}")) == "{devices=[2]0,1}"


@pytest.mark.parametrize(
    "text, with_metadata",
    [
        ('{devices=[2]<=[2] metadata={op_name="a\\nb\\"c" op_type=\'t\' source_line=3 stack_frame_id=7}}',
         '{devices=[2]<=[2] metadata={op_type="t" op_name="a\\nb\\"c" source_line=3 stack_frame_id=7}}'),
        ('{devices=[2]<=[2] metadata={{op_name="a"}, {op_name="b"}}}', '{devices=[2]<=[2] metadata={{op_name="a"}, {op_name="b"}}}'),
        ('{devices=[2]<=[2] metadata={{}}}', "{devices=[2]<=[2] metadata={}}"),
        ('{replicated shard_as 2 metadata={op_name="\\001\\177\\t"}}', '{replicated shard_as 2 metadata={op_name="\\001\\177\\t"}}'),
        ('{devices=[2]<=[2] metadata={op_name="é"}}', '{devices=[2]<=[2] metadata={op_name="\\303\\251"}}'),
        ("{mesh['a'=2], [{'a'}], metadata={op_name=\"x\"}}", "{mesh['a'=2], [{'a'}], metadata={{op_name=\"x\"}}}"),
    ],
)
def test_metadata_printed_on_request(text: str, with_metadata: str) -> None:
    # Expected texts come from XLA's HLO module printer (hlo_module_from_text(...).to_string()).
    h = parse_hlo(text)
    assert print_hlo(h, include_metadata=True) == with_metadata
    assert to_proto_bytes(h) == xla_proto(text)
    assert "metadata" not in str(h)


def test_metadata_kept_in_model() -> None:
    h = parse_hlo('{devices=[4,1]<=[4] metadata={op_name="a" source_file="x.py" source_line=3}}')
    assert h.metadata == (OpMetadata((("op_name", "a"), ("source_file", "x.py"), ("source_line", 3))),)
    assert h.metadata[0].get("source_line") == 3


def test_model_views() -> None:
    h = parse_hlo("{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}")
    assert h.subgroups == (SubgroupType.MANUAL, SubgroupType.REPLICATED)
    assert h.rank == 1 and h.tile_counts == (2,)
    assert h.tile is not None and h.tile.devices == tuple(range(8))


def test_textproto() -> None:
    text = to_textproto(parse_hlo("{devices=[2]<=[2] shard_like 3}"))
    assert "type: OTHER" in text and "shard_group_type: LIKE" in text and "tile_assignment_dimensions: 2" in text


@pytest.mark.parametrize(
    "text",
    ["{devices = [2]<=[2]}", "{devices=[2]<=[2]T(0)}", "{devices=[2,2]<=[2,2]}", "{devices=[2]< =[2]}",
     "{mesh[a =2,b=4], [{a}, {}]}", "{mesh['a'=2], device_ids=[1,0], [{'a'}]}", "{single_device[device_id = 5]}",
     "{{{replicated}}}", "{{}}", "{devices=[2]<=[2]} x", "{replicated", "{maximal_mesh[device_id = 5]}",
     "{mesh['a'=2], [{?, 'a'}]}", "{mesh['a'=2], [{'a'}], replicated = {'a'}}"],
)
def test_syntax_errors_xla_also_rejects(text: str) -> None:
    """(The head spellings `{mesh[a=2], ...}` and `{single_device[...]}` parse: tests/releases/.)"""
    with pytest.raises(ShardingSyntaxError) as e:
        parse_hlo(text)
    assert e.value.line == 1 and e.value.column is not None and "^" in str(e.value)
