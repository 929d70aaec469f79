"""Model -> XLA's canonical HLO sharding text (HloSharding::ToString), byte for byte, as jaxlib 0.10.2
prints it or (``xla_version=``) as another release does: docs/releases.md lists the differences."""

from __future__ import annotations

from math import prod

from shardconv.core.model import AxisRef, DimSharding, HloSharding, Kind, MeshSharding, OpMetadata, TileAssignment
from shardconv.core.printing import printer
from shardconv.formats.xla_versions import DEFAULT_XLA_VERSION, check_xla_version
from shardconv.text.escapes import escape_c_str

# XLA's OpMetadataToString order; only these keys are printed, and only when non-empty/non-zero.
METADATA_KEYS: tuple[str, ...] = (
    "op_type", "op_name", "source_file", "source_line", "source_end_line", "source_column",
    "source_end_column", "deduplicated_name", "scheduling_name", "stack_frame_id",
)
INT_METADATA_KEYS = frozenset(
    {"source_line", "source_end_line", "source_column", "source_end_column", "stack_frame_id"}
)

c_escape = escape_c_str  # XLA's CEscape of metadata strings; kept under the name callers import


def _ints(values: tuple[int, ...] | list[int]) -> str:
    return ",".join(map(str, values))


def print_metadata_fields(m: OpMetadata) -> str:
    """``op_type="t" op_name="a" ...`` in XLA's order, skipping empty strings and zeros."""
    parts = []
    values = dict(m.fields)
    for key in METADATA_KEYS:
        v = values.get(key)
        if v in (None, "", 0):
            continue
        parts.append(f"{key}={v}" if key in INT_METADATA_KEYS else f'{key}="{escape_c_str(str(v))}"')
    return " ".join(parts)


def _metadata_list(ms: tuple[OpMetadata, ...]) -> str:
    return "{" + ", ".join("{" + print_metadata_fields(m) + "}" for m in ms) + "}"


def _metadata(ms: tuple[OpMetadata, ...]) -> str:
    if not ms:
        return ""
    if len(ms) == 1:
        return " metadata={" + print_metadata_fields(ms[0]) + "}"
    return " metadata=" + _metadata_list(ms)


def print_tile_assignment(t: TileAssignment) -> str:
    """``devices=[dims]<=[reshape]T(perm)`` or ``devices=[dims]0,1,...``."""
    head = f"devices=[{_ints(t.dims)}]"
    if t.explicit is not None:
        return head + _ints(t.explicit)
    assert t.reshape_dims is not None and t.perm is not None
    tail = f"T({_ints(t.perm)})" if len(t.reshape_dims) > 1 else ""
    return f"{head}<=[{_ints(t.reshape_dims)}]{tail}"


def _name(name: str, bare: bool) -> str:
    """A V3 axis name: bare in jaxlib 0.9.1 (``a``), in single quotes, unescaped, from 0.9.2 on (``'a'``)."""
    return name if bare else f"'{name}'"


def _axis(a: AxisRef, bare: bool) -> str:
    name = _name(a.name, bare)
    return name if a.sub_axis is None else f"{name}:({a.sub_axis.pre_size}){a.sub_axis.size}"


def _dim(d: DimSharding, bare: bool) -> str:
    items = [_axis(a, bare) for a in d.axes] + ([] if d.is_closed else ["?"])
    return "{" + ", ".join(items) + "}"


def _covers_mesh(m: MeshSharding, axes: tuple[AxisRef, ...], xla_version: str) -> bool:
    """Whether ``axes`` is the whole mesh for the ``unreduced`` / ``manual`` shorthand: every mesh axis in
    order (jaxlib 0.9.x), or, from jaxlib 0.10.0 on, every device (axes of size 1 may be left out)."""
    if xla_version in ("0.9.1", "0.9.2"):
        return axes == tuple(AxisRef(a.name) for a in m.mesh.axes)
    return bool(axes) and prod(a.size(m.mesh) for a in axes) == m.mesh.num_devices


def _head_shorthand(m: MeshSharding, dims: tuple[DimSharding, ...]) -> str | None:
    """XLA head's export (``enable-hlo-sharding-v3``, ``simplify-replicated-shardings``) also writes the
    short form at any rank when every dim is closed and holds no axis: ``manual`` when the manual set
    covers the mesh and no other set is given (fully manual), and ``replicated``, on the empty mesh
    ``{mesh[], replicated}``, when the sharding has no unreduced or manual axes (explicitly replicated
    ones included; ``stablehlo_export_pipeline_simplify_replicated.mlir``). jaxlib 0.10.2 keeps the long
    forms (it reads a short form as rank 0)."""
    if not dims or any(d.axes or not d.is_closed for d in dims) or m.unreduced:
        return None
    if m.manual:
        return "manual" if not m.replicated and _covers_mesh(m, m.manual, "head") else None
    return "replicated"


