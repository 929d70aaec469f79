"""The ``replicated-large`` rule: an entry argument, result or sharding constraint whose whole tensor is
on every device of a mesh of several, and is larger than ``CheckOptions.replicated_bytes``. The bytes
come from the tensor type the sharding annotates: its shape (the scan's) and its element type (read
from the type's text on the value's line)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from math import prod

from shardconv.check.context import ModuleContext
from shardconv.check.rules import RuleResult
from shardconv.core.element_types import element_bytes
from shardconv.core.model import HloSharding, Kind, Mesh, TensorSharding, TensorShardingPerValue
from shardconv.formats.sdy.write import print_mesh
from shardconv.scan.modules import DistinctValue
from shardconv.scan.sites import Shape, SiteKind

_WIDEST = 16  # bytes of the widest element type (c128): a tensor under the threshold at this width is skipped
_MLIR_TYPE = re.compile(r"tensor<((?:(?:\d+|\?)x)*)(complex<\w+>|\w+)")
_HLO_TYPE = re.compile(r"(?<![\w.%])([a-z][a-z0-9]*)\[([^\]]*)\]")
_MLIR_SITES = frozenset({"sdy.sharding", "sdy.sharding_constraint", "mhlo.sharding"})
_HLO_OPS = frozenset({"parameter", "custom-call Sharding"})


def size_text(n: int) -> str:
    """``n`` bytes in binary units: ``256 MiB``, ``1.5 GiB``, ``16 KiB``, ``12 bytes``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            v = n / (1 << shift)
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{n} bytes"


def may_be_large(largest: int | None, limit: int) -> bool:
    """Whether a module whose largest tensor has ``largest`` elements (None: unknown) can hold one over
    ``limit`` bytes: only then does ``replicated_large`` read the element types on its values' lines."""
    return largest is None or largest * _WIDEST > limit


def replicated_large(ctx: ModuleContext) -> Iterator[RuleResult]:
    """Each entry value replicated over a mesh of several devices whose tensor exceeds the threshold."""
    limit = ctx.options.replicated_bytes
    if not may_be_large(ctx.module.largest, limit):
        return  # no tensor of the module can be over it
    for dv in ctx.sdy:
        if dv.site.site in _MLIR_SITES and (dv.site.signature or dv.site.op == "sdy.sharding_constraint"):
            yield from _sdy(ctx, dv, limit)
    n = ctx.partitions
    if n is None or n < 2:
        return
    over = f"num_partitions={n}" if ctx.options.mesh is None else f"mesh {_mesh_text(ctx.options.mesh)}"
    for dv in ctx.hlo:
        s = dv.site
        if s.signature or s.op in _HLO_OPS or s.root:
            h = dv.value
            assert isinstance(h, HloSharding)
            parts = h.elements if h.kind is Kind.TUPLE else (h,)
            yield from _large(ctx, dv, [p.kind is Kind.REPLICATED for p in parts], n, over, limit)


def _sdy(ctx: ModuleContext, dv: DistinctValue, limit: int) -> Iterator[RuleResult]:
    v = dv.value
    assert isinstance(v, (TensorSharding, TensorShardingPerValue))
    items = v.shardings if isinstance(v, TensorShardingPerValue) else (v,)
    meshes = {_mesh_of(ctx, x) for x in items if _replicated(x)}
    mesh = meshes.pop() if len(meshes) == 1 else None
    if mesh is not None and mesh.num_devices > 1:
        flags = [_replicated(x) and _mesh_of(ctx, x) == mesh for x in items]
        yield from _large(ctx, dv, flags, mesh.num_devices, f"mesh {_mesh_text(mesh)}", limit)


def _replicated(s: TensorSharding) -> bool:
    """Every dim closed and on no axis, and nothing unreduced: the whole tensor on every device."""
    return not s.unreduced and all(d.is_closed and not d.axes for d in s.dims)


