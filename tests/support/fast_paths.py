"""A reader that skips the grammar for the spellings tools print, held to the grammar's answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from shardconv.core.errors import ShardingError

T = TypeVar("T")


def answer_or_error(read: Callable[[], T]) -> T | ShardingError:
    """What ``read`` returns, or the ShardingError it raises."""
    try:
        return read()
    except ShardingError as e:
        return e


def same_as_grammar(ours: T | None, grammar: Callable[[], object], text: str) -> T | None:
    """``ours`` (None: the fast path left ``text`` to the grammar) must be the grammar's answer."""
    if ours is not None:
        theirs = answer_or_error(grammar)
        assert not isinstance(theirs, ShardingError), f"{text}: read, but the grammar says {theirs}"
        assert ours == theirs, text
    return ours