def _shorthand(m: MeshSharding, dims: tuple[DimSharding, ...], xla_version: str) -> str | None:
    """XLA prints a rank-0 V3 sharding as ``replicated`` when no axis set is given, else as ``unreduced``
    (then ``manual``) when that set covers the mesh; other sets are then not printed."""
    if dims:
        return _head_shorthand(m, dims) if xla_version == "head" else None
    if not (m.replicated or m.unreduced or m.manual):
        return "replicated"
    for key, axes in (("unreduced", m.unreduced if m.unreduced_op == "sum" else ()), ("manual", m.manual)):
        if axes and _covers_mesh(m, axes, xla_version):
            return key
    return None


def print_mesh_sharding(
    m: MeshSharding, metadata: tuple[OpMetadata, ...] = (), include_metadata: bool = False,
    *, xla_version: str = DEFAULT_XLA_VERSION,
) -> str:
    """V3: ``{mesh['a'=2], device_ids=(...), [{'a'}], replicated={...}, ...}`` or ``{maximal_mesh[...]}``
    (``{mesh[a=2], ...}`` in jaxlib 0.9.1, ``{single_device[...]}`` at XLA head)."""
    version = check_xla_version(xla_version)
    meta = f", metadata={_metadata_list(metadata)}" if include_metadata and metadata else ""
    mesh = m.mesh
    if mesh.is_maximal:
        assert mesh.explicit_device_ids is not None
        keyword = "single_device" if version == "head" else "maximal_mesh"
        return f"{{{keyword}[device_id={mesh.explicit_device_ids[0]}]{meta}}}"
    bare = version == "0.9.1"
    # jaxlib 0.9.1 keeps no dims when none holds an axis (open ones included); later releases keep them all.
    dims = m.dims if not bare or any(d.axes for d in m.dims) else ()
    shorthand = _shorthand(m, dims, version)
    if shorthand == "replicated" and dims:  # XLA head: a sharding that uses no axis is on the empty mesh
        return f"{{mesh[], replicated{meta}}}"
    parts = ["mesh[" + ",".join(f"{_name(a.name, bare)}={a.size}" for a in mesh.axes) + "]"]
    if m.device_iota is not None:
        r, p = m.device_iota
        parts.append(f"device_ids=([{_ints(r)}]" + (f"T({_ints(p)})" if len(r) > 1 else "") + ")")
    elif mesh.explicit_device_ids is not None:
        parts.append(f"device_ids=({_ints(mesh.explicit_device_ids)})")
    parts.append(shorthand or "[" + ", ".join(_dim(d, bare) for d in dims) + "]")
    if not shorthand:
        op = "" if m.unreduced_op == "sum" else m.unreduced_op  # XLA head's only spelling of a reduction
        for key, axes in (("replicated=", m.replicated), (f"unreduced={op}", m.unreduced), ("manual=", m.manual)):
            if axes:
                parts.append(key + "{" + ", ".join(_axis(a, bare) for a in axes) + "}")
    return "{" + ", ".join(parts) + meta + "}"


@printer(HloSharding)
def print_hlo(h: HloSharding, *, include_metadata: bool = False, xla_version: str = DEFAULT_XLA_VERSION) -> str:
    """XLA's canonical text; metadata only when asked (XLA's default printer omits it). ``xla_version``
    picks the release whose spelling to write where releases differ (V3 only)."""
    check_xla_version(xla_version)
    if h.kind is Kind.TUPLE:
        elems = [
            (f"/*index={i}*/" if i and i % 5 == 0 else "")
            + print_hlo(e, include_metadata=include_metadata, xla_version=xla_version)
            for i, e in enumerate(h.elements)
        ]
        return "{" + ", ".join(elems) + "}"
    if h.kind is Kind.MESH:
        assert h.mesh_sharding is not None
        return print_mesh_sharding(h.mesh_sharding, h.metadata, include_metadata, xla_version=xla_version)
    if h.kind is Kind.MAXIMAL:
        body = f"maximal device={h.device}"
    elif h.kind is Kind.TILED:
        assert h.tile is not None
        body = print_tile_assignment(h.tile)
        if h.replicate_on_last_tile_dim:
            body += " last_tile_dim_replicate"
        elif h.subgroups:
            body += " last_tile_dims={" + ", ".join(t.value for t in h.subgroups) + "}"
    else:
        body = h.kind.value
    if h.shard_group is not None:
        body += f" {h.shard_group.kind} {h.shard_group.id}"
    if include_metadata:
        body += _metadata(h.metadata)
    return "{" + body + "}"


__all__ = ["c_escape", "print_hlo", "print_mesh_sharding", "print_metadata_fields", "print_tile_assignment"]


@printer(HloSharding, "proto")
def _proto_bytes(h: HloSharding) -> bytes:
    from shardconv.formats.proto import to_proto_bytes  # the descriptor is built on first use

    return to_proto_bytes(h)
