"""``@record``: ``@dataclass(frozen=True)`` at a fraction of the import cost. dataclasses compiles six
methods per frozen class from source, a fifth of ``check``'s start-up; here ``__eq__``, ``__hash__``,
``__repr__`` and frozenness are shared closures, and ``__init__`` is compiled when the class makes its first
instance, so a command pays only for the records it makes."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from operator import attrgetter
from reprlib import recursive_repr
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, get_origin

_T = TypeVar("_T")
_MISSING = object()
_FIELD = getattr(dataclasses, "_FIELD")  # the marker dataclasses.fields() keeps a field by
_FACTORY = object()  # an __init__ parameter's default when its field has a default_factory

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
    ``__match_args__``, ``fields()`` and ``replace()``; a method the class defines itself is kept, as
    dataclass keeps it."""
    own = dict(cls.__dict__)
    fields = _fields(cls)
    setattr(cls, "__dataclass_fields__", {f.name: f for f in fields})
    setattr(cls, "__match_args__", tuple(f.name for f in fields if f.init and not f.kw_only))
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

    if "__init__" not in own:
        _attach(cls, _init_on_first_use(cls, fields))
    setattr(cls, "__setattr__", _frozen_setattr)
    setattr(cls, "__delattr__", _frozen_delattr)
    if "__eq__" not in own:
        _attach(cls, __eq__)
    # As dataclass decides: a __hash__ of the class's own is kept, the None that defining __eq__ implies is not.
    own_hash = own.get("__hash__", _MISSING)
    if own_hash is _MISSING or (own_hash is None and "__eq__" in own):
        _attach(cls, __hash__)
    if "__repr__" not in own:
        _attach(cls, __repr__)
    return cls


def _fields(cls: type) -> list[dataclasses.Field[Any]]:
    """The class's fields as dataclass finds them: its bases' first, then its own annotations in order
    (``ClassVar`` left out, ``KW_ONLY`` making the rest keyword-only); class attributes become defaults."""
    found: dict[str, dataclasses.Field[Any]] = {}
    for base in cls.__mro__[-1:0:-1]:
        found.update(getattr(base, "__dataclass_fields__", {}))
    kw_only = False
    for name, annotation in cls.__annotations__.items():
        spelled = _spelled(annotation)
        if spelled.rpartition(".")[2] == "KW_ONLY":
            kw_only = True
        elif not spelled.startswith(("ClassVar", "typing.ClassVar")):
            found[name] = _field(cls, name, annotation, kw_only)
    _check_default_order(found.values())
    return list(found.values())


def _spelled(annotation: Any) -> str:
    """An annotation as source spells it (``from __future__ import annotations``), or enough of it to
    tell ``KW_ONLY`` and ``ClassVar`` apart from a field's type."""
    if isinstance(annotation, str):
        return annotation
    if annotation is dataclasses.KW_ONLY:
        return "KW_ONLY"
    origin = get_origin(annotation) or annotation
    return "ClassVar" if origin is ClassVar else ""


def _field(cls: type, name: str, annotation: Any, kw_only: bool) -> dataclasses.Field[Any]:
    """One field, made from the class attribute of that name as dataclass makes it."""
    default = cls.__dict__.get(name, dataclasses.MISSING)
    if isinstance(default, dataclasses.Field):
        f = default
        if f.default is dataclasses.MISSING:
            delattr(cls, name)
        else:
            setattr(cls, name, f.default)
    else:
        f = dataclasses.field(default=default)
    if f.default.__class__.__hash__ is None:
        raise ValueError(f"mutable default {type(f.default)} for field {name} is not allowed: use default_factory")
    f.name, f.type = name, annotation
    setattr(f, "_field_type", _FIELD)
    if f.kw_only is dataclasses.MISSING:
        f.kw_only = kw_only
    return f


def _has_default(f: dataclasses.Field[Any]) -> bool:
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


def _check_default_order(fields: Iterable[dataclasses.Field[Any]]) -> None:
    """dataclass's error for a positional field without a default after one with a default."""
    seen_default = False
    for f in fields:
        if f.init and not f.kw_only:
            if _has_default(f):
                seen_default = True
            elif seen_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")


def _init_on_first_use(cls: type, fields: list[dataclasses.Field[Any]]) -> Callable[..., None]:
    """An ``__init__`` that compiles the real one, puts it in its place and runs it."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init = _compiled_init(cls, fields)
        setattr(cls, "__init__", init)
        init(self, *args, **kwargs)

    return __init__


def _compiled_init(cls: type, fields: list[dataclasses.Field[Any]]) -> Callable[..., None]:
    """The ``__init__`` dataclass writes for a frozen class, compiled from the same source."""
    scope: dict[str, Any] = {"_set": object.__setattr__, "_FACTORY": _FACTORY}
    positional: list[str] = ["self"]
    keyword: list[str] = []
    body: list[str] = []
    for f in fields:
        if f.default is not dataclasses.MISSING:
            scope[f"_default_{f.name}"] = f.default
        if f.default_factory is not dataclasses.MISSING:
            scope[f"_factory_{f.name}"] = f.default_factory
        if f.init:
            (keyword if f.kw_only else positional).append(_parameter(f))
        value = _initial_value(f)
        if value is not None:
            body.append(f"_set(self, {f.name!r}, {value})")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    parameters = ", ".join([*positional, "*", *keyword] if keyword else positional)
    exec(f"def __init__({parameters}):\n    " + ("\n    ".join(body) or "pass"), scope)
    init: Callable[..., None] = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _parameter(f: dataclasses.Field[Any]) -> str:
    if f.default_factory is not dataclasses.MISSING:
        return f"{f.name}=_FACTORY"
    if f.default is not dataclasses.MISSING:
        return f"{f.name}=_default_{f.name}"
    return f.name


def _initial_value(f: dataclasses.Field[Any]) -> str | None:
    """What ``__init__`` sets the field to (an expression), None when it leaves it unset."""
    factory = f.default_factory is not dataclasses.MISSING
    if f.init:
        return f"_factory_{f.name}() if {f.name} is _FACTORY else {f.name}" if factory else f.name
    if factory:
        return f"_factory_{f.name}()"
    return f"_default_{f.name}" if f.default is not dataclasses.MISSING else None


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    """Every record's ``__setattr__``: a frozen dataclass's error, for any name."""
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    """Every record's ``__delattr__``."""
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _attach(cls: type, method: Callable[..., Any]) -> None:
    """Set ``method`` on ``cls`` named as dataclasses names the ones it generates."""
    method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
    setattr(cls, method.__name__, method)


def maker(cls: type[_T]) -> Callable[..., _T]:
    """A constructor of ``cls`` (a ``@record`` with no ``__post_init__``) from every field's value in
    declaration order, for a reader that makes records in bulk: it fills the instance's ``__dict__`` in
    one step, where ``__init__`` sets each field through ``object.__setattr__`` (a third of the cost)."""
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__qualname__} has a __post_init__: make it through its __init__")
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    scope: dict[str, Any] = {"_new": object.__new__, "_set": object.__setattr__, "_cls": cls}
    entries = ", ".join(f"{name!r}: {name}" for name in names)
    body = f"o = _new(_cls)\n    _set(o, '__dict__', {{{entries}}})\n    return o"
    exec(f"def make({', '.join(names)}):\n    {body}", scope)
    make: Callable[..., _T] = scope["make"]
    make.__qualname__ = f"{cls.__qualname__}.make"
    return make
