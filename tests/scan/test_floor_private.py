"""The scan floor's raw table stays inside ``shardconv/scan/``: every other module reads a scan through
the typed views of ``scan/table.py`` (named columns, ``Value``, ``Scope``, ``Group``, ...), never the native
``Scan``'s tuples and byte columns. Each module of the package is walked with ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "shardconv"
FLOOR = PACKAGE / "scan"

# The native ``Scan``'s table: its columns, tuples and logs, read only inside scan/.
PRIVATE = frozenset({
    "columns", "values", "value_kinds", "names", "keys", "result_key", "reads", "shapes", "scopes", "ops",
    "line_texts", "line_cuts", "groups", "pairs", "group_keys", "pair_keys", "suppressions", "defined",
    "digests", "span_log", "defined_in", "sites_of", "spans",
})
# Its summary, typed scalars any reader may ask: what the file was, how big, where it was cut.
SUMMARY = frozenset({"kind", "reason", "size", "lines", "open_end", "modules"})
# Names no class of the package but the native Scan has: read on anything outside scan/, they are the table.
SHARED = frozenset({"columns", "values", "names", "keys", "shapes", "ops", "groups", "pairs", "defined", "spans"})
# The raw-table modules of scan/ itself, and the native core, which no module outside scan/ imports.
PRIVATE_MODULES = frozenset({"shardconv._native", "shardconv.scan.columns"})


def _outside_floor() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if FLOOR not in p.parents]


def _scan_handles(tree: ast.AST) -> set[str]:
    """The names a module annotates as a native ``Scan`` (arguments, annotated assignments)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None and _names_scan(node.annotation):
            out.add(node.arg)
        elif isinstance(node, ast.AnnAssign) and _names_scan(node.annotation):
            out.add(ast.unparse(node.target))
    return out


def _names_scan(annotation: ast.expr) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "Scan" for n in ast.walk(annotation))


def raw_reads(path: Path) -> list[str]:
    """Where ``path`` reads the raw table: an import of a private module, or a private attribute of a scan."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    handles = _scan_handles(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            names = {f"{node.module}.{a.name}" for a in node.names} | {node.module}
            if names & PRIVATE_MODULES:
                found.append(f"{path.name}:{node.lineno}: imports {node.module}")
        elif isinstance(node, ast.Import) and {a.name for a in node.names} & PRIVATE_MODULES:
            found.append(f"{path.name}:{node.lineno}: imports the native core")
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE:
            receiver = ast.unparse(node.value)
            on_scan = receiver in handles or receiver.split(".")[-1] == "scan"
            if on_scan or node.attr not in SHARED:
                found.append(f"{path.name}:{node.lineno}: {receiver}.{node.attr}")
    return found


def test_no_module_outside_scan_reads_the_raw_table() -> None:
    bad = [hit for p in _outside_floor() for hit in raw_reads(p)]
    assert not bad, "read a scan through shardconv.scan.table's views:\n" + "\n".join(bad)


def test_every_attribute_of_the_native_scan_is_declared_private_or_summary() -> None:
    """A column or table the core grows is private until a view names it."""
    from shardconv import _native

    have = {a for a in dir(_native.Scan) if not a.startswith("_")}
    assert have == PRIVATE | SUMMARY


# What reading a module's structure spells: ``outputs`` reads modules through scan/'s readers instead
# (``scan/mlir_module.py``, ``scan/hlo_module.py``), so no pattern of its own names these.
STRUCTURE = ("HloModule", "ENTRY", "ROOT", "parameter", "func", "module", "sharding=", "%")
# What reading a dump's header line spells: ``trace`` takes the headers the scan cut on (``scan/headers.py``).
HEADERS = ("IR Dump", "HloModule", "operation")


def structure_patterns(path: Path, words: tuple[str, ...] = STRUCTURE) -> list[str]:
    """The regular expressions ``path`` compiles that spell any of ``words``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and ast.unparse(node.func) == "re.compile" and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                and any(w in node.args[0].value for w in words)):
            found.append(f"{path.name}:{node.lineno}: {node.args[0].value}")
    return found


def test_outputs_reads_modules_through_the_scan() -> None:
    bad = [hit for p in sorted((PACKAGE / "outputs").rglob("*.py")) for hit in structure_patterns(p)]
    assert not bad, "read a module's structure with shardconv.scan's module readers:\n" + "\n".join(bad)


def test_trace_takes_dump_headers_from_the_scan() -> None:
    bad = [hit for p in sorted((PACKAGE / "trace").rglob("*.py")) for hit in structure_patterns(p, HEADERS)]
    assert not bad, "read a dump's header line with shardconv.scan.headers:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    ("source", "hits"),
    [
        ("def f(scan: Scan):\n    return scan.values[v][2]\n", 1),  # the old check/fixes.py
        ("def f(piece: Scan):\n    return piece.defined_in([1])\n", 1),  # the old trace/run.py
        ("def f(r):\n    return r.scan.scopes[0][0]\n", 1),
        ("def f(t):\n    return t.line_texts.get(0)\n", 1),
        ("from shardconv.scan.columns import site_column\n", 1),
        ("from shardconv._native import Scan\n", 1),
        ("from shardconv import _native\n", 1),
        ("def f(d: dict[str, int]):\n    return d.values(), d.keys()\n", 0),
        ("def f(scan: Scan):\n    return scan.kind, scan.size, table(scan).value(0).text\n", 0),
    ],
)
def test_raw_reads_are_found(tmp_path: Path, source: str, hits: int) -> None:
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    assert len(raw_reads(path)) == hits
