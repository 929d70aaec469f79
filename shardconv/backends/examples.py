"""Loads the bundled example set (``examples/*.json``) into ``Example`` objects.

The files sit in ``shardconv/examples`` inside the wheel and at the top of a source checkout; meshes
and shardings stay text until a backend parses them, so a bad entry fails only its own example.
"""

from __future__ import annotations

import json
from dataclasses import KW_ONLY
from pathlib import Path
from typing import Any

from shardconv.backends.base import AGREE, DIFFER, Example
from shardconv.core.errors import ShardingValidationError
from shardconv.core.records import record
from shardconv.formats.detect import parse_mesh_option


def examples_dir() -> Path:
    """``shardconv/examples/``, shipped inside the package."""
    found = Path(__file__).resolve().parent.parent / "examples"
    if not any(found.glob("*.json")):
        raise FileNotFoundError("shardconv examples not found (broken installation)")
    return found


@record
class ExampleSpec:
    """One JSON entry, unparsed: ``load()`` builds the ``Example`` (parsing the mesh) when it runs."""

    _: KW_ONLY
    name: str
    mesh: str
    sharding: str
    other: str | None = None
    shape: tuple[int, ...] | None = None
    expect: str = AGREE
    note: str = ""
    tags: tuple[str, ...] = ()

    def load(self) -> Example:
        return Example(
            name=self.name,
            mesh=parse_mesh_option(self.mesh),
            sharding=self.sharding,
            other=self.other,
            shape=self.shape,
            expect=self.expect,
            note=self.note,
            tags=self.tags,
        )


def _spec(entry: dict[str, Any], where: str) -> ExampleSpec:
    try:
        spec = ExampleSpec(
            name=str(entry["name"]),
            mesh=str(entry["mesh"]),
            sharding=str(entry["sharding"]),
            other=None if entry.get("other") is None else str(entry["other"]),
            shape=None if entry.get("shape") is None else tuple(int(d) for d in entry["shape"]),
            expect=str(entry.get("expect", AGREE)),
            note=str(entry.get("note", "")),
            tags=tuple(map(str, entry.get("tags", ()))),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise ShardingValidationError(f"{where}: bad example entry ({type(e).__name__}: {e})") from None
    if spec.expect not in (AGREE, DIFFER):
        raise ShardingValidationError(f"{where}: expect must be {AGREE!r} or {DIFFER!r}, not {spec.expect!r}")
    return spec


def load_examples(directory: Path | None = None) -> tuple[ExampleSpec, ...]:
    """Every example of every ``*.json`` file in ``directory`` (default: the bundled set), in file order."""
    folder = directory or examples_dir()
    out: list[ExampleSpec] = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise ShardingValidationError(f"{path}: cannot read examples: {e}") from None
        for i, entry in enumerate(data.get("examples", [])):
            out.append(_spec(entry, f"{path.name}[{i}]"))
    return tuple(out)
