"""The shard dialect's parse tree -> model objects: the grammar's transformer, loaded with the Lark runtime
on the first shard text."""

from __future__ import annotations

from typing import Any

from shardconv.core.model import ShardGrid, ShardIndex, ShardSharding
from shardconv.formats._lark_runtime import Token, Transformer, v_args
from shardconv.formats.sdy.mlir_text import decode_symbol, parse_int


@v_args(inline=True)
class _ShardTransformer(Transformer[Token, Any]):
    """Parse tree -> model objects; a bad number carries its token's position."""

    def signed(self, *parts: Token) -> int:
        number = parts[-1]
        return parse_int(str(number), len(parts) == 2, number.start_pos or 0)

    # ---- grid ---------------------------------------------------------------------------------
    def shape_empty(self) -> tuple[int | None, ...]:
        return ()

    def shape_dims(self, dims: Token) -> tuple[int | None, ...]:
        at = dims.start_pos or 0
        out: list[int | None] = []
        for part in str(dims).split("x"):
            out.append(None if part == "?" else parse_int(part, False, at))
            at += len(part) + 1
        return tuple(out)

    def grid_start(self, *items: Any) -> ShardGrid:
        symbol = next(t for t in items if isinstance(t, Token) and t.type == "SYMBOL")
        return ShardGrid(decode_symbol(str(symbol), symbol.start_pos or 0), items[-1])

    # ---- sharding -----------------------------------------------------------------------------
    def grid_axes(self, *axes: int) -> tuple[int, ...]:
        return axes

    def split_axes(self, *dims: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
        return dims

    def index_static(self, value: int) -> ShardIndex:
        return value

    def index_dynamic(self, value: Token) -> ShardIndex:
        return str(value)

    def index_list(self, *items: ShardIndex) -> tuple[ShardIndex, ...]:
        return items

    def halo_sizes(self, items: tuple[ShardIndex, ...]) -> tuple[str, tuple[ShardIndex, ...]]:
        return "halo_sizes", items

    def offsets(self, items: tuple[ShardIndex, ...]) -> tuple[str, tuple[ShardIndex, ...]]:
        return "sharded_dims_offsets", items

    def sharding_start(self, *items: Any) -> ShardSharding:
        symbol = next(t for t in items if isinstance(t, Token) and t.type == "SYMBOL")
        split = next(i for i in items if isinstance(i, tuple) and (not i or isinstance(i[0], tuple)))
        lists = dict(i for i in items if isinstance(i, tuple) and len(i) == 2 and isinstance(i[0], str))
        return ShardSharding(
            decode_symbol(str(symbol), symbol.start_pos or 0),
            split,
            halo_sizes=lists.get("halo_sizes", ()),
            sharded_dims_offsets=lists.get("sharded_dims_offsets", ()),
        )


TRANSFORMER = _ShardTransformer()


__all__ = ["TRANSFORMER"]
