"""The public names: after every submodule is imported each is the documented object (never a
module), type checkers see the same names (the TYPE_CHECKING block), and py.typed ships."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import shardconv

ROOT = Path(shardconv.__file__).resolve().parent
INIT = ROOT / "__init__.py"


def _type_checking_imports() -> dict[str, str]:
    """name -> module of every ``from M import name as name`` under ``if TYPE_CHECKING:`` in the facade."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module
                for alias in imp.names:
                    assert alias.asname == alias.name, f"{alias.name} must be re-exported as itself"
                    found[alias.name] = imp.module
    return found


def test_type_checkers_see_every_export_from_its_module() -> None:
    assert _type_checking_imports() == shardconv._EXPORTS  # type: ignore[attr-defined]


CHECK_AFTER_ALL_IMPORTS = r"""
import importlib, pkgutil, types
import shardconv as sc
sc.parse_mesh("a=2")
for m in pkgutil.walk_packages(sc.__path__, "shardconv."):
    if m.name != "shardconv.__main__":
        importlib.import_module(m.name)
for name, module in sc._EXPORTS.items():
    value = getattr(sc, name)
    assert not isinstance(value, types.ModuleType), name
    assert value is getattr(importlib.import_module(module), name), name
    assert value.__module__ == module or not hasattr(value, "__module__") or name == "UNCONSTRAINED", (name, value.__module__)
assert sorted(dir(sc)) == sorted(set(dir(sc)))
assert set(sc.__all__) <= set(dir(sc)), set(sc.__all__) - set(dir(sc))
helpers = {n for n in dir(sc) if not n.startswith("__") and n not in sc.__all__ and not isinstance(getattr(sc, n), types.ModuleType)}
assert not helpers, helpers  # what tab completion offers is the API (TYPE_CHECKING, annotations, lazy_exports were)
print("ok")
"""


def test_every_public_name_is_the_documented_object_after_all_imports() -> None:
    out = subprocess.run([sys.executable, "-c", CHECK_AFTER_ALL_IMPORTS], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_verify_stays_the_function() -> None:
    code = (
        "import shardconv as sc, shardconv.formats.sdy.verify\n"
        "sc.parse_mesh('a=2')\n"
        "sc.verify(sc.parse_sdy('<@mesh, [{\"a\"}, {}]>'), sc.parse_mesh('a=2'), rank=2)\n"
        "print(callable(sc.verify))\n"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "True\n"


def test_import_stays_lazy() -> None:
    code = (
        "import sys, shardconv\n"
        "heavy = {'jax', 'rich', 'shardconv.convert.jax_interop', 'shardconv.formats.sdy.read', 'lark'} & set(sys.modules)\n"
        "print(sorted(heavy))\n"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


def test_py_typed_ships_in_the_wheel() -> None:
    """maturin ships every file of the python package (``python-packages``) in the wheel, py.typed included;
    this keeps the marker there and the wheel config from excluding it."""
    assert (ROOT / "py.typed").is_file()
    config = (ROOT.parent / "pyproject.toml").read_text(encoding="utf-8")
    wheel = config[config.index("[tool.maturin]") :].split("\n[", 1)[0]
    assert 'python-packages = ["shardconv"]' in wheel and "py.typed" not in wheel
