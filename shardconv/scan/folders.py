"""Folders walked without recursion: a dump tree may nest deeper than Python's recursion limit, and every
command that reads a folder walks it here."""

from __future__ import annotations

import os
from collections.abc import Iterator

from shardconv.text.files import is_temp_file


def walk_tree(top: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top)`` top-down, with an explicit stack (any depth): (folder, its sub-folders, its files),
    each list sorted; the caller may prune the sub-folders in place. A folder that cannot be listed is
    passed over, as ``os.walk`` passes it, and a killed ``--fix``'s temporary files are never listed."""
    stack = [top]
    while stack:
        root = stack.pop()
        try:
            entries = list(os.scandir(root))
        except OSError:
            continue
        dirs = sorted(e.name for e in entries if _is_dir(e))
        files = sorted(e.name for e in entries if not _is_dir(e) and not is_temp_file(e.name))
        yield root, dirs, files
        stack.extend(os.path.join(root, d) for d in reversed(dirs) if not os.path.islink(os.path.join(root, d)))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    """Whether ``entry`` is a folder, or a link to one (listed with the folders and, as ``os.walk``
    does, never walked into)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


__all__ = ["walk_tree"]
