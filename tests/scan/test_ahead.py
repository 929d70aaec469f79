"""Read-ahead (scan/ahead.py): the items of an iterator made in a thread a few ahead of their reader,
in their order, with an error where it came, and the maker stopped when the reader stops."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator

import pytest

from shardconv.scan import ahead
from shardconv.scan.ahead import read_ahead


@pytest.fixture(autouse=True)
def two_processors(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on any machine with two or more processors, whatever this one has."""
    monkeypatch.setattr(ahead, "processors", lambda: 2)


def test_items_come_in_their_order_made_in_another_thread() -> None:
    makers: set[str] = set()

    def items() -> Iterator[int]:
        for i in range(500):
            makers.add(threading.current_thread().name)
            yield i

    assert list(read_ahead(items())) == list(range(500))
    assert makers == {"shardconv-read-ahead"}


def test_the_next_item_is_made_while_the_reader_holds_this_one() -> None:
    second = threading.Event()

    def items() -> Iterator[int]:
        yield 0
        second.set()
        yield 1

    got = read_ahead(items())
    assert next(got) == 0
    assert second.wait(10), "the maker waited for the reader"
    assert list(got) == [1]


def test_an_error_comes_after_the_items_made_before_it() -> None:
    def items() -> Iterator[int]:
        yield 1
        yield 2
        raise OSError(5, "Input/output error", "dump.txt")

    got = read_ahead(items())
    assert [next(got), next(got)] == [1, 2]
    with pytest.raises(OSError, match="Input/output error"):
        next(got)


def test_a_reader_that_stops_early_stops_the_maker() -> None:
    made: list[int] = []
    finished = threading.Event()

    def items() -> Iterator[int]:
        try:
            for i in range(10_000):
                time.sleep(0.0005)
                made.append(i)
                yield i
        finally:
            finished.set()

    got = read_ahead(items(), ahead=2)
    assert next(got) == 0
    got.close()
    assert finished.wait(10), "the maker went on after its reader had gone"
    assert len(made) < 100  # (the batch read, the queue's two, the one being put: a few ms of items)


def test_cheap_items_are_handed_over_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []
    real_put = ahead._put

    def put(made: queue.Queue[ahead.Entry], entry: ahead.Entry, gone: threading.Event) -> bool:
        if entry[0]:
            assert isinstance(entry[1], list)
            sizes.append(len(entry[1]))
        return real_put(made, entry, gone)

    monkeypatch.setattr(ahead, "_put", put)
    assert list(read_ahead(iter(range(100_000)))) == list(range(100_000))
    assert sum(sizes) == 100_000 and len(sizes) < 1_000  # (not one handover per item)
def test_on_one_processor_the_items_are_made_by_their_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ahead, "processors", lambda: 1)

    def items() -> Iterator[str]:
        for _ in range(3):
            yield threading.current_thread().name

    assert list(read_ahead(items())) == [threading.current_thread().name] * 3
