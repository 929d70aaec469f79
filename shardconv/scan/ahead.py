"""Read-ahead: the items of an iterator made in a thread of their own, a few ahead of the one who reads
them. The core scans with the interpreter's lock released, so on a machine of two or more processors
the next file or piece is scanned while the last one is followed; the items, and any error, come in
their order."""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar, cast

T = TypeVar("T")
AHEAD = 2  # batches made before the reader takes them
BATCH_SECONDS = 0.002  # items are handed over in batches, one every 2 ms at most: a piece's scan alone,
# cheap items (a pass log's repeated dumps) by the dozen, each batch costing the two threads one handover
_WAIT = 0.1  # seconds between looks, by a maker with no room, at whether the reader has gone
SWITCH_INTERVAL = 0.0001  # seconds a thread runs Python before another may, while a read-ahead runs
Entry = tuple[bool, object]  # (True, a batch of items), or (False, an error or None at the end)


def processors() -> int:
    """The processors this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (not Linux)
        return os.cpu_count() or 1


def read_ahead(items: Iterator[T], ahead: int = AHEAD, *, batch_seconds: float = BATCH_SECONDS) -> Iterator[T]:
    """``items``, made up to ``ahead`` batches (of ``batch_seconds`` of items; 0: one item each) before
    they are read, in a daemon thread; an error ``items`` raises is raised here once the items before
    it are read. On one processor, ``items``."""
    if processors() < 2:
        yield from items
        return
    made: queue.Queue[Entry] = queue.Queue(ahead)
    gone = threading.Event()
    worker = threading.Thread(
        target=_make, args=(items, made, gone, batch_seconds), name="shardconv-read-ahead", daemon=True
    )
    with _short_switches():
        worker.start()
        try:
            while True:
                ok, got = made.get()
                if not ok:
                    if got is None:
                        return
                    assert isinstance(got, BaseException)
                    raise got
                yield from cast(list[T], got)
        finally:
            gone.set()  # (a reader that stops early: the maker stops at its next batch)


def run_ahead(jobs: Iterator[Callable[[], T]], workers: int | None = None) -> Iterator[T]:
    """What each of ``jobs`` returns, in their order: the jobs are made in a read-ahead thread and run
    up to ``workers`` (default: one per processor) at once, with about that many more started and not
    yet read (each holds a piece of a file). The core releases the interpreter's lock, so pieces of
    one file are scanned on every processor. A job's error is raised in its place."""
    n = processors() if workers is None else workers
    if n < 2:
        yield from read_ahead(job() for job in jobs)
        return
    pool = _Pool(n)
    try:
        for job in read_ahead((pool.submit(job) for job in jobs), n, batch_seconds=0.0):
            yield job.result()
    finally:
        pool.shutdown()


class _Pending(Generic[T]):
    """A call handed to a pool, and (once run) what it returned or raised: ``result`` waits for it."""

    def __init__(self, run: Callable[[], T]) -> None:
        self.run, self.done = run, threading.Lock()
        self.value: T | None = None
        self.error: BaseException | None = None
        self.done.acquire()  # (released once run, or dropped)

    def __call__(self, dropped: bool = False) -> None:
        try:
            if dropped:
                raise RuntimeError("the pool stopped before this job started")
            self.value = self.run()
        except BaseException as e:  # noqa: BLE001 - raised by ``result``, in the job's place
            self.error = e
        finally:
            self.done.release()

    def result(self) -> T:
        with self.done:
            if self.error is not None:
                raise self.error
            return cast(T, self.value)


class _Pool:
    """``n`` daemon threads running the jobs submitted, in their order (concurrent.futures' pool costs
    25 ms to import, logging with it, before the first piece is scanned)."""

    def __init__(self, n: int) -> None:
        self.queue: queue.SimpleQueue[_Pending[object] | None] = queue.SimpleQueue()
        self.stopped = False  # (jobs not yet started are then dropped, never run)
        self.threads = [threading.Thread(target=self._work, name=f"shardconv-scan_{i}", daemon=True) for i in range(n)]
        for t in self.threads:
            t.start()

    def submit(self, run: Callable[[], T]) -> _Pending[T]:
        job = _Pending(run)
        self.queue.put(cast("_Pending[object]", job))
        return job

    def _work(self) -> None:
        while (job := self.queue.get()) is not None:
            job(dropped=self.stopped)

    def shutdown(self) -> None:
        """Drops the jobs not started and waits for those running."""
        self.stopped = True
        for _ in self.threads:
            self.queue.put(None)
        for t in self.threads:
            t.join()


class _Switches:
    """How many read-aheads run, and the switch interval in force before the first of them began."""

    def __init__(self) -> None:
        self.lock, self.running, self.before = threading.Lock(), 0, sys.getswitchinterval()


_SWITCHES = _Switches()


@contextmanager
def _short_switches() -> Iterator[None]:
    """A short switch interval while any read-ahead runs: its thread waits for the interpreter's lock
    after each native call, and gets it back within 0.1 ms, not CPython's 5, so the next piece is
    scanned while this one is followed. The interval before is back once the last read-ahead ends."""
    with _SWITCHES.lock:
        if _SWITCHES.running == 0:
            _SWITCHES.before = sys.getswitchinterval()
            sys.setswitchinterval(min(_SWITCHES.before, SWITCH_INTERVAL))
        _SWITCHES.running += 1
    try:
        yield
    finally:
        with _SWITCHES.lock:
            _SWITCHES.running -= 1
            if _SWITCHES.running == 0:
                sys.setswitchinterval(_SWITCHES.before)


def _make(items: Iterator[object], made: queue.Queue[Entry], gone: threading.Event, batch_seconds: float) -> None:
    """Put the items in batches, then (False, None) at the end or (False, error)."""
    batch: list[object] = []
    since = time.monotonic()
    try:
        for item in items:
            batch.append(item)
            if time.monotonic() - since >= batch_seconds:
                if not _put(made, (True, batch), gone):
                    return
                batch, since = [], time.monotonic()
    except BaseException as e:  # noqa: BLE001 - handed to the reader, who raises it
        end: object = e
    else:
        end = None
    if not batch or _put(made, (True, batch), gone):
        _put(made, (False, end), gone)


def _put(made: queue.Queue[Entry], entry: Entry, gone: threading.Event) -> bool:
    """Put ``entry`` once there is room; False if the reader has gone meanwhile."""
    while not gone.is_set():
        try:
            made.put(entry, timeout=_WAIT)
            return True
        except queue.Full:
            continue
    return False


__all__ = ["AHEAD", "SWITCH_INTERVAL", "processors", "read_ahead", "run_ahead"]
