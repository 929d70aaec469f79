"""Parses an occurrence's text with the project's parsers, once per distinct string (LRU cache), and
maps parser error positions back to file columns."""

from __future__ import annotations

from functools import lru_cache
from typing import Union

from shardconv.core.errors import ShardingError, ShardingSyntaxError
from shardconv.core.model import HloSharding, ManualAxes, Mesh, TensorSharding, TensorShardingPerValue
from shardconv.check.escapes import encode
from shardconv.check.occurrences import Kind, Occurrence

Value = Union[HloSharding, TensorSharding, TensorShardingPerValue, Mesh, ManualAxes, int, tuple[int, ...]]
LIST_PREFIX = "#sdy.sharding_per_value<"


@lru_cache(maxsize=16384)
def parse_value(kind: Kind, text: str, data: bytes | None = None) -> tuple[Value | None, ShardingError | None]:
    """(value, None) or (None, error). Errors are cached too: a bad string is reported once per place
    but parsed once."""
    try:
        return _parse(kind, text, data), None
    except ShardingError as e:
        if kind is Kind.SDY_PER_VALUE_LIST and e.pos is not None:
            e.pos = max(0, e.pos - len(LIST_PREFIX))
        return None, e
    except RecursionError:
        return None, ShardingSyntaxError("value nested too deeply")


def _parse(kind: Kind, text: str, data: bytes | None) -> Value:
    from shardconv.formats import parse_hlo, parse_manual_axes, parse_mesh, parse_sdy, parse_sdy_per_value

    if kind is Kind.HLO:
        return parse_hlo(data if data is not None else text)
    if kind in (Kind.SDY_SHARDING, Kind.SDY_SHARDING_BARE):
        return parse_sdy(text)
    if kind is Kind.SDY_PER_VALUE:
        return parse_sdy_per_value(text)
    if kind is Kind.SDY_PER_VALUE_LIST:
        return parse_sdy_per_value(LIST_PREFIX + text + ">")
    if kind is Kind.SDY_MESH:
        return parse_mesh(text)
    if kind is Kind.MANUAL_AXES:
        return parse_manual_axes(text)
    if kind is Kind.NUM_PARTITIONS:
        return int(text)
    if kind is Kind.UNSPECIFIED_DIMS:
        body = text.strip()[1:-1]
        return tuple(int(p) for p in body.split(",") if p.strip())
    raise ShardingSyntaxError(f"nothing to parse in a {kind.value} occurrence")


def error_col(occ: Occurrence, err: ShardingError) -> int:
    """1-based file column of a parse error inside ``occ`` (through escapes when the value was a string)."""
    pos = err.pos
    if pos is None or occ.data is not None:
        return occ.col
    if occ.encoding.outer == "none":
        return occ.col + min(pos, len(occ.raw))
    prefix = occ.text.encode("utf-8", "surrogateescape")[:pos]
    return occ.col + min(len(encode(prefix, occ.encoding)), len(occ.raw))


__all__ = ["LIST_PREFIX", "Value", "error_col", "parse_value"]
