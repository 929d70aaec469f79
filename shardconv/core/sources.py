"""The text each parsed model object came from, so an error found later (in a converter, in the
verifier) can still point into what the user typed: line, column and caret."""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

from shardconv.core.errors import ShardingError

T = TypeVar("T")

_TEXT: dict[int, str] = {}  # id(object) -> its source text; an entry leaves with its object


def remember(value: T, text: str) -> T:
    """Record that ``value`` was parsed from ``text`` (the first text wins) and return ``value``."""
    key = id(value)
    if key not in _TEXT:
        try:
            weakref.finalize(value, _TEXT.pop, key, None)
        except TypeError:  # not weak-referenceable (an int, a tuple): nothing to point into later
            return value
        _TEXT[key] = text
    return value


def source_of(value: object) -> str | None:
    """The text ``value`` was parsed from, if a parser recorded it."""
    return _TEXT.get(id(value))


@contextmanager
def pointing_into(*values: object) -> Iterator[None]:
    """Errors without a position raised inside point into the source text of the first ``values``
    that has one (at the fragment the message quotes, as ``ShardingError.anchor`` finds it)."""
    try:
        yield
    except ShardingError as e:
        text = next((t for t in map(source_of, values) if t is not None), None)
        if text is not None:
            raise e.anchor(text) from None
        raise


__all__ = ["pointing_into", "remember", "source_of"]
