"""The model's one bridge to its printers: each notation's printer registers here, so ``str(sharding)``
works while the model (the bottom layer) never imports the formats above it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

_Printer = TypeVar("_Printer", bound=Callable[..., Any])
_PRINTERS: dict[tuple[type, str], Callable[..., Any]] = {}


def printer(cls: type, form: str = "text") -> Callable[[_Printer], _Printer]:
    """Register the decorated function as the ``form`` printer (``text``, ``proto``) of ``cls``."""

    def register(fn: _Printer) -> _Printer:
        _PRINTERS[(cls, form)] = fn
        return fn

    return register


def _printer_of(obj: object, form: str) -> Callable[..., Any]:
    try:
        return _PRINTERS[(type(obj), form)]
    except KeyError:
        raise LookupError(f"no {form} printer for {type(obj).__name__}: import shardconv.formats first") from None


def render_text(obj: object, **options: Any) -> str:
    """``obj`` in its notation's canonical text, by the printer registered for its type."""
    return cast(str, _printer_of(obj, "text")(obj, **options))


def render_proto(obj: object) -> bytes:
    """``obj`` as serialized proto bytes, by the printer registered for its type."""
    return cast(bytes, _printer_of(obj, "proto")(obj))