def _mesh_of(ctx: ModuleContext, s: TensorSharding) -> Mesh | None:
    return s.mesh if isinstance(s.mesh, Mesh) else ctx.meshes.get(s.mesh)


def _mesh_text(mesh: Mesh) -> str:
    return print_mesh(mesh, form="bare")


def _large(
    ctx: ModuleContext, dv: DistinctValue, replicated: list[bool], devices: int, over: str, limit: int
) -> Iterator[RuleResult]:
    """Each tensor type holding ``dv``'s value (its first site, and the first of each further shape) whose
    first replicated tensor (one per tuple element or result) is over ``limit`` bytes."""
    yield from _large_at(dv, replicated, devices, over, limit)
    for site in ctx.module.sites_by_type(dv, lambda shapes: _may_exceed(replicated, shapes, limit)):
        yield from _large_at(replace(dv, site=site, count=1), replicated, devices, over, limit)


def _may_exceed(replicated: list[bool], shapes: tuple[Shape | None, ...] | None, limit: int) -> bool:
    """Whether a replicated tensor of ``shapes`` can be over ``limit`` bytes, at the widest element type."""
    if shapes is None or len(shapes) != len(replicated):
        return False
    return any(r and s is not None and _elements(s) * _WIDEST > limit for r, s in zip(replicated, shapes))


def _large_at(dv: DistinctValue, replicated: list[bool], devices: int, over: str, limit: int) -> Iterator[RuleResult]:
    shapes = dv.site.shapes
    if shapes is None or not _may_exceed(replicated, shapes, limit):
        return
    types = _element_types(dv)
    if types is None:
        return
    for r, shape, etype in zip(replicated, shapes, types):
        width = element_bytes(etype)
        if not r or shape is None or width is None or None in shape:
            continue
        size = _elements(shape) * width
        if size > limit:
            kind = "HLO" if dv.site.kind is SiteKind.HLO and not dv.site.signature else "MLIR"
            yield RuleResult(
                at=dv,
                message=f"{_type_text(kind, shape, etype)} is {size_text(size)} on every one of {devices} devices: "
                f"replicated over {over}",
            )
            return


def _elements(shape: tuple[int | None, ...]) -> int:
    """The element count of ``shape`` (0 when a dim is dynamic: its size is not known)."""
    return 0 if None in shape else prod(d or 0 for d in shape)


def _type_text(kind: str, shape: tuple[int | None, ...], etype: str) -> str:
    if kind == "HLO":
        return f"{etype}[{','.join(map(str, shape))}]"
    return "tensor<" + "".join(f"{d}x" for d in shape) + etype + ">"


def _element_types(dv: DistinctValue) -> list[str] | None:
    """The element type of each tensor the value annotates, read from the types on its line: the ones
    just before it (an argument's, a result's, an HLO instruction's), else the ones just after it (a
    sharding constraint's ``: tensor<...>``), when their dims are the scan's shapes."""
    s = dv.site
    shapes = s.shapes or ()
    text = s.line_text.decode("utf-8", "replace")
    at = max(s.col - 1 - s.line_cut, 0)
    hlo = s.kind is SiteKind.HLO and not s.signature
    found = [
        (m.start(), m.group(1) if hlo else m.group(2), _dims(m.group(2) if hlo else m.group(1), hlo))
        for m in (_HLO_TYPE if hlo else _MLIR_TYPE).finditer(text)
    ]
    before = [f for f in found if f[0] < at][-len(shapes) :]
    after = [f for f in found if f[0] >= at][: len(shapes)]
    for group in (before, after):
        if len(group) == len(shapes) and all(d == tuple(shape or ()) for (_, _, d), shape in zip(group, shapes)):
            return [t for _, t, _ in group]
    return None


def _dims(text: str, hlo: bool) -> tuple[int | None, ...]:
    parts = text.split(",") if hlo else text.split("x")[:-1]
    return tuple(int(p) if p.strip().isdigit() else None for p in parts if p.strip() or not hlo)


__all__ = ["replicated_large", "size_text"]
