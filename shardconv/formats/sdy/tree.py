"""Shardy's parse tree -> model objects: the grammar's transformer, loaded with the Lark runtime only when
a text needs the grammar (``read``'s shorthand path does not)."""

from __future__ import annotations

import re
from typing import Any

from shardconv.core.errors import ShardingError, ShardingSyntaxError, ShardingValidationError
from shardconv.core.model import (
    AxisRef,
    DimSharding,
    ManualAxes,
    Mesh,
    MeshAxis,
    SubAxis,
    TensorSharding,
    TensorShardingPerValue,
)
from shardconv.formats._lark_runtime import Token, Transformer, v_args
from shardconv.formats.sdy.mlir_text import decode_string, decode_symbol, parse_int, parse_int_list

_PRIORITY = re.compile(r"p([0-9]+)")
# Reductions newer Shardy writes before an unreduced list (`unreduced=max{"x"}`); sum is written bare.
_REDUCTIONS = ("max", "min")


def _err(message: str, token: Token) -> ShardingSyntaxError:
    return ShardingSyntaxError(message, pos=token.start_pos)


def _string(token: Token) -> str:
    return decode_string(str(token), token.start_pos or 0)


def parse_priority(token: Token) -> int:
    """``p<number>`` as Shardy reads it: no sign, no leading zeros, fits in int64."""
    text = str(token)
    m = _PRIORITY.fullmatch(text)
    if m is None:
        raise _err(f"expecting priority in format 'p<number>', got: {text}", token)
    digits = m.group(1)
    if len(digits) > 1 and digits[0] == "0":
        raise _err(f"priorities with leading zeros are not allowed, got: {text}", token)
    if len(digits) > 19 or int(digits) >= 1 << 63:
        raise _err(f"expecting integer priority, got: {text}", token)
    return int(digits)


def _second_occurrence(axes: list[tuple[MeshAxis, Token]]) -> Token | None:
    seen: set[str] = set()
    for axis, tok in axes:
        if axis.name in seen:
            return tok
        seen.add(axis.name)
    return None


