"""Shardy text -> model: meshes (four spellings), tensor shardings, per-value shardings, manual axes.

Accepts exactly what Shardy's own parser accepts (jaxlib 0.10.2) and reports its messages; meshes are
verified while parsing, as Shardy does. Shardings are not checked against their mesh here (Shardy
does that at op verification): call ``shardconv.formats.sdy.verify.verify``.
"""

from __future__ import annotations

import re
from typing import Any

from shardconv.core.arguments import require_text
from shardconv.core.errors import ShardingError, ShardingSyntaxError, Suggestion
from shardconv.core.model import (
    AxisRef,
    CollectiveAxes,
    DimSharding,
    ManualAxes,
    Mesh,
    MeshAxis,
    TensorSharding,
    TensorShardingPerValue,
)
from shardconv.core.sources import remember
from shardconv.formats.grammar import parse as _parse
from shardconv.formats.sdy.mlir_text import check_dialect_body

_DIALECT_PREFIX = re.compile(r"\s*#sdy[.<]")


def _parse_sdy_text(start: str, text: str) -> Any:
    """Parse with MLIR's bracket pre-scan first when the text is a ``#sdy...`` dialect attribute."""
    m = _DIALECT_PREFIX.match(text)
    if m is not None:
        opening = text.find("<", m.start() + len(m.group()) - 1)
        try:
            end = check_dialect_body(text, opening if opening >= 0 else len(text))
            if text[end:].strip():  # MLIR reads the attribute only up to there
                raise ShardingSyntaxError(f"found trailing characters: {text[end:].strip()[:40]!r}", pos=end)
        except ShardingError as e:
            raise e.located(text, 0) from None
    from shardconv.formats.sdy.tree import TRANSFORMER

    return _parse("sdy", start, text, TRANSFORMER)


def parse_mesh(text: str) -> Mesh:
    """A mesh in any spelling: ``sdy.mesh @m = <[...]>``, ``#sdy.mesh<[...]>``, ``<[...]>``, or the
    shorthand ``batch=2,model=4`` (optionally ``;device_ids=[...]``). Verified as Shardy does."""
    everyday = _plain_shorthand(require_text(text, "parse_mesh")) or _everyday_mesh(text)
    if everyday is not None:
        return everyday
    mesh: Mesh = _parse_sdy_text("mesh_start", text)
    return mesh


# The spellings Shardy prints most, exactly as printed (plain names, no escapes, one space after each
# comma): ``<["a"=2, "b"=4]>`` and ``<@mesh, [{"a"}, {}, {"a", "b"}]>``, each maybe with its dialect
# prefix. Read without the grammar, whose answer they give (tests/formats/sdy/test_sdy_everyday.py).
_PLAIN = r"[A-Za-z_][A-Za-z0-9_]*"
_SIZE = r"[1-9][0-9]{0,17}"
_AXIS_SIZE = rf'"{_PLAIN}"={_SIZE}'
_EVERYDAY_MESH = re.compile(rf"(?:#sdy\.mesh)?<\[((?:{_AXIS_SIZE}(?:, {_AXIS_SIZE})*)?)\]>")
_DIM = rf'\{{(?:"{_PLAIN}"(?:, "{_PLAIN}")*)?\}}'
_EVERYDAY_SHARDING = re.compile(rf"(?:#sdy\.sharding)?<@({_PLAIN}), \[((?:{_DIM}(?:, {_DIM})*)?)\]>")
_NAME_AND_SIZE = re.compile(rf'"({_PLAIN})"=({_SIZE})')
_DIM_BODY = re.compile(r"\{([^}]*)\}")
_QUOTED = re.compile(rf'"({_PLAIN})"')


def _everyday_mesh(text: str) -> Mesh | None:
    """The grammar's answer for an everyday mesh (``_EVERYDAY_MESH``); None for anything else, or for a
    mesh Shardy refuses (the grammar words the error)."""
    m = _EVERYDAY_MESH.fullmatch(text)
    if m is None:
        return None
    try:
        return Mesh.of(tuple(MeshAxis(n, int(size)) for n, size in _NAME_AND_SIZE.findall(m.group(1))))
    except ShardingError:
        return None


def _everyday_sharding(text: str) -> TensorSharding | None:
    """The grammar's answer for an everyday sharding (``_EVERYDAY_SHARDING``: closed dims, no priorities,
    no sub-axes, no replicated or unreduced axes); None for anything else."""
    m = _EVERYDAY_SHARDING.fullmatch(text)
    return None if m is None else _sharding_of(m)


def _sharding_of(m: re.Match[str]) -> TensorSharding:
    """The sharding an everyday match spells: its mesh name, then its dims."""
    dims = tuple(
        DimSharding(tuple(AxisRef(a) for a in _QUOTED.findall(body))) for body in _DIM_BODY.findall(m.group(2))
    )
    return TensorSharding(mesh=m.group(1), dims=dims)


_PER_VALUE_OPEN = "#sdy.sharding_per_value<["
_EVERYDAY_ITEM = re.compile(rf"<@({_PLAIN}), \[((?:{_DIM}(?:, {_DIM})*)?)\]>")


