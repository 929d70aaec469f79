"""What a document declares, from one scan: its modules, meshes, functions and sharded values, with the
byte positions the editor's outline, go-to-definition and hovers need (every value is left unparsed)."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import KW_ONLY

from shardconv.core.records import record
from shardconv.scan.native import iter_sites, scan_bytes
from shardconv.scan.sites import RECORD_KINDS, SiteKind, ValueSite

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
    module: int = 0
    function: str | None = None  # the function a value sits in


@record
class Outline:
    _: KW_ONLY
    module_lines: tuple[int, ...]  # the first line of each module after the first (a header or `// -----`)
    meshes: tuple[Declared, ...]
    functions: tuple[Declared, ...]
    values: tuple[Declared, ...]
    more_values: int = 0  # sharded values past MAX_VALUES, not listed

    def module_at(self, line: int) -> int:
        """The module (0-based) holding 1-based ``line``."""
        return bisect_right(self.module_lines, line)

    def mesh(self, name: str, line: int) -> Declared | None:
        """The declaration of mesh ``name`` (no ``@``) a use on ``line`` refers to: its module's."""
        module = self.module_at(line)
        return next((m for m in self.meshes if m.name == name and m.module == module), None)


def outline(data: bytes, path: str) -> Outline:
    """The outline of a document's bytes (one native scan; Python touches each site once)."""
    modules: list[int] = []
    meshes: list[Declared] = []
    functions: dict[tuple[int, str], list[int]] = {}
    values: list[Declared] = []
    more = 0
    for s in iter_sites(scan_bytes(data), path):
        if s.kind is SiteKind.MODULE_START:
            if s.line > 1 and (not modules or modules[-1] != s.line):
                modules.append(s.line)
            continue
        if s.kind in RECORD_KINDS:
            continue
        module = len(modules)
        function = s.function if s.function is not None else s.computation
        if function is not None:
            lines = functions.setdefault((module, function), [s.line, s.line])
            lines[1] = s.line
        if s.kind is SiteKind.SDY_MESH and s.mesh_name is not None:
            meshes.append(_declared(s, s.mesh_name, "mesh", module, None))
        elif s.kind in SHARDING_KINDS and s.value:
            if len(values) < MAX_VALUES:
                values.append(_declared(s, s.value, "value", module, function))
            else:
                more += 1
    return Outline(
        module_lines=tuple(modules),
        meshes=tuple(meshes),
        functions=tuple(
            Declared(name=name, kind="function", span=Span(a, 1, b + 1, 1), module=m)
            for (m, name), (a, b) in functions.items()
        ),
        values=tuple(values),
        more_values=more,
    )


def _declared(s: ValueSite, name: str, kind: str, module: int, function: str | None) -> Declared:
    return Declared(
        name=name,
        kind=kind,
        span=Span(s.line, s.col, s.end_line, s.end_col),
        detail=s.text,
        module=module,
        function=function,
    )


__all__ = ["MAX_VALUES", "Declared", "Outline", "Span", "outline"]
