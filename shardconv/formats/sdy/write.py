"""Model -> Shardy text, byte-identical to Shardy's printer (jaxlib 0.10.2): ``", "`` separators,
iota device_ids dropped, names escaped as MLIR prints string literals."""

from __future__ import annotations

import re
from math import prod
from typing import Literal

from shardconv.core.model import AxisRef, DimSharding, ManualAxes, Mesh, MeshRef, TensorSharding, TensorShardingPerValue
from shardconv.core.printing import printer
from shardconv.text.escapes import escape_mlir_str

_BARE_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")


def quote_name(name: str) -> str:
    """An MLIR string literal for ``name``, exactly as MLIR prints it (``a"b`` -> ``"a\\22b"``)."""
    return f'"{escape_mlir_str(name)}"'


def print_symbol(name: str) -> str:
    """``@name`` when ``name`` is a bare identifier, else ``@"quoted"`` (MLIR's symbol printing)."""
    return f"@{name}" if _BARE_SYMBOL.fullmatch(name) else f"@{quote_name(name)}"


def _mesh_body(mesh: Mesh) -> str:
    axes = ", ".join(f"{quote_name(a.name)}={a.size}" for a in mesh.axes)
    ids = mesh.explicit_device_ids
    if ids and (not mesh.axes or len(ids) != prod(mesh.axis_sizes) or ids != tuple(range(len(ids)))):
        return f"<[{axes}], device_ids=[{', '.join(map(str, ids))}]>"
    return f"<[{axes}]>"


@printer(Mesh)
def print_mesh(mesh: Mesh, *, form: Literal["bare", "attr", "decl"] = "bare") -> str:
    """bare ``<["a"=2]>``, attr ``#sdy.mesh<["a"=2]>``, decl ``sdy.mesh @name = <["a"=2]>`` (name
    defaults to ``mesh``)."""
    body = _mesh_body(mesh)
    if form == "attr":
        return f"#sdy.mesh{body}"
    if form == "decl":
        return f"sdy.mesh {print_symbol(mesh.name or 'mesh')} = {body}"
    return body


@printer(AxisRef)
def print_axis_ref(ref: AxisRef) -> str:
    """``"x"`` or ``"x":(2)4``."""
    if ref.sub_axis is None:
        return quote_name(ref.name)
    return f"{quote_name(ref.name)}:({ref.sub_axis.pre_size}){ref.sub_axis.size}"


def _axis_list(refs: tuple[AxisRef, ...]) -> str:
    return ", ".join(map(print_axis_ref, refs))


def print_dim(dim: DimSharding) -> str:
    """``{"a", "b"}``, ``{"a", ?}``, ``{?}``, ``{}``, each optionally followed by ``pN``."""
    items = [print_axis_ref(a) for a in dim.axes]
    if not dim.is_closed:
        items.append("?")
    priority = "" if dim.priority is None else f"p{dim.priority}"
    return f"{{{', '.join(items)}}}{priority}"


def _mesh_ref(mesh: MeshRef) -> str:
    return print_symbol(mesh) if isinstance(mesh, str) else f"mesh{_mesh_body(mesh)}"


@printer(TensorSharding)
def print_sharding(s: TensorSharding, *, attribute: bool = True) -> str:
    """``#sdy.sharding<@mesh, [...]>`` (``attribute=False``: the bare ``<@mesh, [...]>`` of ops).

    Empty replicated/unreduced lists are dropped; a non-sum unreduced op is printed as docs/formats.md §2
    spells it (``unreduced=max{...}``), which this Shardy version cannot parse."""
    parts = [_mesh_ref(s.mesh), f"[{', '.join(map(print_dim, s.dims))}]"]
    if s.replicated:
        parts.append(f"replicated={{{_axis_list(s.replicated)}}}")
    if s.unreduced:
        op = "" if s.unreduced_op == "sum" else s.unreduced_op
        parts.append(f"unreduced={op}{{{_axis_list(s.unreduced)}}}")
    body = f"<{', '.join(parts)}>"
    return f"#sdy.sharding{body}" if attribute else body


@printer(TensorShardingPerValue)
def print_sharding_per_value(v: TensorShardingPerValue) -> str:
    """``#sdy.sharding_per_value<[<@mesh, [...]>, ...]>``."""
    return f"#sdy.sharding_per_value<[{', '.join(print_sharding(s, attribute=False) for s in v.shardings)}]>"


@printer(ManualAxes)
def print_manual_axes(m: ManualAxes, *, form: Literal["op", "attr", "bare"] = "op") -> str:
    """op ``manual_axes={"a", "b"}`` (as in sdy.manual_computation), attr ``#sdy<manual_axes{"a"}>``,
    bare ``{"a"}``."""
    body = f"{{{', '.join(map(quote_name, m.axes))}}}"
    if form == "attr":
        return f"#sdy<manual_axes{body}>"
    if form == "op":
        return f"manual_axes={body}"
    return body


__all__ = [
    "print_axis_ref",
    "print_dim",
    "print_manual_axes",
    "print_mesh",
    "print_sharding",
    "print_sharding_per_value",
    "print_symbol",
    "quote_name",
]
