"""Read-ahead: the items of an iterator made in a thread of their own, a few ahead of the one who reads
them. The core scans with the interpreter's lock released, so on a machine of two or more processors
the next file or piece is scanned while the last one is followed; the items, and any error, come in
their order."""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator
from typing import TypeVar, cast

T = TypeVar("T")
AHEAD = 2  # items made before the reader takes them (each holds at most a piece's scan)
_WAIT = 0.1  # seconds between looks, by a maker with no room, at whether the reader has gone


def processors() -> int:
    """The processors this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (not Linux)
        return os.cpu_count() or 1


def read_ahead(items: Iterator[T], ahead: int = AHEAD) -> Iterator[T]:
    """``items``, made up to ``ahead`` before they are read, in a daemon thread; an error ``items``
    raises is raised here once the items before it are read. On one processor, ``items`` itself."""
    if processors() < 2:
        yield from items
        return
    made: queue.Queue[tuple[bool, object]] = queue.Queue(ahead)
    gone = threading.Event()
    worker = threading.Thread(target=_make, args=(items, made, gone), name="shardconv-read-ahead", daemon=True)
    worker.start()
    try:
        while True:
            ok, item = made.get()
            if not ok:
                if item is None:
                    return
                assert isinstance(item, BaseException)
                raise item
            yield cast(T, item)
    finally:
        gone.set()  # (a reader that stops early: the maker stops at its next item)


def _make(items: Iterator[object], made: queue.Queue[tuple[bool, object]], gone: threading.Event) -> None:
    """Put each item, then (False, None) at the end or (False, error)."""
    try:
        for item in items:
            if not _put(made, (True, item), gone):
                return
    except BaseException as e:  # noqa: BLE001 - handed to the reader, who raises it
        _put(made, (False, e), gone)
        return
    _put(made, (False, None), gone)


def _put(made: queue.Queue[tuple[bool, object]], entry: tuple[bool, object], gone: threading.Event) -> bool:
    """Put ``entry`` once there is room; False if the reader has gone meanwhile."""
    while not gone.is_set():
        try:
            made.put(entry, timeout=_WAIT)
            return True
        except queue.Full:
            continue
    return False


__all__ = ["AHEAD", "processors", "read_ahead"]