@v_args(inline=True)
class _SdyTransformer(Transformer[Token, Any]):
    """Parse tree -> model objects; semantic errors carry the offending token's position."""

    # ---- scalars ------------------------------------------------------------------------------
    def signed(self, *parts: Token) -> tuple[int, Token]:
        number = parts[-1]
        return parse_int(str(number), len(parts) == 2, number.start_pos or 0), parts[0]

    # ---- meshes -------------------------------------------------------------------------------
    def mesh_axis(self, name: Token, size: tuple[int, Token]) -> tuple[MeshAxis, Token]:
        value, tok = size
        if value < 1:
            raise ShardingValidationError(f"axis size must be at least 1, got: {value}", pos=tok.start_pos)
        return MeshAxis(_string(name), value), name

    def short_axis(self, name: Token, size: tuple[int, Token]) -> tuple[MeshAxis, Token]:
        if name.type == "SHORT_NAME":
            value, tok = size
            if value < 1:
                raise ShardingValidationError(f"axis size must be at least 1, got: {value}", pos=tok.start_pos)
            return MeshAxis(str(name), value), name
        return self.mesh_axis(name, size)

    def _mesh(self, items: tuple[Any, ...]) -> Mesh:
        axes = [a for a in items if isinstance(a, tuple)]
        ids_tok = next((t for t in items if isinstance(t, Token) and t.type == "ID_LIST"), None)
        ids = parse_int_list(str(ids_tok), ids_tok.start_pos or 0) if ids_tok is not None else None
        anchor = ids_tok if ids_tok is not None else (axes[0][1] if axes else None)
        try:
            return Mesh.of(tuple(a for a, _ in axes), ids)
        except ShardingError as e:
            if e.pos is None:
                tok = _second_occurrence(axes) if e.message.startswith("duplicate axis name") else anchor
                raise e.replaced(pos=tok.start_pos if tok is not None else None) from None
            raise

    def mesh_inner(self, *items: Any) -> Mesh:
        return self._mesh(items)

    def mesh_short(self, *items: Any) -> Mesh:
        return self._mesh(items)

    def mesh_body(self, mesh: Mesh) -> Mesh:
        return mesh

    def mesh_attr(self, _open: Token, mesh: Mesh) -> Mesh:
        return mesh

    def mesh_decl(self, _kw: Token, symbol: Token, mesh: Mesh) -> Mesh:
        name = decode_symbol(str(symbol), symbol.start_pos or 0)
        return Mesh(axes=mesh.axes, explicit_device_ids=mesh.explicit_device_ids, name=name)

    def mesh_start(self, mesh: Mesh) -> Mesh:
        return mesh

    # ---- shardings ----------------------------------------------------------------------------
    def axis_ref(self, name: Token, *sub: tuple[int, Token]) -> AxisRef:
        if not sub:
            return AxisRef(_string(name))
        return AxisRef(_string(name), SubAxis(sub[0][0], sub[1][0]))

    def dim_closed_empty(self) -> DimSharding:
        return DimSharding()

    def dim_open_empty(self, _q: Token) -> DimSharding:
        return DimSharding(is_closed=False)

    def dim_axes(self, *items: Any) -> DimSharding:
        axes = tuple(a for a in items if isinstance(a, AxisRef))
        return DimSharding(axes=axes, is_closed=len(axes) == len(items))

    def dim(self, body: DimSharding, *priority: Token) -> DimSharding:
        if not priority:
            return body
        return DimSharding(body.axes, body.is_closed, parse_priority(priority[0]))

    def named_list(self, key: Token, *items: Any) -> tuple[Token, tuple[AxisRef, ...], str]:
        """``key={...}``, or (newer Shardy) ``unreduced=max{...}`` / ``min``; sum is the default."""
        op = next((t for t in items if isinstance(t, Token)), None)
        if op is not None and (str(key) != "unreduced" or str(op) not in _REDUCTIONS):
            known = ", ".join(_REDUCTIONS)
            why = f"unknown reduction '{op}' before the unreduced axes (expected one of {known})"
            raise _err(why if str(key) == "unreduced" else "expected '{'", op)
        return key, tuple(a for a in items if isinstance(a, AxisRef)), "sum" if op is None else str(op)

    def mesh_symbol(self, symbol: Token) -> str:
        return decode_symbol(str(symbol), symbol.start_pos or 0)

    def mesh_inline(self, mesh: Mesh) -> Mesh:
        return mesh

    def sharding_inner(self, mesh: str | Mesh, *items: Any) -> TensorSharding:
        dims = tuple(d for d in items if isinstance(d, DimSharding))
        lists: dict[str, tuple[AxisRef, ...]] = {}
        unreduced_op = "sum"
        for key, axes, op in (i for i in items if isinstance(i, tuple)):
            if str(key) in lists:
                raise _err("failed to parse Sdy_TensorSharding, expected valid named axis list after comma", key)
            lists[str(key)] = axes
            unreduced_op = op if str(key) == "unreduced" else unreduced_op
        return TensorSharding(
            mesh=mesh, dims=dims, replicated=lists.get("replicated", ()), unreduced=lists.get("unreduced", ()),
            unreduced_op=unreduced_op if lists.get("unreduced") else "sum",
        )

    def sharding_attr(self, _open: Token, sharding: TensorSharding) -> TensorSharding:
        return sharding

    def sharding_bare(self, sharding: TensorSharding) -> TensorSharding:
        return sharding

    def sharding_start(self, sharding: TensorSharding) -> TensorSharding:
        return sharding

    def per_value_start(self, _open: Token, *shardings: TensorSharding) -> TensorShardingPerValue:
        return TensorShardingPerValue(tuple(shardings))

    # ---- manual axes --------------------------------------------------------------------------
    def name_set(self, *names: Token) -> ManualAxes:
        return ManualAxes(tuple(_string(n) for n in names))

    def manual_axes_attr(self, _open: Token, axes: ManualAxes) -> ManualAxes:
        return axes

    def manual_axes_op(self, axes: ManualAxes) -> ManualAxes:
        return axes

    def manual_axes_bare(self, axes: ManualAxes) -> ManualAxes:
        return axes


TRANSFORMER = _SdyTransformer()


__all__ = ["TRANSFORMER", "parse_priority"]
