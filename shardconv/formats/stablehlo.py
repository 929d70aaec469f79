"""StableHLO's mesh attributes and mesh-axis replica groups, and XLA's ``replica_groups=mesh[...] {...}``:
the meshes and axes a collective runs over, read into the model so ``check`` can hold them to the mesh."""

from __future__ import annotations

import re

from shardconv.core.errors import ShardingError, ShardingSyntaxError
from shardconv.core.model import AxisRef, CollectiveAxes, Mesh, SubAxis
from shardconv.formats.sdy.mlir_text import decode_string, parse_int
from shardconv.text.patterns import lazy_pattern

_stablehlo_axis = lazy_pattern(r'name\s*=\s*"((?:[^"\\]|\\.)*)"\s*,\s*size\s*=\s*(\d+)')
_stablehlo_ids = lazy_pattern(r"device_ids\s*=\s*(?:array<i64:\s*|dense<)?\[?([\d,\s]*)")
_INTEGER = re.compile(r"\s*(-?)(\d+)\s*")
_STRING = r'"(?:[^"\\]|\\.)*"'
_string_literal = lazy_pattern(_STRING)
# `mesh = @name` or an inline `mesh = #stablehlo.mesh<axes = [...]>`, then `, axes = [`.
_head = lazy_pattern(r"\s*<?\s*mesh(?:_name)?\s*=\s*(?:@([\w$.\-]+)|(#stablehlo\.mesh<))")
_AXES = re.compile(r"\s*,\s*axes\s*=\s*\[")
# One axis: `#stablehlo.axis_ref<name = "y", sub_axis_info = (1)2>`, or Shardy's `#sdy<axis_ref"y":(1)2>`.
_axis_ref_text = lazy_pattern(
    rf"\s*(?:\#stablehlo\.axis_ref<\s*name\s*=\s*({_STRING})(?:\s*,\s*sub_axis_info\s*=\s*\((\d+)\)(\d+))?\s*>"
    rf"|\#sdy<axis_ref\s*({_STRING})(?::\((\d+)\)(\d+))?>)"
)
_SEP = re.compile(r"\s*(,|\])")
_TAIL = re.compile(r"\s*>?\s*")


def stablehlo_mesh(text: str) -> Mesh:
    """The mesh of a ``stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, ...]}`` attribute, or of
    an inline ``#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "a", size = 2>, ...]>``."""
    if not text.startswith(("{", "#stablehlo.mesh<")):  # (its axes are read wherever they are in it)
        raise ShardingSyntaxError(f"expected '{{' opening a mesh, got {text[:10]!r}", pos=0)
    axes = [(m.group(1), integer(m.group(2), m.start(2))) for m in _stablehlo_axis().finditer(text)]
    ids = _stablehlo_ids().search(text)
    device_ids = integers(ids.group(1), ids.start(1)) if ids else None
    return Mesh.of(axes, device_ids=device_ids or None)


def integer(text: str, pos: int) -> int:
    """The integer a header or attribute writes at ``pos`` of its value (``num_partitions``, a dimension,
    an axis size, a device id): a ShardingSyntaxError there when it is none or does not fit in int64."""
    m = _INTEGER.fullmatch(text)
    if m is None:
        raise ShardingSyntaxError(f"expected an integer, got {text.strip()[:20]!r}", pos=pos)
    return parse_int(m.group(2), bool(m.group(1)), pos + m.start(2))


def integers(text: str, pos: int) -> tuple[int, ...]:
    """A comma-separated list of ``integer`` (empty items passed over), ``text`` at ``pos`` of its value."""
    out: list[int] = []
    at = pos
    for part in text.split(","):
        if part.strip():
            out.append(integer(part, at))
        at += len(part) + 1
    return tuple(out)


def _axis_ref(m: re.Match[str]) -> AxisRef:
    named = m.group(1) is not None
    token, pre, size = (m.group(1), m.group(2), m.group(3)) if named else (m.group(4), m.group(5), m.group(6))
    at = m.start(1) if named else m.start(4)
    name = decode_string(token, at)
    if pre is None:
        return AxisRef(name)
    return AxisRef(name, SubAxis(integer(pre, 0), integer(size, 0)))


