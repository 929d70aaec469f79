"""Read-ahead (scan/ahead.py): the items of an iterator made in a thread a few ahead of their reader,
in their order, with an error where it came, and the maker stopped when the reader stops; and jobs
(pieces to scan) run on a thread per processor, their results in order."""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from shardconv.scan import ahead
from shardconv.scan.ahead import read_ahead, run_ahead


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


def test_jobs_run_on_two_threads_at_once_and_come_back_in_their_order() -> None:
    both = threading.Barrier(2, timeout=10)  # (the first two jobs meet: they run at the same time)
    runners: set[str] = set()

    def job(i: int) -> Callable[[], int]:
        def run() -> int:
            runners.add(threading.current_thread().name)
            if i < 2:
                both.wait()
            time.sleep(0.001 * (i % 3 == 0))  # (later jobs finish out of order)
            return i

        return run

    assert list(run_ahead(job(i) for i in range(40))) == list(range(40))
    assert len(runners) == 2 and all(r.startswith("shardconv-scan") for r in runners)


def test_a_job_error_comes_in_its_place_and_a_reader_that_stops_stops_the_jobs() -> None:
    def failing() -> int:
        raise OSError(5, "Input/output error", "dump.txt")

    got = run_ahead(iter([lambda: 1, failing, lambda: 3]))
    assert next(got) == 1
    with pytest.raises(OSError, match="Input/output error"):
        next(got)
    started: list[int] = []

    def jobs() -> Iterator[Callable[[], int]]:
        for i in range(10_000):
            started.append(i)
            yield lambda i=i: i

    stopped = run_ahead(jobs())
    assert next(stopped) == 0
    stopped.close()
    time.sleep(0.2)
    assert len(started) < 20  # (a few ahead: never the whole file's pieces in memory)


def test_on_one_processor_jobs_run_in_the_read_ahead_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ahead, "processors", lambda: 1)
    assert list(run_ahead(iter([lambda: threading.current_thread().name]))) == [threading.current_thread().name]


def test_the_switch_interval_is_short_while_any_read_ahead_runs_and_restored_after() -> None:
    before = sys.getswitchinterval()
    assert before > ahead.SWITCH_INTERVAL  # (CPython's 5 ms, as a library user has it)
    seen: list[float] = []

    def items() -> Iterator[int]:
        for i in range(3):
            seen.append(sys.getswitchinterval())
            yield i

    outer, inner = read_ahead(items(), batch_seconds=0.0), read_ahead(iter(range(3)), batch_seconds=0.0)
    assert next(outer) == 0 and next(inner) == 0
    assert sys.getswitchinterval() == pytest.approx(ahead.SWITCH_INTERVAL)
    outer.close()  # (not the last to end: still short)
    assert sys.getswitchinterval() == pytest.approx(ahead.SWITCH_INTERVAL)
    assert list(inner) == [1, 2]
    assert sys.getswitchinterval() == before
    assert list(run_ahead(iter([lambda: sys.getswitchinterval()]))) == [pytest.approx(ahead.SWITCH_INTERVAL)]
    assert sys.getswitchinterval() == before
