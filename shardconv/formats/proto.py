"""``xla.OpSharding`` wire format (docs/formats.md §1.4), byte-identical to XLA's ``SerializeToString``.

The message classes are built once, on first use, from a ``FileDescriptorProto`` written here in Python
(the subset of xla_data.proto that OpSharding needs, same field numbers), in a private descriptor pool.
"""

from __future__ import annotations

from functools import cache
from math import prod
from typing import Any

from shardconv.core.canonical import canonical_iota
from shardconv.core.device_order import iota_order
from shardconv.core.errors import (
    NotExpressibleError,
    ShardingError,
    ShardingSyntaxError,
    ShardingValidationError,
    Suggestion,
)
from shardconv.core.limits import check_nesting
from shardconv.core.model import (
    AxisRef,
    DimSharding,
    HloSharding,
    Kind,
    Mesh,
    MeshAxis,
    MeshSharding,
    OpMetadata,
    ShardGroup,
    SubAxis,
    SubgroupType,
    TileAssignment,
)
from shardconv.core.normalise import canonical_tiled
from shardconv.formats.hlo.verify import (
    check_device_id,
    check_iota_fits,
    check_mesh_fits,
    check_mesh_sharding,
    check_subgroup_fields,
    maximal_device,
    subgroup_type,
)

# OpSharding.Type
REPLICATED, MAXIMAL, TUPLE, OTHER, MANUAL, UNKNOWN, UNREDUCED = range(7)
_KIND_TO_TYPE = {Kind.REPLICATED: REPLICATED, Kind.MAXIMAL: MAXIMAL, Kind.TUPLE: TUPLE, Kind.TILED: OTHER,
                 Kind.MANUAL: MANUAL, Kind.UNKNOWN: UNKNOWN, Kind.UNREDUCED: UNREDUCED}
_SUBGROUP_TO_TYPE = {
    SubgroupType.MANUAL: MANUAL, SubgroupType.UNREDUCED: UNREDUCED, SubgroupType.REPLICATED: REPLICATED
}

# (name, number, type, label, type_name); type/label use descriptor_pb2 enum names.
_S, _I32, _I64, _B, _E, _M = "TYPE_STRING", "TYPE_INT32", "TYPE_INT64", "TYPE_BOOL", "TYPE_ENUM", "TYPE_MESSAGE"
_OPT, _REP = "LABEL_OPTIONAL", "LABEL_REPEATED"
_MESSAGES: dict[str, list[tuple[str, int, str, str, str]]] = {
    "OpMetadata": [
        ("op_type", 1, _S, _OPT, ""), ("op_name", 2, _S, _OPT, ""), ("source_file", 3, _S, _OPT, ""),
        ("source_line", 4, _I32, _OPT, ""), ("deduplicated_name", 12, _S, _OPT, ""),
        ("stack_frame_id", 15, _I32, _OPT, ""), ("scheduling_name", 16, _S, _OPT, ""),
        ("source_end_line", 17, _I32, _OPT, ""), ("source_column", 18, _I32, _OPT, ""),
        ("source_end_column", 19, _I32, _OPT, ""),
    ],
    "MeshAxis": [("name", 1, _S, _OPT, ""), ("size", 2, _I64, _OPT, "")],
    "IotaTransform": [("reshape_dims", 1, _I64, _REP, ""), ("transpose_perm", 2, _I64, _REP, "")],
    "MeshProto": [
        ("axes", 1, _M, _REP, ".xla.MeshAxis"), ("device_ids", 2, _I64, _REP, ""),
        ("iota_transform", 3, _M, _OPT, ".xla.IotaTransform"),
    ],
    "SubAxis": [("pre_size", 1, _I64, _OPT, ""), ("size", 2, _I64, _OPT, "")],
    "AxisRefProto": [("mesh_axis_index", 1, _I64, _OPT, ""), ("sub_axis_info", 2, _M, _OPT, ".xla.SubAxis")],
    "DimensionSharding": [("axes", 1, _M, _REP, ".xla.AxisRefProto"), ("is_closed", 2, _B, _OPT, "")],
    "NamedShardingProto": [
        ("mesh", 2, _M, _OPT, ".xla.MeshProto"), ("dim_shardings", 3, _M, _REP, ".xla.DimensionSharding"),
        ("replicated_axes", 4, _M, _REP, ".xla.AxisRefProto"), ("unreduced_axes", 5, _M, _REP, ".xla.AxisRefProto"),
        ("metadata", 6, _M, _REP, ".xla.OpMetadata"), ("manual_axes", 7, _M, _REP, ".xla.AxisRefProto"),
    ],
    "OpSharding": [
        ("type", 1, _E, _OPT, ".xla.OpSharding.Type"), ("tile_assignment_dimensions", 3, _I64, _REP, ""),
        ("tile_assignment_devices", 4, _I64, _REP, ""), ("tuple_shardings", 5, _M, _REP, ".xla.OpSharding"),
        ("replicate_on_last_tile_dim", 6, _B, _OPT, ""), ("metadata", 7, _M, _REP, ".xla.OpMetadata"),
        ("last_tile_dims", 8, _E, _REP, ".xla.OpSharding.Type"), ("iota_reshape_dims", 9, _I64, _REP, ""),
        ("iota_transpose_perm", 10, _I32, _REP, ""), ("is_shard_group", 11, _B, _OPT, ""),
        ("shard_group_id", 12, _I64, _OPT, ""), ("shard_group_type", 13, _E, _OPT, ".xla.OpSharding.ShardGroupType"),
        ("named_sharding", 14, _M, _OPT, ".xla.NamedShardingProto"),
    ],
}
# Enums nested in OpSharding, as in xla_data.proto (so text format prints ``type: OTHER``).
_ENUMS = {
    "Type": ["REPLICATED", "MAXIMAL", "TUPLE", "OTHER", "MANUAL", "UNKNOWN", "UNREDUCED"],
    "ShardGroupType": ["AS", "LIKE"],
}


