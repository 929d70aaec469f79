"""Short device-id lists for tables and one-line summaries (``0-3,6``)."""

from __future__ import annotations


def compress_ids(ids: tuple[int, ...] | list[int]) -> str:
    """``0,1,2,3,6`` -> ``0-3,6``: short device lists for tables (``all`` for an unknown set)."""
    if not ids:
        return "all"
    parts: list[str] = []
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if j == i else f"{ids[i]}-{ids[j]}" if j > i + 1 else f"{ids[i]},{ids[j]}")
        i = j + 1
    return ",".join(parts)
