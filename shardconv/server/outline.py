"""What a document declares, from one scan: its modules, meshes, functions and sharded values, with the
byte positions the editor's outline, go-to-definition and hovers need (every value is left unparsed)."""

from __future__ import annotations

from dataclasses import KW_ONLY

from shardconv.core.records import record
from shardconv.scan.native import scan_bytes, site_at
from shardconv.scan.sites import SiteKind, ValueSite
from shardconv.scan.table import NONE, table

MAX_VALUES = 5000  # sharded values listed in the outline; a 50 MB dump holds far more than an editor shows
SHARDING_KINDS = frozenset(
    {
        SiteKind.HLO,
        SiteKind.SDY_SHARDING,
        SiteKind.SDY_SHARDING_BARE,
        SiteKind.SDY_PER_VALUE,
        SiteKind.SDY_PER_VALUE_LIST,
    }
)


@record
class Span:
    """A place in the document: 1-based line and byte columns (end exclusive), as the scan gives them."""

    line: int
    col: int
    end_line: int
    end_col: int


@record
class Declared:
    """A mesh, function or sharded value of the document, ``detail`` what it holds or annotates."""

    _: KW_ONLY
    name: str
    kind: str  # "mesh" | "function" | "value"
    span: Span
    detail: str = ""
    scope: tuple[int, int] | None = None  # the function (or HLO computation) it is or sits in: (module, scope)


@record
class Outline:
    _: KW_ONLY
    meshes: tuple[Declared, ...]
    functions: tuple[Declared, ...]
    values: tuple[Declared, ...]
    more_values: int = 0  # sharded values past MAX_VALUES, not listed

    def mesh(self, name: str, line: int) -> Declared | None:
        """The declaration of mesh ``name`` (no ``@``) a use on 1-based ``line`` refers to: the last one
        above it (its module's: a module declares its meshes first), else the first one below it."""
        above = [m for m in self.meshes if m.name == name and m.span.line <= line]
        if above:
            return above[-1]
        return next((m for m in self.meshes if m.name == name), None)


def outline(data: bytes, path: str) -> Outline:
    """The outline of a document's bytes, from one native scan: the few sites it lists are built, the
    rest read off the scan's columns (a 50 MB dump holds hundreds of thousands)."""
    scan = scan_bytes(data)
    t = table(scan)
    col = t.col
    meshes = [
        _declared(s, s.mesh_name, "mesh", None)
        for s in (site_at(scan, i, path) for i in t.sites_holding(t.of_kind({SiteKind.SDY_MESH})))
        if s.mesh_name is not None
    ]
    named = [i for i in t.sites_holding(t.of_kind(SHARDING_KINDS)) if col.name[i] != NONE]
    values = [
        _declared(site_at(scan, i, path), None, "value", _scope(col.module[i], col.scope[i]))
        for i in named[:MAX_VALUES]
    ]
    first: dict[tuple[int, int], int] = {}
    last: dict[tuple[int, int], int] = {}
    for module, scope, line in zip(col.module, col.scope, col.line, strict=True):
        if scope != NONE:
            key = (module, scope)
            first.setdefault(key, line)
            last[key] = line
    functions = [
        Declared(name=t.all_scopes()[key[1]].name, kind="function", span=Span(line, 1, last[key] + 1, 1), scope=key)
        for key, line in first.items()
    ]
    return Outline(
        meshes=tuple(meshes),
        functions=tuple(functions),
        values=tuple(values),
        more_values=max(len(named) - MAX_VALUES, 0),
    )


def _scope(module: int, scope: int) -> tuple[int, int] | None:
    return None if scope == NONE else (module, scope)


def _declared(s: ValueSite, name: str | None, kind: str, scope: tuple[int, int] | None) -> Declared:
    return Declared(
        name=name if name is not None else s.value or "",
        kind=kind,
        span=Span(s.line, s.col, s.end_line, s.end_col),
        detail=s.text,
        scope=scope,
    )


__all__ = ["MAX_VALUES", "Declared", "Outline", "Span", "outline"]
