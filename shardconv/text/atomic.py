"""The one way shardconv writes a file: readers see the old file or the new one, never half of either;
the new file keeps the mode, owner and group of the one it replaces (a new file gets the umask's mode),
and a file that changed identity since the caller looked at it is not replaced."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from shardconv.text.files import TEMP_PREFIX, TEMP_SUFFIX


class TargetChangedError(OSError):
    """The file to be replaced is no longer the one the caller read (renamed over, rewritten)."""


def identity(st: os.stat_result) -> tuple[int, int, int, int]:
    """What says a path still names the same, unchanged file: device, inode, size and mtime."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def write_atomic(
    path: str | os.PathLike[str],
    content: bytes | Callable[[BinaryIO], None],
    *,
    unchanged: os.stat_result | None = None,
) -> None:
    """Write ``content`` (bytes, or a function writing to the open temp file) to ``path``: a temp file in
    the same folder, fsync, rename over ``path``, fsync the folder. With ``unchanged``, ``path`` must
    still have that ``identity`` right before the rename, else TargetChangedError. On any error (and on
    SIGTERM or SIGHUP, which then end the process) the temp file is removed, ``path`` is left as it was
    and the error propagates. A symlink is followed: its target is rewritten."""
    import tempfile  # only a write pays for it (check imports this module to say what --fix would do)

    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    old = _stat_or_none(target)
    with _signals_raise():
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f"{TEMP_PREFIX}{os.path.basename(target)}.", suffix=TEMP_SUFFIX)
        try:
            with os.fdopen(fd, "wb") as dst:
                if isinstance(content, bytes):
                    dst.write(content)
                else:
                    content(dst)
                dst.flush()
                os.fsync(dst.fileno())
            _keep_owner(tmp, old)
            os.chmod(tmp, stat.S_IMODE(old.st_mode) if old is not None else _umask_mode())
            if unchanged is not None:
                now = _stat_or_none(target)
                if now is None or identity(now) != identity(unchanged):
                    raise TargetChangedError(0, "changed (or was replaced) while it was being rewritten", target)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    _fsync_dir(folder)


def _stat_or_none(target: str) -> os.stat_result | None:
    try:
        return os.stat(target)
    except FileNotFoundError:
        return None


def _keep_owner(tmp: str, old: os.stat_result | None) -> None:
    """Give the temp file the replaced file's owner and group, where this process may (root may; anyone
    may keep their own uid and pick one of their groups): otherwise the owner becomes whoever ran --fix."""
    if old is None:
        return
    mine = os.stat(tmp)
    if (mine.st_uid, mine.st_gid) == (old.st_uid, old.st_gid):
        return
    with contextlib.suppress(PermissionError):
        os.chown(tmp, old.st_uid, old.st_gid)
        return
    with contextlib.suppress(PermissionError):  # not the owner: at least the group
        os.chown(tmp, -1, old.st_gid)


def _umask_mode() -> int:
    """What ``open()`` would give a new file under the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


class _Terminated(SystemExit):
    """SIGTERM or SIGHUP arrived during a write: unwind (removing the temp file), then exit 128 + signal."""


@contextlib.contextmanager
def _signals_raise() -> Iterator[None]:
    """While a temp file exists, SIGTERM and SIGHUP (when nobody else handles them) unwind the write
    instead of killing the process where it stands. Only the main thread can set handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved: dict[int, Any] = {}

    def stop(signum: int, frame: object) -> None:
        raise _Terminated(128 + signum)

    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None and signal.getsignal(sig) is signal.SIG_DFL:
            saved[sig] = signal.signal(sig, stop)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


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


__all__ = ["TargetChangedError", "identity", "write_atomic"]
