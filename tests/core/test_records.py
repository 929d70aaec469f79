"""``@record`` behaves as ``@dataclass(frozen=True)``: each class is declared twice, once with each, and
everything a caller can observe (equality, hashing, repr, frozenness, fields, replace, pickling) must agree."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field
from typing import Any, Callable

import pytest

from shardconv.core.records import record


def declare(deco: Callable[[type], type]) -> dict[str, type]:
    @deco
    class Empty:
        pass

    @deco
    class One:
        a: int

    @deco
    class Many:
        """Documented."""

        a: int
        b: str = "x"
        c: tuple[int, ...] = field(default=(), compare=False)
        d: Any = field(default=None, repr=False)
        e: list[int] = field(default_factory=list, hash=False)

    @deco
    class OwnMethods:
        a: int

        def __repr__(self) -> str:
            return f"own {self.a}"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, OwnMethods) and abs(self.a) == abs(other.a)

    @deco
    class OwnHash:
        a: int

        def __hash__(self) -> int:
            return 7

    @deco
    class NoHash:
        a: int
        __hash__ = None  # type: ignore[assignment]

    @deco
    class Child(Many):
        f: int = 0

    return {c.__name__: c for c in (Empty, One, Many, OwnMethods, OwnHash, NoHash, Child)}


RECORD = declare(record)
DATACLASS = declare(dataclass(frozen=True))
SAMPLES: dict[str, list[tuple[Any, ...]]] = {
    "Empty": [()],
    "One": [(1,), (2,)],
    "Many": [(1,), (1, "y", (3,)), (1, "x", (4,), "d", [5]), (2,)],
    "OwnMethods": [(1,), (-1,), (2,)],
    "OwnHash": [(1,), (2,)],
    "NoHash": [(1,)],
    "Child": [(1,), (1, "x", (), None, [], 3)],
}


def observe(cls: type, args: tuple[Any, ...]) -> list[Any]:
    obj, again = cls(*args), cls(*args)
    seen: list[Any] = [repr(obj).replace(cls.__module__, "M"), obj == again, obj != again, obj == args, obj.__eq__(1)]
    try:
        seen.append(hash(obj) == hash(again))
        seen.append(hash(obj))
    except TypeError as e:
        seen.append(str(e))
    for attempt in (lambda: setattr(obj, "a", 9), lambda: delattr(obj, "a"), lambda: setattr(obj, "new", 1)):
        with pytest.raises(dataclasses.FrozenInstanceError) as info:
            attempt()
        seen.append(str(info.value))
    seen.append([(f.name, f.compare, f.hash, f.repr) for f in dataclasses.fields(obj)])
    seen.append(cls.__match_args__)  # type: ignore[attr-defined]
    if dataclasses.fields(obj):
        seen.append(repr(dataclasses.replace(obj, a=5)).replace(cls.__module__, "M"))
    seen.append([cls(*args) == cls(*other) for other in SAMPLES[cls.__name__]])
    return seen


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_record_matches_frozen_dataclass(name: str) -> None:
    for args in SAMPLES[name]:
        assert observe(RECORD[name], args) == observe(DATACLASS[name], args)


def test_recursive_repr_is_cut_as_dataclass_cuts_it() -> None:
    made = {}
    for label, deco in (("record", record), ("dataclass", dataclass(frozen=True))):

        @deco
        class Box:
            items: list[Any]

        box = Box([])
        box.items.append(box)
        made[label] = repr(box)
    assert made["record"] == made["dataclass"] == "test_recursive_repr_is_cut_as_dataclass_cuts_it.<locals>.Box(items=[...])"


@record
class Pickled:
    a: int
    b: tuple[str, ...] = ()


def test_a_record_pickles_and_copies() -> None:
    obj = Pickled(1, ("x",))
    assert pickle.loads(pickle.dumps(obj)) == obj
    assert copy.deepcopy(obj) == obj and copy.copy(obj) == obj


def test_comparison_with_a_subclass_is_not_equal() -> None:
    base, child = RECORD["Many"](1), RECORD["Child"](1)
    assert base != child and child != base
