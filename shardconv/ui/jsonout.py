"""The stable JSON the CLI prints with ``--format json`` (and ``convert --to json``).

Every document is an object with ``"schema": SCHEMA`` and ``"command"``; fields are only ever added
within a schema version, never renamed or removed. The full schema is in docs/cli-json-schema.md.
"""

from __future__ import annotations

import json
import re
from _json import make_encoder
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shardconv.core.errors import ShardingError
    from shardconv.core.model import AxisRef, HloSharding, Mesh, TensorSharding
    from shardconv.core.placement import Placement

SCHEMA = 1
TRACE_SCHEMA = 2  # ``trace`` and ``diff`` of dumps: each mesh and placement once, in tables, changes citing ids


def document(command: str, **fields: Any) -> dict[str, Any]:
    """The top-level object every ``--format json`` output shares."""
    return {"schema": SCHEMA, "command": command, **fields}


def dumps(doc: dict[str, Any], *, lines: bool = False) -> str:
    """Pretty JSON for one document; compact single-line JSON for batch output (JSON Lines)."""
    if lines:
        return escape_surrogates(json.dumps(doc, separators=(",", ":"), ensure_ascii=False))
    return indented(doc, "")


def indented(value: Any, pad: str) -> str:
    """``value`` as ``dumps`` writes it inside a document at depth ``pad`` (its first line not indented)."""
    return escape_surrogates(_pretty(value, pad))


_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """JSON text with each lone surrogate (a byte of a name that is not UTF-8, kept as Python keeps it)
    written as its ``\\uXXXX`` escape: the document stays UTF-8 and a reader gets the same string back."""
    return text if text.isascii() else _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_encode = json.JSONEncoder(ensure_ascii=False).encode  # one value that is no list or object, as json writes it
_string = json.encoder.encode_basestring  # (json's own string encoder, without ensure_ascii: what _encode calls)
_CONSTANTS = {True: "true", False: "false", None: "null"}


def _pretty(v: Any, pad: str) -> str:
    """``json.dumps(v, indent=2, ensure_ascii=False)`` at depth ``pad``, byte for byte: its pure-Python
    encoder (any indent takes it) spent more than the scan on a long trace's thousands of dumps; the
    values themselves go through json's own encoder, the commonest (strings, ints, booleans, None: a
    trace's dumps are thousands of them) without its per-call encoder, and a list or object of them
    only (a change's sides, a dump's fields) through json's C encoder in one call."""
    t = type(v)
    if t is str:
        return _string(v)
    if t is int:
        return int.__repr__(v)
    if t is bool or v is None:
        return _CONSTANTS[v]
    if isinstance(v, dict):
        if not v:
            return "{}"
        inner = pad + "  "
        if set(map(type, v)) != _STR:  # (keys json converts: left to it)
            return json.dumps(v, indent=2, ensure_ascii=False).replace("\n", "\n" + pad)
        if set(map(type, v.values())) <= _SCALARS:
            return f"{{\n{inner}{_flat(inner)(v, 0)[0][1:-1]}\n{pad}}}"
        return "{\n" + ",\n".join([
            f"{inner}{_string(k)}: {_string(x) if type(x) is str else _pretty(x, inner)}" for k, x in v.items()
        ]) + f"\n{pad}}}"
    if isinstance(v, list | tuple):
        if not v:
            return "[]"
        inner = pad + "  "
        if set(map(type, v)) <= _SCALARS:  # (device ids, dims: the commonest list)
            return f"[\n{inner}{_flat(inner)(v, 0)[0][1:-1]}\n{pad}]"
        return "[\n" + ",\n".join([inner + _pretty(x, inner) for x in v]) + f"\n{pad}]"
    return _encode(v)


_STR = {str}  # (a set of the types of a dict's keys, at C speed)
_SCALARS = frozenset({str, int, bool, float, type(None)})  # what json's C encoder writes as ``_pretty`` does


@cache
def _flat(inner: str) -> make_encoder:
    """json's C encoder for a list or object of scalars whose items sit at depth ``inner``: it joins them
    with a comma, a line break and ``inner``; ``_pretty`` adds the opening and closing lines."""
    return make_encoder(None, _no_default, _string, None, ": ", ",\n" + inner, False, False, True)


def _no_default(v: Any) -> Any:
    raise TypeError(f"Object of type {type(v).__name__} is not JSON serializable")  # (never: scalars only)


def object_template(keys: tuple[str, ...], pad: str) -> str:
    """What ``indented`` writes for an object of ``keys`` at depth ``pad``, with a ``str.format`` field for
    each value: that value as ``value_text`` writes it at depth ``pad + "  "``. A record of one shape that a
    document holds thousands of (a trace's changes) is written by one format call, not a walk of its dict."""
    inner = pad + "  "
    fields = ",\n".join(inner + _string(k).replace("{", "{{").replace("}", "}}") + ": {}" for k in keys)
    return "{{\n" + fields + f"\n{pad}}}}}"


