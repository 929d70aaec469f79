"""Every output spelling of one input, in one place, so ``convert --to X`` and ``show`` agree."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, TypeGuard

from shardconv.convert import resolve
from shardconv.convert.reduction import reductions, require_spelling
from shardconv.convert.resolve import V3_TARGETS, is_v3
from shardconv.core.errors import LimitExceededError, ShardingValidationError
from shardconv.core.model import HloSharding, Kind, ShardSharding, TensorSharding, TensorShardingPerValue
from shardconv.formats.detect import SDY, SDY_PER_VALUE
from shardconv.formats.hlo.write import print_hlo
from shardconv.formats.xla_versions import DEFAULT_XLA_VERSION

if TYPE_CHECKING:
    from shardconv.cli.options import Context, Rank
    from shardconv.convert.resolve import OnMesh
    from shardconv.formats.detect import Input

TARGETS = (
    "hlo", "sdy", "v1", "v2", "v3", "spec", "shard", "proto-hex", "proto-base64", "proto-v2", "proto-v3", "textproto",
    "json",
)
# The others write HLO V1/V2; shard's own converter refuses an unreduced sharding, whatever its reduction.
_NOTATIONS = {"sdy": "sdy", "spec": "spec", "v3": "v3", "proto-v3": "named", "shard": "shard"}
_OWN_PROTO = ("proto-hex", "proto-base64", "textproto")  # XLA's proto of the input itself
MAX_LISTED = 1 << 20  # devices an explicit list is written for: about 7 MB of text, 2 s and 150 MB to write


def refuse_long_lists(hlo: HloSharding) -> None:
    """Refuse to spell ``hlo`` (or an element) as a device list past ``MAX_LISTED`` devices: the list is
    about 9 bytes a device, and the iota spelling says the same in a few."""
    for h in hlo.elements or (hlo,):
        if h.tile is not None and h.tile.explicit is None and h.tile.num_devices > MAX_LISTED:
            raise LimitExceededError(
                f"{h} spelled as a device list would list {h.tile.num_devices:,} devices, past the "
                f"{MAX_LISTED:,} it is written for: its iota spelling (--to v2) places the same devices"
            )


def render_target(
    inp: Input, target: str, ctx: Context, on: OnMesh | None, rank: Rank, *, xla_version: str = DEFAULT_XLA_VERSION
) -> str:
    """``inp`` spelled as ``target``; ``on`` is its Shardy side (required for SDY_TARGETS). HLO text is
    written as XLA ``xla_version`` writes it."""
    # A reduction kind is written where the target has a spelling for it, and refused where not (the
    # JSON structure names it: unreduced_op).
    # Shardy text in, Shardy text out drops nothing and needs no release: it is written as it was given.
    if target != "json" and not (target == "sdy" and inp.kind in (SDY, SDY_PER_VALUE)):
        named = target in _OWN_PROTO and _holds_v3(inp.value)  # the proto of V3 input is the named one
        require_spelling(inp.value, "named" if named else _NOTATIONS.get(target, "hlo"), xla_version)
    if target == "sdy":
        assert on is not None
        return str(_inline(on) if on.synthetic else on.sharding)
    if target == "shard":
        return _shard_form(inp, on)
    if target == "spec":
        from shardconv.convert import to_partition_spec

        assert on is not None
        one = _single(on, target)
        return str(to_partition_spec(one, one.resolve_mesh(on.mesh)))
    if target in V3_TARGETS:
        v3 = _v3_form(inp, on)
        return print_hlo(v3, xla_version=xla_version) if target == "v3" else v3.to_proto().hex()
    if target == "json":
        return _json_target(inp, ctx, on, rank)
    hlo = resolve.as_hlo(inp, ctx.mesh, rank=rank, explicit=target == "v1")

    def text(h: HloSharding) -> str:  # XLA head's reduction rides in the metadata, so it is printed then
        return print_hlo(h, include_metadata=bool(reductions(h)), xla_version=xla_version)

    if target == "hlo":
        return text(hlo)
    if target == "v1":
        from shardconv.convert import to_v1

        refuse_long_lists(hlo)
        return text(to_v1(hlo))
    if target == "v2":
        from shardconv.convert import to_v2

        return text(to_v2(hlo))
    if target == "proto-v2":
        return hlo.to_proto().hex()
    # The proto of an HLO input is XLA's proto of it: a V3 sharding (or element) stays named (field 14).
    own = inp.value if _holds_v3(inp.value) else hlo
    if target == "textproto":
        from shardconv.formats.proto import to_textproto

        return to_textproto(own).strip()
    data = own.to_proto()
    if target == "proto-hex":
        return data.hex()
    import base64

    return base64.b64encode(data).decode()


def _shard_form(inp: Input, on: OnMesh | None) -> str:
    """``inp`` in MLIR's shard dialect: a shard input as parsed (its halos and offsets kept), anything else
    from its Shardy side on that mesh's grid."""
    from shardconv.convert.shard_dialect import sdy_to_shard

    if isinstance(inp.value, ShardSharding):
        from shardconv.convert.shard_dialect import mesh_grid
        from shardconv.formats.shard.verify import verify_shard_sharding

        mesh = on.mesh if on is not None else None
        verify_shard_sharding(inp.value, mesh_grid(mesh, inp.value.grid) if mesh is not None else None)
        return str(inp.value)
    assert on is not None
    one = _single(on, "shard")
    return str(sdy_to_shard(one, one.resolve_mesh(on.mesh)))


