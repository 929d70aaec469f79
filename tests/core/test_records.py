"""``@record`` behaves as ``@dataclass(frozen=True)``: each class is declared twice, once with each, and
everything a caller can observe (equality, hashing, repr, frozenness, fields, replace, pickling) must agree."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Callable, ClassVar

import pytest

from shardconv.core.records import maker, record


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

    @deco
    class Keywords:
        a: int
        b: str = "x"
        limit: ClassVar[int] = 5
        _: KW_ONLY
        e: list[int] = field(default_factory=list)
        g: int = field(default=3, init=False)

    return {c.__name__: c for c in (Empty, One, Many, OwnMethods, OwnHash, NoHash, Child, Keywords)}


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
    "Keywords": [(1,), (1, "y")],
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


def _call_errors(cls: type) -> list[str]:
    """What a wrong call says (the arguments of ``Keywords`` and ``Child``)."""
    said = []
    for args, kwargs in (((), {}), ((1, 2, 3, 4, 5, 6, 7), {}), ((1,), {"z": 2}), ((1,), {"a": 1})):
        with pytest.raises(TypeError) as info:
            cls(*args, **kwargs)
        said.append(str(info.value))
    return said


@pytest.mark.parametrize("name", ["Keywords", "Child"])
def test_a_wrong_call_fails_as_with_a_dataclass(name: str) -> None:
    assert _call_errors(RECORD[name]) == _call_errors(DATACLASS[name])
    made, again = RECORD[name](1), RECORD[name](1)
    assert made == again and made.e is not again.e  # each gets its own default_factory value


def test_annotations_that_are_objects_are_read_as_dataclass_reads_them() -> None:
    def declared(deco: Callable[[type], type]) -> type:
        annotations = {"a": int, "limit": ClassVar[int], "plain": ClassVar, "_": KW_ONLY, "b": int}
        return deco(type("Objects", (), {"__annotations__": annotations, "limit": 5, "plain": 6, "b": 2}))

    ours, theirs = declared(record), declared(dataclass(frozen=True))
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(theirs)] == ["a", "b"]
    assert [f.kw_only for f in dataclasses.fields(ours)] == [False, True]
    assert repr(ours(1, b=3)).split("(")[1] == repr(theirs(1, b=3)).split("(")[1] == "a=1, b=3)"
    assert _call_errors(ours) == _call_errors(theirs)


def test_a_field_without_a_default_after_one_with_a_default_is_refused_as_by_dataclass() -> None:
    for deco in (record, dataclass(frozen=True)):
        with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

            @deco
            class Wrong:
                a: int = 0
                b: int


def test_a_mutable_default_is_refused_as_by_dataclass() -> None:
    for deco in (record, dataclass(frozen=True)):
        with pytest.raises(ValueError, match="mutable default <class 'list'> for field a is not allowed"):

            @deco
            class Wrong:
                a: list[int] = []  # noqa: RUF012


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


def test_maker_makes_what_init_makes_from_the_same_values() -> None:
    classes = declare(record)
    many = classes["Many"]
    made = maker(many)(1, "y", (2,), None, [3])
    inited = many(1, "y", (2,), None, [3])
    assert (made, hash(made), repr(made), vars(made)) == (inited, hash(inited), repr(inited), vars(inited))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.a = 2
    assert copy.deepcopy(made) == inited and dataclasses.replace(made, a=5) == many(5, "y", (2,), None, [3])


def test_maker_refuses_a_record_whose_init_does_more() -> None:
    @record
    class Checked:
        a: int

        def __post_init__(self) -> None:
            pass

    with pytest.raises(TypeError, match="__post_init__"):
        maker(Checked)
