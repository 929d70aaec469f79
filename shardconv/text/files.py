"""What a path is when it is not a regular file: reading a FIFO (or a device) blocks until a writer
comes, or forever, so the commands that read files skip it or refuse it, and say which it is."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable
from typing import BinaryIO

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def special_kind(path: str) -> str | None:
    """``"a FIFO"``, ``"a socket"``, ``"a character device"`` or ``"a block device"`` for what ``path``
    (followed through symlinks) is; None for a regular file, a folder, ``-``, or a path that cannot be
    looked at (reading it reports why)."""
    if path == "-":
        return None
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return next((what for test, what in _KINDS if test(mode)), None)


def not_regular_reason(path: str) -> str | None:
    """Why ``path`` is not read: ``not a regular file (a FIFO)``, or None when it is read."""
    kind = special_kind(path)
    return None if kind is None else f"not a regular file ({kind}); pipe it to '-' to read it"


class NotRegularFileError(OSError):
    """A path that names a FIFO, socket, device or folder where a regular file must be read."""


def refuse_special(paths: Iterable[str], error: Callable[[str, str], Exception]) -> None:
    """Raises ``error(path, why)`` for the first of ``paths`` that is a FIFO, socket or device, before any
    read: reading it would block until a writer comes, or forever (``-`` is read: the user pipes what
    they mean). The CLI's ``error`` makes a usage error, the library's ``not_regular_error`` an OSError."""
    for p in paths:
        why = not_regular_reason(p)
        if why is not None:
            raise error(p, why)


def not_regular_error(path: str, why: str) -> NotRegularFileError:
    """The library's refusal of a path ``refuse_special`` refuses: an OSError naming it and why."""
    return NotRegularFileError(errno.EINVAL, why, path)


def open_regular(path: str) -> BinaryIO:
    """``path`` opened for reading in binary, only when it is a regular file: a FIFO is opened without
    waiting for a writer and then refused, as is a device (``/dev/zero`` never ends) or a folder.
    Raises OSError (NotRegularFileError, whose ``strerror`` says what the path is)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((what for test, what in _KINDS if test(mode)), "a folder" if stat.S_ISDIR(mode) else "")
            raise NotRegularFileError(0, f"not a regular file ({kind or 'a special file'})", path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_prefix(path: str, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes from the start of the regular file ``path``, and whether more follow: the
    one way a file a config or an option names is read, so no file can make shardconv hold more."""
    with open_regular(path) as f:
        data = f.read(limit + 1)
    return data[:limit], len(data) > limit


def os_reason(e: OSError, path: str | None = None) -> str:
    """Why ``e`` failed, without the file it names: the system's words, or the message less the
    ``PATH: `` the core's messages open with, since every caller names the file once itself."""
    words = e.strerror or str(e)
    for name in (path, e.filename):
        if isinstance(name, str) and words.startswith(f"{name}: "):
            return words[len(name) + 2 :]
    return words


# ``write_atomic``'s temp files: ``.NAME.XXXXXXXX.shardconv-tmp`` beside the file being replaced. A run
# killed mid-write can leave one; folder walks skip them, since they are never the user's files.
TEMP_PREFIX, TEMP_SUFFIX = ".", ".shardconv-tmp"


def is_temp_file(name: str) -> bool:
    """Whether the base name ``name`` is one of ``write_atomic``'s temp files."""
    return name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)


__all__ = [
    "TEMP_PREFIX",
    "TEMP_SUFFIX",
    "NotRegularFileError",
    "is_temp_file",
    "not_regular_error",
    "not_regular_reason",
    "open_regular",
    "os_reason",
    "read_prefix",
    "refuse_special",
    "special_kind",
]