def _everyday_per_value(text: str) -> TensorShardingPerValue | None:
    """The grammar's answer for a per-value sharding of everyday items, as Shardy prints one (items
    joined by ``", "``), read an item at a time (a million items in seconds, where the grammar takes
    minutes); None for anything else."""
    if not text.startswith(_PER_VALUE_OPEN):
        return None
    pos, end = len(_PER_VALUE_OPEN), len(text) - 2
    if not text.endswith("]>") or end < pos:
        return None
    items = []
    seen: dict[str, TensorSharding] = {}  # items repeat (one sharding per result of an op): built once
    while pos < end:
        m = _EVERYDAY_ITEM.match(text, pos)
        if m is None:
            return None
        item = seen.get(m.group())
        if item is None:
            item = seen[m.group()] = _sharding_of(m)
        items.append(item)
        pos = m.end()
        if pos < end:
            if not text.startswith(", ", pos):
                return None
            pos += 2
            if pos >= end:
                return None
    return TensorShardingPerValue(tuple(items))


def _plain_shorthand(text: str) -> Mesh | None:
    """The grammar's answer for the everyday ``name=size,...`` shorthand (ASCII names, decimal sizes,
    no spaces, quotes or device ids), without loading the grammar: the CLI's ``--mesh`` path. Returns
    None, so the grammar decides (and words any error), for anything else or anything invalid."""
    if len(text) > 512:
        return None
    axes: list[MeshAxis] = []
    names: set[str] = set()
    for part in text.split(","):
        name, eq, size = part.partition("=")
        # ASCII isidentifier() is exactly SHORT_NAME; ASCII isdigit() exactly a decimal MLIR_INT.
        if not (eq and name.isascii() and name.isidentifier() and size.isascii() and size.isdigit()):
            return None
        if len(size) > 18 or name in names or int(size) < 1:
            return None
        names.add(name)
        axes.append(MeshAxis(name, int(size)))
    try:
        return Mesh.of(tuple(axes))
    except ShardingError:
        return None


def parse_sdy(text: str) -> TensorSharding:
    """``#sdy.sharding<...>`` or the bare ``<@mesh, [...]>`` of sharding_constraint / manual_computation."""
    try:
        sharding = _everyday_sharding(require_text(text, "parse_sdy")) or _parse_sdy_text("sharding_start", text)
    except ShardingSyntaxError as e:
        if e.pos is not None and text.startswith("#sdy.mesh<", e.pos):
            # Shardy refuses the dialect prefix on a mesh inlined in a sharding: say how it prints one.
            fixed = text[: e.pos] + text[e.pos + len("#sdy.") :]
            hint = Suggestion("inline the mesh without its dialect prefix, as Shardy prints it:", fixed)
            raise e.with_suggestions((hint,)) from None
        raise
    return remember(sharding, text)


def parse_sdy_per_value(text: str) -> TensorShardingPerValue:
    """``#sdy.sharding_per_value<[<@mesh, [...]>, ...]>``."""
    require_text(text, "parse_sdy_per_value")
    per_value: TensorShardingPerValue = _everyday_per_value(text) or _parse_sdy_text("per_value_start", text)
    return remember(per_value, text)


def parse_manual_axes(text: str) -> ManualAxes:
    """``manual_axes={"a", "b"}``, ``{"a", "b"}`` or ``#sdy<manual_axes{"a", "b"}>``."""
    axes: ManualAxes = _parse_sdy_text("manual_axes_start", require_text(text, "parse_manual_axes"))
    return axes


_REDUCTION = re.compile(r"\s*([a-z]+)\s*(?=[\[{])")
_MOVE = re.compile(r":\s*(\d+)\s*->\s*(\d+)")


def parse_collective_axes(text: str) -> CollectiveAxes:
    """The axes of a Shardy collective as it prints them: ``[{}, {"y"}]`` (per dim), ``{"y"}`` (all_reduce,
    replicated_to_unreduced), ``[{"x"}: 0->1, {"y"}: 1->3]`` (all_to_all), any of them after a reduction
    word (``max {"y"}``). The axis lists go through the sharding grammar, so errors point into ``text``."""
    require_text(text, "parse_collective_axes")
    m = _REDUCTION.match(text)
    reduction = m.group(1) if m else None
    start = m.end() if m else len(text) - len(text.lstrip())
    body = text[start:]
    moves = tuple((int(a), int(b)) for a, b in _MOVE.findall(body))
    # A move's ``: N->M`` is blanked out (same length), so positions in ``body`` stay positions in ``text``.
    dims = _MOVE.sub(lambda x: " " * len(x.group()), body)
    per_dim = dims.startswith("[")
    prefix = "<@_, " if per_dim else "<@_, ["
    wrapped = prefix + dims + (">" if per_dim else "]>")
    try:
        sharding = parse_sdy(wrapped)
    except ShardingError as e:
        pos = None if e.pos is None else max(0, min(len(text), e.pos - len(prefix) + start))
        raise type(e)(e.message, text=text, pos=pos, suggestions=e.suggestions) from None
    groups = tuple(d.axes for d in sharding.dims)
    return CollectiveAxes(groups=groups, per_dim=per_dim and not moves, moves=moves, reduction=reduction)


__all__ = ["parse_collective_axes", "parse_manual_axes", "parse_mesh", "parse_sdy", "parse_sdy_per_value"]