# One value as ``indented`` writes it at depth ``pad``, its lone surrogates left for the whole text's
# ``escape_surrogates``: a field of an ``object_template`` (the writer itself: a change fills 23 fields).
value_text: Callable[[Any, str], str] = _pretty


def dumps_streamed(command: str, key: str, items: Iterable[dict[str, Any]]) -> Iterator[str]:
    """``dumps(document(command, key=[*items]))`` in pieces, one per item as it comes: a long list (``key``
    the document's last field) is never held whole; each item indented at its depth."""
    return document_pieces(command, **{key: iter(items)})


def document_pieces(command: str, **fields: Any) -> Iterator[str]:
    """``dumps(document(command, **fields))`` in pieces: a field given as an iterator (no list) is written an
    item at a time as it comes, so a long list of files or explanations is never held whole, nor its text."""
    sep = "{\n"
    for k, v in document(command, **fields).items():
        head = f"{sep}  {_string(k)}: "
        sep = ",\n"
        if not isinstance(v, Iterator):
            yield head + indented(v, "  ")
            continue
        opening = "["
        for item in v:
            yield f"{head}{opening}\n    {indented(item, '    ')}"
            head, opening = "", ","
        yield head + ("[]" if opening == "[" else "\n  ]")
    yield "\n}"


def error_dict(err: ShardingError) -> dict[str, Any]:
    """``{"type", "message", "line", "column", "suggestions"}`` for a ShardingError."""
    return {
        "type": type(err).__name__,
        "message": err.message,
        "line": err.line,
        "column": err.column,
        "suggestions": [
            {"description": s.description, "value": s.value} for s in getattr(err, "suggestions", ())
        ],
    }


def mesh_dict(mesh: Mesh | None, *, synthetic: bool = False) -> dict[str, Any] | None:
    """``{"text", "name", "axes": [{"name", "size"}], "device_ids", "synthetic"}``."""
    if mesh is None:
        return None
    return {
        "text": str(mesh),
        "name": mesh.name,
        "axes": [{"name": a.name, "size": a.size} for a in mesh.axes],
        "device_ids": list(mesh.explicit_device_ids) if mesh.explicit_device_ids is not None else None,
        "synthetic": synthetic,
    }


def axis_ref_dict(ref: AxisRef) -> dict[str, Any]:
    """``{"name", "pre_size", "size"}``; ``pre_size``/``size`` are null for a whole axis."""
    sub = ref.sub_axis
    return {"name": ref.name, "pre_size": sub.pre_size if sub else None, "size": sub.size if sub else None}


def sdy_dict(s: TensorSharding) -> dict[str, Any]:
    """The structure of a Shardy sharding, plus its canonical text."""
    mesh = s.mesh if isinstance(s.mesh, str) else None
    return {
        "text": str(s),
        "mesh_ref": mesh,
        "dims": [
            {"axes": [axis_ref_dict(a) for a in d.axes], "closed": d.is_closed, "priority": d.priority}
            for d in s.dims
        ],
        "replicated": [axis_ref_dict(a) for a in s.replicated],
        "unreduced": [axis_ref_dict(a) for a in s.unreduced],
        "unreduced_op": s.unreduced_op,
    }


def hlo_dict(h: HloSharding) -> dict[str, Any]:
    """The structure of an HLO sharding, plus its canonical text."""
    out: dict[str, Any] = {"text": str(h), "kind": h.kind.value}
    if h.tile is not None:
        t = h.tile
        out["tile_dims"] = list(t.dims)
        out["subgroups"] = [g.value for g in h.subgroups]
        out["iota"] = (
            {"reshape_dims": list(t.reshape_dims or ()), "perm": list(t.perm or ())} if t.is_iota else None
        )
        out["devices"] = list(t.devices)
    if h.device is not None:
        out["device"] = h.device
    if h.elements:
        out["elements"] = [hlo_dict(e) for e in h.elements]
    return out


def placement_dict(p: Placement) -> dict[str, Any]:
    """``{"kind", "tile_counts", "shape", "tiles": [{"index", "devices", "slice"}], "replication_groups"}``."""
    return {
        "kind": p.kind,
        "tile_counts": list(p.tile_counts),
        "subgroups": list(p.subgroups),
        "shape": list(p.shape) if p.shape is not None else None,
        "tiles": [
            {
                "index": list(t.index),
                "devices": list(t.devices),
                "slice": [list(b) for b in t.slice] if t.slice is not None else None,
            }
            for t in p.tiles
        ],
        "replication_groups": [list(g) for g in p.groups],
    }
