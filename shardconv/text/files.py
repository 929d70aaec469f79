"""What a path is when it is not a regular file: reading a FIFO (or a device) blocks until a writer
comes, or forever, so the commands that read files skip it or refuse it, and say which it is."""

from __future__ import annotations

import os
import stat

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


# The time (in microseconds) XLA writes before each dump file's name with --xla_dump_include_timestamp
# (``1796599993003157.module_0000.jit_f.0003....txt``): a regex prefix for the names XLA's dumps take.
XLA_DUMP_TIMESTAMP = r"(?:\d+\.)?"

__all__ = ["XLA_DUMP_TIMESTAMP", "not_regular_reason", "special_kind"]
