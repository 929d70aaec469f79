"""``@record``: ``@dataclass(frozen=True)`` at half the import cost. dataclasses compiles six methods per
frozen class from source (a third of ``check``'s start-up); ``__eq__``, ``__hash__`` and ``__repr__``
here are shared closures over the field names instead, with the same results."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from operator import attrgetter
from reprlib import recursive_repr
from typing import TYPE_CHECKING, Any, TypeVar

_T = TypeVar("_T")
_MISSING = object()

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Callable[[_T], _T]:
        """Typing only: tells type checkers that ``record`` makes frozen dataclasses."""
        return lambda f: f


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of ``names``' values that dataclasses' generated methods build (``(self.a, self.b)``)."""
    if not names:
        return lambda self: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda self: (one(self),)
    getter: Callable[[Any], tuple[Any, ...]] = attrgetter(*names)
    return getter


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def record(cls: type[_T]) -> type[_T]:
    """``@dataclass(frozen=True)``: the same ``__init__``, frozenness, ``__eq__``, ``__hash__``, ``__repr__``,
    ``fields()`` and ``replace()``; a method the class defines itself is kept, as dataclass keeps it."""
    own = dict(cls.__dict__)
    cls = dataclasses.dataclass(frozen=True, eq=False, repr=False)(cls)
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    compared = _values(tuple(f.name for f in fields if f.compare))
    hashed = _values(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash)))
    shown = tuple(f.name for f in fields if f.repr)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(hashed(self))

    @recursive_repr()
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({inner})"

    if "__eq__" not in own:
        _attach(cls, __eq__)
    # As dataclass decides: a __hash__ of the class's own is kept, the None that defining __eq__ implies is not.
    own_hash = own.get("__hash__", _MISSING)
    if own_hash is _MISSING or (own_hash is None and "__eq__" in own):
        _attach(cls, __hash__)
    if "__repr__" not in own:
        _attach(cls, __repr__)
    return cls


def _attach(cls: type, method: Callable[..., Any]) -> None:
    """Set ``method`` on ``cls`` named as dataclasses names the ones it generates."""
    method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
    setattr(cls, method.__name__, method)
