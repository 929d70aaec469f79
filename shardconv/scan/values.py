"""Parses a site's text with the project's parsers (each distinct value once, as the scan groups them) and
maps parser error positions back to file columns, through the string escapes the value sat in."""

from __future__ import annotations

import copy
from functools import lru_cache

from shardconv.core.errors import ShardingError, ShardingSyntaxError
from shardconv.core.model import (
    CollectiveAxes,
    HloSharding,
    ManualAxes,
    Mesh,
    ShardGrid,
    ShardSharding,
    TensorSharding,
    TensorShardingPerValue,
)
from shardconv.formats.stablehlo import (
    integer,
    integers,
    parse_hlo_replica_groups,
    parse_replica_group_mesh_axes,
    stablehlo_mesh,
)
from shardconv.scan.sites import SiteKind, ValueSite
from shardconv.text.layered import encode_layered

ParsedValue = (
    HloSharding | TensorSharding | TensorShardingPerValue | Mesh | ManualAxes | CollectiveAxes | ShardGrid
    | ShardSharding | int | tuple[int, ...]
)
LIST_PREFIX = "#sdy.sharding_per_value<"


@lru_cache(maxsize=1 << 14)
def parse_value(
    kind: SiteKind, text: str, data: bytes | None = None
) -> tuple[ParsedValue | None, ShardingError | None]:
    """(value, None) or (None, error); (None, None) for a site that only names something. Cached: the
    same value recurs in every module of a log (errors are cached too, and never mutated after)."""
    try:
        return _parse(kind, text, data), None
    except ShardingError as e:
        if kind is SiteKind.SDY_PER_VALUE_LIST and e.pos is not None:  # a position in the list, not the wrapper
            return None, e.replaced(pos=max(0, e.pos - len(LIST_PREFIX)), line=e.line, column=e.column)
        return None, e
    except RecursionError:
        return None, ShardingSyntaxError("value nested too deeply")


def _parse(kind: SiteKind, text: str, data: bytes | None) -> ParsedValue:
    from shardconv.formats.hlo.read import parse_hlo
    from shardconv.formats.sdy.read import (
        parse_collective_axes,
        parse_manual_axes,
        parse_mesh,
        parse_sdy,
        parse_sdy_per_value,
    )

    if kind is SiteKind.HLO:
        return parse_hlo(data if data is not None else text)
    if kind in (SiteKind.SDY_SHARDING, SiteKind.SDY_SHARDING_BARE):
        return parse_sdy(text)
    if kind is SiteKind.SDY_PER_VALUE:
        return parse_sdy_per_value(text)
    if kind is SiteKind.SDY_PER_VALUE_LIST:
        return parse_sdy_per_value(LIST_PREFIX + text + ">")
    if kind is SiteKind.SDY_MESH:
        return parse_mesh(text)
    if kind is SiteKind.STABLEHLO_MESH:
        return stablehlo_mesh(text)
    if kind is SiteKind.MANUAL_AXES:
        return parse_manual_axes(text)
    if kind is SiteKind.COLLECTIVE_AXES:
        return parse_collective_axes(text)
    if kind is SiteKind.COLLECTIVE_MESH:  # StableHLO's `<mesh = @m, axes = [...]>` or XLA's `mesh[...] {...}`
        if text.startswith("mesh["):
            return parse_hlo_replica_groups(text)
        return parse_replica_group_mesh_axes(text)
    if kind is SiteKind.SHARD_GRID:
        from shardconv.formats.shard.read import parse_shard_grid

        return parse_shard_grid(text)
    if kind is SiteKind.SHARD_SHARDING:
        from shardconv.formats.shard.read import parse_shard_sharding

        return parse_shard_sharding(text)
    if kind is SiteKind.NUM_PARTITIONS:
        return integer(text, 0)
    if kind is SiteKind.UNSPECIFIED_DIMS:
        lead = len(text) - len(text.lstrip()) + 1
        return integers(text.strip()[1:-1], lead)
    raise ShardingSyntaxError(f"nothing to parse in a {kind.value} site")


def site_value(site: ValueSite) -> tuple[ParsedValue | None, ShardingError | None]:
    """``parse_value`` of a site, or the syntax error of a value the scan started but could not read whole
    (never a value: a gate must not pass a file by losing part of it)."""
    if site.broken is not None:
        return None, broken_error(site)
    return parse_value(site.kind, site.text, site.data)


def broken_error(site: ValueSite) -> ShardingSyntaxError:
    """Why the scan could not read ``site`` whole, at its first byte."""
    shown = site.text if len(site.text) <= 40 else site.text[:40] + "..."
    if site.broken == "not-utf8" and site.raw[:1] == b"\x00":
        return ShardingSyntaxError("a NUL byte: MLIR/HLO text holds none outside comments; no compiler reads this line",
                                   pos=0)
    if site.broken == "not-utf8":
        return ShardingSyntaxError(
            f"byte 0x{site.raw[0]:02X} is not UTF-8: MLIR/HLO text is UTF-8 outside comments; "
            "no compiler reads this line",
            pos=0,
        )
    if site.broken == "undecodable":
        return ShardingSyntaxError(f"{shown}: the string holding it has an escape that does not decode", pos=0)
    if not site.raw:
        return ShardingSyntaxError(f"{site.site} has no value: the line ends after it", pos=0)
    return ShardingSyntaxError(f"{shown} is cut off: {_unclosed(site.raw, site.text)} is never closed", pos=0)


def _unclosed(raw: bytes, text: str) -> str:
    """What a value cut off leaves open: a string (in ``raw``, as written), else its first bracket."""
    quoted = escaped = False
    for b in raw:
        if escaped:
            escaped = False
        elif quoted and b == 0x5C:  # a backslash
            escaped = True
        elif b == 0x22:  # a double quote
            quoted = not quoted
    if quoted:
        return "a string in it"
    opener = next((c for c in text if c in "{[<("), "?")
    return f"its '{opener}'"


def error_col(site: ValueSite, err: ShardingError) -> int:
    """1-based file column of an error inside ``site``: the parser's position, or for a position-less
    verifier error the fragment its message quotes (an unknown axis), through escapes when the value
    sat in a string."""
    pos = err.pos
    if pos is None and site.data is None:
        pos = copy.copy(err).anchor(site.text).pos
    if pos is None or site.data is not None:
        return site.col
    if site.encoding.outer == "none":
        return site.col + min(pos, len(site.raw))
    prefix = site.text.encode("utf-8", "surrogateescape")[:pos]
    return site.col + min(len(encode_layered(prefix, site.encoding)), len(site.raw))


__all__ = [
    "LIST_PREFIX", "ParsedValue", "broken_error", "error_col", "integer", "integers", "parse_value", "site_value",
    "stablehlo_mesh",
]