def _v3_form(inp: Input, on: OnMesh | None) -> HloSharding:
    """The V3 sharding of ``inp``: a V3 input as parsed (its device_ids stay as written), else ``to_v3`` of
    its Shardy side."""
    from shardconv.convert import to_v3

    if is_v3(inp):
        return resolve.value_as(inp, HloSharding)
    assert on is not None
    one = _single(on, "v3")
    return to_v3(one, one.resolve_mesh(on.mesh), manual_axes=on.manual_axes)


def _holds_v3(value: object) -> TypeGuard[HloSharding]:
    if not isinstance(value, HloSharding):
        return False
    return value.kind is Kind.MESH or any(_holds_v3(e) for e in value.elements)


def _json_target(inp: Input, ctx: Context, on: OnMesh | None, rank: Rank) -> str:
    """``--to json``: the structure of the sharding on both sides, one line of JSON."""
    from shardconv.ui import jsonout

    hlo = resolve.as_hlo(inp, ctx.mesh, rank=rank)
    body = {
        "hlo": jsonout.hlo_dict(hlo),
        "sdy": jsonout.sdy_dict(_single(on, "json")) if on else None,
        "mesh": jsonout.mesh_dict(on.mesh, synthetic=on.synthetic) if on else None,
    }
    return jsonout.dumps(body, lines=True)


def _single(on: OnMesh, target: str) -> TensorSharding:
    """The one Shardy sharding a ``target`` spelling needs; a tuple's per-value sharding has none."""
    if isinstance(on.sharding, TensorShardingPerValue):
        raise ShardingValidationError(
            f"a tuple sharding has no single {target} spelling: convert its elements one by one"
        )
    return on.sharding


def _inline(on: OnMesh) -> TensorSharding | TensorShardingPerValue:
    """A synthetic mesh goes inside the sharding (each one, per value), so the one-line answer stands on its own;
    a sharding that already holds its own mesh (a maximal sharding's single-device mesh) keeps it."""
    def inline(s: TensorSharding) -> TensorSharding:
        return replace(s, mesh=on.mesh) if isinstance(s.mesh, str) else s

    if isinstance(on.sharding, TensorShardingPerValue):
        return TensorShardingPerValue(tuple(map(inline, on.sharding.shardings)))
    return inline(on.sharding)


