"""The HLO checks live once (``formats/hlo/verify.py``): the text reader and the serialized-OpSharding
reader reject the same sharding with the same words, and the text reader points at the token."""

from __future__ import annotations

from typing import Any

import pytest

from shardconv.core.errors import ShardingValidationError
from shardconv.formats.hlo.read import parse_hlo_proto, parse_hlo_text
from shardconv.formats.proto import MANUAL, MAXIMAL, OTHER, _classes


def _op_sharding(**fields: Any) -> bytes:
    msg = _classes()["OpSharding"]()
    named = fields.pop("named", None)
    for name, value in fields.items():
        if isinstance(value, list):
            getattr(msg, name).extend(value)
        else:
            setattr(msg, name, value)
    if named is not None:
        axes, ids, dims = named
        ns = msg.named_sharding
        for axis, size in axes:
            ns.mesh.axes.add(name=axis, size=size)
        ns.mesh.device_ids.extend(ids)
        for index in dims:
            ns.dim_shardings.add(is_closed=True).axes.add(mesh_axis_index=index)
    return bytes(msg.SerializeToString())


CASES = [
    ("{devices=[4]<=[4]}", 2,
     {"type": OTHER, "tile_assignment_dimensions": [4], "iota_reshape_dims": [4], "iota_transpose_perm": [0]},
     "iota uses devices 0..3 but there are only 2", 12),
    ("{devices=[2]0,3}", 2, {"type": OTHER, "tile_assignment_dimensions": [2], "tile_assignment_devices": [0, 3]},
     "device id 3 is outside 0..1", 12),
    ("{maximal device=3}", 2, {"type": MAXIMAL, "tile_assignment_devices": [3]}, "device id 3 is outside 0..1", 9),
    ("{maximal}", None, {"type": MAXIMAL}, "maximal shardings need exactly one device: add device=N", 1),
    ("{devices=[2,2]<=[4] last_tile_dim_replicate last_tile_dims={manual}}", None,
     {"type": OTHER, "tile_assignment_dimensions": [2, 2], "iota_reshape_dims": [4], "iota_transpose_perm": [0],
      "replicate_on_last_tile_dim": True, "last_tile_dims": [MANUAL]},
     "last_tile_dim_replicate and last_tile_dims cannot both be given", 44),
    ("{devices=[2,2]<=[4] last_tile_dims={maximal}}", None,
     {"type": OTHER, "tile_assignment_dimensions": [2, 2], "iota_reshape_dims": [4], "iota_transpose_perm": [0],
      "last_tile_dims": [MAXIMAL]},
     "last_tile_dims entry 'maximal' is not one of manual, unreduced, replicated", 36),
    ("{devices=[2]<=[2] last_tile_dims={manual, manual}}", None,
     {"type": OTHER, "tile_assignment_dimensions": [2], "iota_reshape_dims": [2], "iota_transpose_perm": [0],
      "last_tile_dims": [MANUAL, MANUAL]},
     "2 last_tile_dims but only 1 tile dims", 18),
    ("{mesh['a'=8], [{'a'}]}", 4, {"named": ([("a", 8)], [], [0])}, "the mesh has 8 devices but there are only 4", 1),
    ("{maximal_mesh[device_id=4]}", 4, {"named": ([], [4], [])}, "device id 4 is outside 0..3", 24),
]


@pytest.mark.parametrize(("text", "num_devices", "fields", "message", "pos"), CASES)
def test_text_and_proto_readers_word_each_check_alike(
    text: str, num_devices: int | None, fields: dict[str, Any], message: str, pos: int
) -> None:
    with pytest.raises(ShardingValidationError) as from_text:
        parse_hlo_text(text, num_devices=num_devices)
    with pytest.raises(ShardingValidationError) as from_proto:
        parse_hlo_proto(_op_sharding(**fields), num_devices=num_devices)
    assert (from_text.value.message, from_text.value.pos) == (message, pos)
    assert from_proto.value.message == message


def test_an_unknown_type_number_is_named_by_its_number() -> None:
    blob = _op_sharding(
        type=OTHER, tile_assignment_dimensions=[2, 2], iota_reshape_dims=[4], iota_transpose_perm=[0],
        last_tile_dims=[42],
    )
    with pytest.raises(ShardingValidationError, match="last_tile_dims entry '42' is not one of"):
        parse_hlo_proto(blob)
