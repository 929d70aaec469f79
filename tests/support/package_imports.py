"""Every import statement of the package, read from its source once: the layer test holds the edges
between its modules, the start-up test the imports made inside functions."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "shardconv"


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    type_only: bool  # under ``if TYPE_CHECKING:``: no run-time edge (a circle all the same: a reader follows it)
    in_function: bool = False  # made when a function runs, not when its module loads
    optional: bool = False  # in a ``try:`` whose handler catches ImportError: an optional dependency


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of the package, the compiled core too (known by its stub)."""
    return {module_name(p): p for p in sorted([*PACKAGE.rglob("*.py"), PACKAGE / "_native.pyi"])}


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _catches_import_error(node: ast.Try) -> bool:
    names = {n.id for h in node.handlers if h.type is not None for n in ast.walk(h.type) if isinstance(n, ast.Name)}
    return bool(names & {"ImportError", "ModuleNotFoundError"})


def _statements(tree: ast.AST) -> list[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
    """Each import statement, whether it sits in a function, and whether an ImportError handler guards it."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool, bool]] = []

    def walk(node: ast.AST, in_function: bool, optional: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((child, in_function, optional))
            walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)),
                 optional or (isinstance(child, ast.Try) and _catches_import_error(child)))

    walk(tree, False, False)
    return found


def _defining_module(package: str, name: str, known: dict[str, Path]) -> str | None:
    """The module that defines ``package.name`` when the package only re-exports it (lazily or not)."""
    value = getattr(import_module(package), name, None)
    module = getattr(value, "__module__", None)
    return module if isinstance(module, str) and module in known and module != package else None


def imports_of(name: str, path: Path, known: dict[str, Path], *, every: bool = False) -> list[Import]:
    """Every import of a shardconv module in ``path``, resolved to the module it loads (``every``: of any
    module, and a name a package re-exports to the module that defines it)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    type_only = _type_checking_lines(tree)
    found: list[Import] = []
    for node, in_function, optional in _statements(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for a in node.names:
                # ``from pkg import mod`` loads the submodule; ``from mod import name`` loads mod.
                target = f"{source}.{a.name}" if f"{source}.{a.name}" in known else source
                # a package's re-export, with ``every``: the module that defines the name (the package has loaded)
                facade = every and target == source and source in known and known[source].name == "__init__.py"
                targets.append((facade and _defining_module(source, a.name, known)) or target)
        for target in targets:
            if (every or target.split(".")[0] == "shardconv") and target != name:
                found.append(Import(name, target, node.lineno, node.lineno in type_only, in_function, optional))
    return found


@cache
def all_imports(*, every: bool = False) -> tuple[Import, ...]:
    """Every import of the package (see ``imports_of``), parsed once a process: the layer test asks four times."""
    known = modules()
    return tuple(imp for name, path in known.items() for imp in imports_of(name, path, known, every=every))