def _bracket_end(text: str, open_at: int) -> int:
    """Index just past the ``>`` closing the ``<`` at ``open_at`` (strings skipped), or a syntax error."""
    depth, i = 0, open_at
    while i < len(text):
        c = text[i]
        if c == '"':
            m = _string_literal().match(text, i)
            i = m.end() if m else len(text)
            continue
        depth += (c == "<") - (c == ">")
        i += 1
        if depth == 0:
            return i
    raise ShardingSyntaxError("unclosed '<' in the inline mesh", pos=open_at)


def parse_replica_group_mesh_axes(text: str) -> CollectiveAxes:
    """``<mesh = @m, axes = [#stablehlo.axis_ref<name = "x">, ...]>`` (the body of a
    ``#stablehlo.replica_group_mesh_axes``): one group of axes; an inline mesh is kept on the value."""
    head = _head().match(text)
    if head is None:
        raise ShardingSyntaxError("expected 'mesh = @name' or 'mesh = #stablehlo.mesh<...>'", text=text, pos=0)
    mesh: Mesh | None = None
    at = head.end()
    if head.group(2) is not None:
        end = _bracket_end(text, head.end() - 1)
        mesh = stablehlo_mesh(text[head.start(2) : end])
        at = end
    axes_open = _AXES.match(text, at)
    if axes_open is None:
        raise ShardingSyntaxError("expected ', axes = [' after the mesh", text=text, pos=at)
    at = axes_open.end()
    refs: list[AxisRef] = []
    close = _SEP.match(text, at)
    if close is not None and close.group(1) == "]":
        at = close.end()
    else:
        while True:
            m = _axis_ref_text().match(text, at)
            if m is None:
                raise ShardingSyntaxError(
                    "expected an axis: #stablehlo.axis_ref<name = \"...\"> or #sdy<axis_ref\"...\">",
                    text=text, pos=at + len(text[at:]) - len(text[at:].lstrip()),
                )
            try:
                refs.append(_axis_ref(m))
            except ShardingError as e:
                raise e.replaced(pos=m.start(), text=text) from None
            sep = _SEP.match(text, m.end())
            if sep is None:
                raise ShardingSyntaxError("expected ',' or ']' after an axis", text=text, pos=m.end())
            at = sep.end()
            if sep.group(1) == "]":
                break
    tail = _TAIL.match(text, at)
    if tail is None or tail.end() != len(text):
        raise ShardingSyntaxError("unexpected text after the axes", text=text, pos=at)
    return CollectiveAxes(groups=(tuple(refs),), per_dim=False, mesh=mesh)


def parse_hlo_replica_groups(text: str) -> CollectiveAxes:
    """XLA's ``mesh['x'=2,'y'=4] {'y'}`` (after ``replica_groups=``): the inline mesh and its one group of
    axes, read by the V3 sharding parser (which verifies the axes against the mesh) as a rank-1 sharding."""
    from shardconv.formats.hlo.read import parse_hlo

    group = text.rfind("{")
    if group < 0:
        raise ShardingSyntaxError("expected the group's axes in '{...}' after the mesh", text=text, pos=len(text))
    head = text[:group].rstrip()
    wrapped = "{" + head + ", [" + text[group:] + "]}"
    shift = len(", [") + len(head) - group + 1  # where text[group:] starts in `wrapped`, minus `group`
    try:
        parsed = parse_hlo(wrapped)
    except ShardingError as e:
        pos = e.pos
        if pos is not None:
            pos = pos - 1 if pos <= len(head) else pos - shift
            pos = max(0, min(len(text), pos))
        raise e.replaced(pos=pos, text=text) from None
    named = parsed.mesh_sharding
    if named is None or len(named.dims) != 1:
        raise ShardingSyntaxError("expected mesh[...] and one group of axes {...}", text=text, pos=0)
    return CollectiveAxes(groups=(named.dims[0].axes,), per_dim=False, mesh=named.mesh)


__all__ = ["integer", "integers", "parse_hlo_replica_groups", "parse_replica_group_mesh_axes", "stablehlo_mesh"]
