"""Lazy package exports: names resolve on first access, so importing a package costs nothing extra."""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

TYPE_CHECKING = False  # not from typing (nor collections): `import shardconv` would then pay for them
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def lazy_exports(package: str, exports: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__``/``__dir__`` for ``package`` that import ``exports[name]`` (a module path) on demand."""
    namespace = import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        """``__all__``, the lazy exports, dunders and loaded submodules: not the package's helpers and flags."""
        own = {n for n, v in namespace.items() if n.startswith("__") or isinstance(v, ModuleType)}
        return sorted(own | set(exports) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
