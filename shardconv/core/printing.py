"""The model's one bridge to its printers: each notation's printer registers here, so ``str(sharding)``
works while the model (the bottom layer) never imports the formats above it."""

from __future__ import annotations

TYPE_CHECKING = False  # not from typing (nor collections): `import shardconv` would then pay for them
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    _Printer = TypeVar("_Printer", bound=Callable[..., Any])
_PRINTERS: dict[tuple[type, str], Callable[..., Any]] = {}
_LOADERS: dict[str, list[Callable[[], object]]] = {}  # form -> loaders not run yet


def printer(cls: type, form: str = "text") -> Callable[[_Printer], _Printer]:
    """Register the decorated function as the ``form`` printer (``text``, ``proto``) of ``cls``."""

    def register(fn: _Printer) -> _Printer:
        _PRINTERS[(cls, form)] = fn
        return fn

    return register


def load_printers_with(loader: Callable[[], object], forms: tuple[str, ...] = ("text", "proto")) -> None:
    """Run ``loader`` (which imports printers) the first time a printer of one of ``forms`` is missing: the
    package root installs them, so printers load on first ``str()`` rather than at ``import shardconv``,
    and the HTML pictures only when Jupyter asks for one."""
    for form in forms:
        _LOADERS.setdefault(form, []).append(loader)


def _printer_of(obj: object, form: str) -> Callable[..., Any]:
    key = (type(obj), form)
    pending = _LOADERS.get(form, [])
    while key not in _PRINTERS and pending:
        pending.pop()()
    try:
        return _PRINTERS[key]
    except KeyError:
        raise LookupError(f"no {form} printer for {type(obj).__name__}") from None


def render_text(obj: object, **options: Any) -> str:
    """``obj`` in its notation's canonical text, by the printer registered for its type."""
    text: str = _printer_of(obj, "text")(obj, **options)
    return text


def render_proto(obj: object) -> bytes:
    """``obj`` as serialized proto bytes, by the printer registered for its type."""
    proto: bytes = _printer_of(obj, "proto")(obj)
    return proto


def render_html(obj: object) -> str | None:
    """``obj`` as an HTML picture (Jupyter's ``_repr_html_``), or None while no html printer is
    registered for its type: then Jupyter shows the text."""
    try:
        fn = _printer_of(obj, "html")
    except LookupError:
        return None
    html: str | None = fn(obj)
    return html
