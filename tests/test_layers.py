"""The folders of ``shardconv/`` are its layers: each module imports only from its own layer or the
layers below it, and no set of modules imports itself round in a circle. Function-level imports count."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import pytest
from support.package_imports import Import, all_imports, modules

# Bottom to top. Folders on one line are peers: neither may import the other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("text",),
    ("formats",),
    ("convert",),
    ("ui",),
    ("_native",),  # the compiled scanning core (native/): the scan floor's own, see the test below
    ("scan",),
    ("check", "outputs", "backends", "trace", "explain", "snapshot"),
    ("cli", "server"),
)
# Known violations, each an (importer, imported) module pair: empty, and it stays empty.
ALLOWED: frozenset[tuple[str, str]] = frozenset()


def layer_of(module: str) -> int | None:
    """Index into LAYERS of the folder holding ``module``; None for the package root (the public facade)."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] == "__main__":
        return None
    for rank, folders in enumerate(LAYERS):
        if parts[1] in folders:
            return rank
    raise AssertionError(f"{module} is in no declared layer: add its folder to LAYERS")


def upward(imp: Import) -> bool:
    low, high = layer_of(imp.imported), layer_of(imp.importer)
    if high is None:
        return False  # the root package and __main__ sit above every layer
    if low is None:
        return True  # a layer importing the facade reaches up to everything
    same_folder = imp.importer.split(".")[1] == imp.imported.split(".")[1]
    return low > high or (low == high and not same_folder)


def circles(edges: Sequence[Import]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), over every import: one a type
    checker alone follows (under ``if TYPE_CHECKING:``) ties two modules as surely for a reader."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if (e.importer, e.imported) not in ALLOWED:
            graph.setdefault(e.importer, set()).add(e.imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_folder_is_a_declared_layer() -> None:
    for name in modules():
        layer_of(name)


def test_no_import_runs_upward() -> None:
    bad = [
        f"{i.importer} (line {i.line}) imports {i.imported}"
        for i in all_imports()
        if upward(i) and (i.importer, i.imported) not in ALLOWED
    ]
    assert not bad, "imports that run up the layers:\n  " + "\n  ".join(sorted(set(bad)))


def test_no_import_circles() -> None:
    found = circles(all_imports())
    assert not found, "import circles:\n  " + "\n  ".join(" <-> ".join(c) for c in found)


def test_only_the_scan_floor_loads_the_native_core() -> None:
    """Dumps are read through ``shardconv.scan`` alone: no other layer loads the compiled core (naming its
    ``Scan`` type for a checker is not loading it)."""
    bad = [f"{i.importer} (line {i.line})" for i in all_imports()
           if i.imported == "shardconv._native" and not i.type_only and not i.importer.startswith("shardconv.scan.")]
    assert not bad, f"only shardconv.scan imports shardconv._native: {bad}"


def test_allow_list_holds_only_real_violations() -> None:
    edges = {(i.importer, i.imported) for i in all_imports()}
    stale = sorted(ALLOWED - edges)
    assert not stale, f"allow-list entries that no longer occur (delete them): {stale}"


@pytest.mark.parametrize(
    ("importer", "imported", "expected"),
    [
        ("shardconv.cli.check", "shardconv.check.engine", False),
        ("shardconv.check.emit", "shardconv.ui.console", False),
        ("shardconv.check.emit", "shardconv.cli.console", True),
        ("shardconv.outputs.read", "shardconv.check.engine", True),  # peers
        ("shardconv.trace.run", "shardconv.check.context", True),  # peers
        ("shardconv.trace.run", "shardconv.scan.values", False),
        ("shardconv.scan.values", "shardconv.check.context", True),
        ("shardconv.core.model", "shardconv.formats.hlo.write", True),
        ("shardconv.formats.sdy.read", "shardconv.formats.hlo.read", False),
        ("shardconv.core.model", "shardconv", True),
    ],
)
def test_upward_judges_edges(importer: str, imported: str, expected: bool) -> None:
    assert upward(Import(importer, imported, 1, False)) is expected


def test_circles_are_found() -> None:
    edges = [Import("a", "b", 1, False), Import("b", "c", 1, False), Import("c", "a", 1, False)]
    edges.append(Import("c", "d", 1, False))
    assert circles(edges) == [["a", "b", "c"]]
    assert circles([Import("a", "b", 1, False), Import("b", "a", 1, True)]) == [["a", "b"]]
