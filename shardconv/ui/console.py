"""The one place that decides colour, width and TTY-ness, and builds rich Consoles (rich imported lazily).

Colour only when the stream is a terminal and ``NO_COLOR`` is unset (https://no-color.org);
``FORCE_COLOR`` turns it on for pipes. Width: ``COLUMNS`` if set, else the terminal's, else 80.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from typing import IO, TYPE_CHECKING, cast

if TYPE_CHECKING:
    from rich.console import Console

DEFAULT_WIDTH = 80
PIPE_WIDTH = 1 << 16  # "no wrapping": a console this wide lays tables out at their natural width


def is_tty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def use_color(stream: IO[str]) -> bool:
    """Colour policy: NO_COLOR wins, then FORCE_COLOR, then 'is it a terminal'."""
    if os.environ.get("NO_COLOR", "") != "":
        return False
    if os.environ.get("FORCE_COLOR", "") != "":
        return True
    return is_tty(stream) and os.environ.get("TERM") != "dumb"


def width(stream: IO[str]) -> int:
    """Columns to lay tables out in."""
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    if is_tty(stream):
        import shutil

        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return DEFAULT_WIDTH


def wrap_width(stream: IO[str]) -> int | None:
    """Where values may wrap (at separators only): the width on a terminal; never on a pipe."""
    return width(stream) if is_tty(stream) else None


def make_console(stream: IO[str] | None = None, *, stderr: bool = False, wrap_pipes: bool = True) -> Console:
    """A rich Console on ``stream`` (stdout by default) following the colour and width policy;
    ``wrap_pipes=False``: on a pipe nothing wraps (tables take their natural width)."""
    from rich.console import Console

    if stream is None:
        stream = sys.stderr if stderr else sys.stdout
    color = use_color(stream)
    console = Console(
        file=cast("IO[str]", _TrailingSpaceTrimmer(stream)),  # a write/flush wrapper, the rest delegated
        width=width(stream) if wrap_pipes or is_tty(stream) else PIPE_WIDTH,
        color_system="auto" if color else None,
        force_terminal=color,
        no_color=not color,
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )
    console.on_broken_pipe = _broken_pipe  # type: ignore[method-assign]  # rich's hook is a method to override
    return console


_LINE_END_SPACES = re.compile(" +\n")  # (one pass in C over a write: a long trace writes a dump's lines at once)


class _TrailingSpaceTrimmer:
    """Drops the spaces rich pads table cells with at line ends, so output diffs and pastes cleanly.

    Spaces at the end of a write are held back until the next write shows whether a newline follows."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._held = ""

    def write(self, text: str) -> int:
        text = self._held + text
        body = text.rstrip(" ")
        self._held = text[len(body) :]
        self._stream.write(_LINE_END_SPACES.sub("\n", body) if " \n" in body else body)
        return len(text)

    def flush(self) -> None:
        self._stream.write(self._held)
        self._held = ""
        self._stream.flush()

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def _broken_pipe() -> None:
    """rich's default exits 1 on EPIPE, which reads as "findings"; let the runner exit 141 instead."""
    raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))
