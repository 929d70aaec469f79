"""The one way shardconv writes a file: readers see the old file or the new one, never half of either,
and the new file keeps the mode of the one it replaces (a new file gets the umask's mode)."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from typing import BinaryIO


def write_atomic(path: str | os.PathLike[str], content: bytes | Callable[[BinaryIO], None]) -> None:
    """Write ``content`` (bytes, or a function writing to the open temp file) to ``path``: a temp file in
    the same folder, fsync, rename over ``path``, fsync the folder. On any error the temp file is removed,
    ``path`` is left as it was and the error propagates. A symlink is followed: its target is rewritten."""
    import tempfile  # only a write pays for it (check imports this module to say what --fix would do)

    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    mode = _mode_for(target)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(target)}.", suffix=".shardconv-tmp")
    try:
        with os.fdopen(fd, "wb") as dst:
            if isinstance(content, bytes):
                dst.write(content)
            else:
                content(dst)
            dst.flush()
            os.fsync(dst.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)


def _mode_for(target: str) -> int:
    """The permission bits of the file being replaced, else what ``open()`` would give under the umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_dir(folder: str) -> None:
    """Make the rename durable; folders that cannot be opened or synced (some filesystems) are skipped."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = ["write_atomic"]
