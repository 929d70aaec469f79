"""The baseline file: a JSON object with its schema version and one line per value, sorted, so that a
review shows a moved sharding as one changed line. Read back strictly: a bad file is an error, never
an empty baseline."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from shardconv.core.errors import ShardingError
from shardconv.formats.hlo.read import parse_hlo
from shardconv.scan.sites import Shape
from shardconv.snapshot.take import Entry
from shardconv.text.files import read_prefix
from shardconv.ui.jsonout import escape_surrogates

SCHEMA = 1
_FIELDS: dict[str, tuple[type, ...]] = {
    "dump": (str,), "value": (str,), "kind": (str,), "sharding": (str,), "mesh": (str, type(None)),
    "placement": (str, type(None)), "devices": (int, type(None)), "shape": (list, type(None)),
    "error": (str, type(None)),
}


class BaselineError(ShardingError):
    """A baseline file that is not one ``shardconv snapshot`` writes."""


def render(entries: Sequence[Entry]) -> bytes:
    """The file's bytes: the same entries always give the same bytes."""
    lines = [_line(e) for e in sorted(entries, key=lambda e: (e.dump, e.value))]
    body = ",\n".join(lines)
    return f'{{"schema": {SCHEMA}, "values": [\n{body}\n]}}\n'.encode() if lines else (
        f'{{"schema": {SCHEMA}, "values": []}}\n'.encode()
    )


def _line(e: Entry) -> str:
    fields: dict[str, Any] = {
        "dump": e.dump, "value": e.value, "kind": e.kind, "placement": e.placement, "devices": e.devices,
        "shape": None if e.shape is None else list(e.shape), "mesh": e.mesh, "sharding": e.sharding,
    }
    if e.error is not None:
        fields["error"] = e.error
    return escape_surrogates(json.dumps(fields, ensure_ascii=False))


def looks_like_baseline(path: str) -> bool:
    """Whether ``path`` is meant as a baseline: a ``.json`` file, or one that opens as ours does."""
    if path.endswith(".json"):
        return True

    try:
        head, _ = read_prefix(path, 64)
    except OSError:
        return False
    return head.lstrip().startswith(b'{"schema"')


def load(path: str) -> tuple[Entry, ...]:
    """The entries of a baseline file; BaselineError (with the line and a caret) when it is not one."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BaselineError(f"{path}: not a shardconv baseline: not UTF-8 text (byte {e.start})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise BaselineError(f"{path}: not a shardconv baseline: {e.msg}", text=text, pos=e.pos) from None
    if not isinstance(doc, dict) or "schema" not in doc or not isinstance(doc.get("values"), list):
        raise BaselineError(f'{path}: not a shardconv baseline: expected {{"schema": {SCHEMA}, "values": [...]}}')
    if doc["schema"] != SCHEMA:
        raise BaselineError(
            f"{path}: baseline schema {doc['schema']!r} is not {SCHEMA}; rewrite it with shardconv snapshot"
        )
    return tuple(_entry(path, i, item) for i, item in enumerate(doc["values"]))


def _entry(path: str, i: int, item: object) -> Entry:
    where = f"{path}: values[{i}]"
    if not isinstance(item, dict):
        raise BaselineError(f"{where}: expected an object")
    for name, types in _FIELDS.items():
        if name == "error" and name not in item:
            continue
        if name not in item:
            raise BaselineError(f"{where}: missing {name!r}")
        if not isinstance(item[name], types) or isinstance(item[name], bool):
            raise BaselineError(f"{where}: {name!r} has the wrong type ({type(item[name]).__name__})")
    extra = sorted(set(item) - set(_FIELDS))
    if extra:
        raise BaselineError(f"{where}: unknown field {extra[0]!r}")
    if item["placement"] is not None:
        _placement(where, item["placement"], item["devices"])
    return Entry(
        dump=item["dump"], value=item["value"], kind=item["kind"], sharding=item["sharding"], mesh=item["mesh"],
        placement=item["placement"], devices=item["devices"], shape=_shape(where, item["shape"]),
        error=item.get("error"),
    )


def _placement(where: str, text: str, devices: int | None) -> None:
    try:
        parse_hlo(text, num_devices=devices)
    except ShardingError as e:
        raise BaselineError(f"{where}: 'placement' is not an HLO sharding: {e.message}") from None


def _shape(where: str, dims: list[object] | None) -> Shape | None:
    if dims is None:
        return None
    if not all(d is None or (isinstance(d, int) and not isinstance(d, bool) and d >= 0) for d in dims):
        raise BaselineError(f"{where}: 'shape' must list sizes (or null for a dynamic dim)")
    return tuple(d for d in dims if d is None or isinstance(d, int))


__all__ = ["SCHEMA", "BaselineError", "load", "looks_like_baseline", "render"]