@cache
def _classes() -> dict[str, Any]:
    """Message classes keyed by name, built from the descriptor above (protobuf imported only here)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fdp = descriptor_pb2.FileDescriptorProto(name="shardconv/xla_op_sharding.proto", package="xla", syntax="proto3")
    F = descriptor_pb2.FieldDescriptorProto
    for mname, fields in _MESSAGES.items():
        m = fdp.message_type.add(name=mname)
        if mname == "OpSharding":
            for ename, values in _ENUMS.items():
                e = m.enum_type.add(name=ename)
                for i, v in enumerate(values):
                    e.value.add(name=v, number=i)
        for name, number, typ, label, type_name in fields:
            f = m.field.add(name=name, number=number, type=F.Type.Value(typ), label=F.Label.Value(label))
            if type_name:
                f.type_name = type_name
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"xla.{name}")) for name in _MESSAGES}


def _fill_metadata(msg: Any, ms: tuple[OpMetadata, ...]) -> None:
    for m in ms:
        pm = msg.add()
        for key, value in m.fields:
            setattr(pm, key, value)


def _fill_axes(repeated: Any, axes: tuple[AxisRef, ...], index: dict[str, int]) -> None:
    for a in axes:
        pa = repeated.add()
        if index[a.name]:
            pa.mesh_axis_index = index[a.name]
        if a.sub_axis is not None:
            pa.sub_axis_info.pre_size = a.sub_axis.pre_size
            pa.sub_axis_info.size = a.sub_axis.size


def _fill_named(msg: Any, ms: MeshSharding, metadata: tuple[OpMetadata, ...]) -> None:
    if ms.unreduced_op != "sum":  # never dropped in silence (convert/reduction.py says where it has a spelling)
        raise NotExpressibleError(
            f"unreduced={ms.unreduced_op} would be dropped: XLA's named-sharding proto (OpSharding field 14) has "
            "no field for a reduction in the sources shardconv reads",
            suggestions=(Suggestion("use the V2 proto (v3_to_v2), which carries it as XLA head's metadata"),),
        )
    msg.SetInParent()
    msg.mesh.SetInParent()
    for ax in ms.mesh.axes:
        msg.mesh.axes.add(name=ax.name, size=ax.size)
    if ms.device_iota is not None:
        msg.mesh.iota_transform.reshape_dims.extend(ms.device_iota[0])
        msg.mesh.iota_transform.transpose_perm.extend(ms.device_iota[1])
    elif ms.mesh.explicit_device_ids is not None:
        msg.mesh.device_ids.extend(ms.mesh.explicit_device_ids)
    index = {n: i for i, n in enumerate(ms.mesh.axis_names)}
    for d in ms.dims:
        pd = msg.dim_shardings.add()
        _fill_axes(pd.axes, d.axes, index)
        if d.is_closed:
            pd.is_closed = True
    _fill_axes(msg.replicated_axes, ms.replicated, index)
    _fill_axes(msg.unreduced_axes, ms.unreduced, index)
    _fill_metadata(msg.metadata, metadata)
    _fill_axes(msg.manual_axes, ms.manual, index)


def _fill(msg: Any, h: HloSharding) -> None:
    if h.kind is Kind.MESH:
        assert h.mesh_sharding is not None
        _fill_named(msg.named_sharding, h.mesh_sharding, h.metadata)
        return
    msg.type = _KIND_TO_TYPE[h.kind]
    if h.kind is Kind.TUPLE:
        for e in h.elements:
            _fill(msg.tuple_shardings.add(), e)
    elif h.kind is Kind.MAXIMAL:
        msg.tile_assignment_devices.append(h.device)
    elif h.kind is Kind.TILED:
        assert h.tile is not None
        msg.tile_assignment_dimensions.extend(h.tile.dims)
        if h.tile.explicit is not None:
            msg.tile_assignment_devices.extend(h.tile.explicit)
        else:
            msg.iota_reshape_dims.extend(h.tile.reshape_dims or ())
            msg.iota_transpose_perm.extend(h.tile.perm or ())
        if h.replicate_on_last_tile_dim:
            msg.replicate_on_last_tile_dim = True
        else:
            msg.last_tile_dims.extend(_SUBGROUP_TO_TYPE[t] for t in h.subgroups)
    _fill_metadata(msg.metadata, h.metadata)
    if h.shard_group is not None:
        msg.is_shard_group = True
        msg.shard_group_id = h.shard_group.id
        msg.shard_group_type = 1 if h.shard_group.kind == "shard_like" else 0


def _message(h: HloSharding) -> Any:
    msg = _classes()["OpSharding"]()
    _fill(msg, h)
    return msg


def to_proto_bytes(h: HloSharding) -> bytes:
    """Serialized ``xla.OpSharding`` (deterministic field order, as XLA writes it)."""
    data: bytes = _message(h).SerializeToString(deterministic=True)
    return data


def to_textproto(h: HloSharding) -> str:
    """The OpSharding in protobuf text format (for humans and ``--format textproto``)."""
    from google.protobuf import text_format

    text: str = text_format.MessageToString(_message(h))
    return text


# ---- bytes -> model ---------------------------------------------------------------------------


def _metadata(repeated: Any) -> tuple[OpMetadata, ...]:
    out = []
    for pm in repeated:
        fields = tuple((f.name, v) for f, v in pm.ListFields())
        out.append(OpMetadata(fields))
    return tuple(out)


def _axes(repeated: Any, mesh: Mesh) -> tuple[AxisRef, ...]:
    out = []
    for pa in repeated:
        if not 0 <= pa.mesh_axis_index < len(mesh.axes):
            raise ShardingValidationError(f"axis index {pa.mesh_axis_index} is outside the mesh")
        sub = SubAxis(pa.sub_axis_info.pre_size, pa.sub_axis_info.size) if pa.HasField("sub_axis_info") else None
        out.append(AxisRef(mesh.axes[pa.mesh_axis_index].name, sub))
    return tuple(out)


def _named(msg: Any, num_devices: int | None) -> HloSharding:
    pm = msg.mesh
    axes = tuple(MeshAxis(a.name, a.size) for a in pm.axes)
    ids = tuple(pm.device_ids) or None
    device_iota = None
    if pm.HasField("iota_transform"):
        r, p = canonical_iota(tuple(pm.iota_transform.reshape_dims), tuple(pm.iota_transform.transpose_perm))
        if len(r) > 1:
            device_iota = (r, p)
            ids = tuple(iota_order(r, p))
    mesh = Mesh(axes=axes, explicit_device_ids=ids)
    ms = MeshSharding(
        mesh=mesh, dims=tuple(DimSharding(_axes(d.axes, mesh), is_closed=d.is_closed) for d in msg.dim_shardings),
        replicated=_axes(msg.replicated_axes, mesh), unreduced=_axes(msg.unreduced_axes, mesh),
        manual=_axes(msg.manual_axes, mesh), device_iota=device_iota,
    )
    if not mesh.is_maximal:
        check_mesh_sharding(ms)
    check_mesh_fits(mesh, num_devices)
    return HloSharding(kind=Kind.MESH, mesh_sharding=ms, metadata=_metadata(msg.metadata))


def _type_name(value: int) -> str:
    """An OpSharding.Type value by its lower-case name (the number itself when proto3 kept an unknown one)."""
    names = _ENUMS["Type"]
    return names[value].lower() if 0 <= value < len(names) else str(value)


def _from_message(msg: Any, num_devices: int | None, depth: int = 0) -> HloSharding:
    check_nesting(depth, "tuple shardings")
    if msg.HasField("named_sharding"):
        return _named(msg.named_sharding, num_devices)
    kw: dict[str, Any] = {"metadata": _metadata(msg.metadata)}
    if msg.is_shard_group:
        if msg.shard_group_id < 0:
            raise ShardingValidationError(f"shard group id {msg.shard_group_id} is negative")
        kw["shard_group"] = ShardGroup("shard_like" if msg.shard_group_type == 1 else "shard_as", msg.shard_group_id)
    t = msg.type
    if t == TUPLE:
        return HloSharding.tuple_of([_from_message(e, num_devices, depth + 1) for e in msg.tuple_shardings])
    if t == MAXIMAL:
        return HloSharding.maximal(maximal_device(msg.tile_assignment_devices, num_devices), **kw)
    simple = {REPLICATED: HloSharding.replicated, MANUAL: HloSharding.manual, UNKNOWN: HloSharding.unknown,
              UNREDUCED: HloSharding.unreduced}
    if t in simple:
        return simple[t](**kw)
    if t != OTHER:
        raise ShardingValidationError(f"unknown OpSharding type {t}")
    check_subgroup_fields(msg.replicate_on_last_tile_dim, bool(msg.last_tile_dims))
    dims = tuple(msg.tile_assignment_dimensions)
    n = prod(msg.iota_reshape_dims) if msg.iota_reshape_dims else len(msg.tile_assignment_devices)
    if n == 1 and prod(dims) == 1:
        # XLA reads any one-device tile as {replicated}, whatever its subgroups; only such a proto can
        # carry the rank-0 tile {devices=[]<=[1]}, which XLA prints but its text parser rejects.
        for d in msg.tile_assignment_devices:
            check_device_id(d, num_devices)
        return HloSharding.replicated(**kw)
    if msg.iota_reshape_dims:
        tile = TileAssignment.iota(dims, tuple(msg.iota_reshape_dims), tuple(msg.iota_transpose_perm))
        check_iota_fits(tile, num_devices)
    else:
        devs = tuple(msg.tile_assignment_devices)
        tile = TileAssignment.from_devices(dims, devs)
        for d in devs:
            check_device_id(d, num_devices)
    if msg.replicate_on_last_tile_dim:
        subgroups: tuple[SubgroupType, ...] = (SubgroupType.REPLICATED,)
    else:
        subgroups = tuple(subgroup_type(_type_name(x)) for x in msg.last_tile_dims)
    return canonical_tiled(tile, subgroups, **kw)


def from_proto_bytes(data: bytes, *, num_devices: int | None = None) -> HloSharding:
    """Serialized ``xla.OpSharding`` -> ``HloSharding`` (``b""`` is replicated), validated like text."""
    from google.protobuf.message import DecodeError

    msg = _classes()["OpSharding"]()
    try:
        msg.ParseFromString(bytes(data))
    except (DecodeError, RuntimeError, ValueError) as e:
        raise ShardingSyntaxError(f"not a serialized OpSharding: {e}") from None
    try:
        return _from_message(msg, num_devices)
    except ShardingError:
        raise
    except (ValueError, IndexError, OverflowError, RecursionError) as e:
        raise ShardingValidationError(f"invalid OpSharding: {e}") from None


__all__ = ["from_proto_bytes", "to_proto_bytes", "to_textproto"]
