"""A progress bar for long runs, on a terminal only: never on a pipe (where it would be noise in a log),
never with TERM=dumb. Transient: it is gone once the run ends, so the output reads as without it."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

from shardconv.ui.console import is_tty, use_color

Advance = Callable[[int], None]


def shows_progress(stream: IO[str]) -> bool:
    """A bar is drawn only when ``stream`` is a terminal (and not a dumb one)."""
    return is_tty(stream) and os.environ.get("TERM") != "dumb"


def _nothing(n: int) -> None:
    """What advancing a bar that is not shown does."""


@contextmanager
def progress(description: str, total: int, *, unit: str = "", stream: IO[str] | None = None) -> Iterator[Advance]:
    """A function to advance the bar by ``n`` (of ``total``); a no-op when no bar is shown."""
    out = stream if stream is not None else sys.stderr
    if total <= 0 or not shows_progress(out):
        yield _nothing
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    count = DownloadColumn() if unit == "bytes" else MofNCompleteColumn()
    console = Console(file=out, no_color=not use_color(out), force_terminal=True, highlight=False)
    with Progress(
        TextColumn("{task.description}"), BarColumn(), count, TimeElapsedColumn(), console=console, transient=True
    ) as bar:
        task = bar.add_task(description, total=total)

        def advance(n: int) -> None:
            bar.advance(task, n)

        yield advance


__all__ = ["Advance", "progress", "shows_progress"]
