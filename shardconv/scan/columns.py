"""Columns: a native scan's per-site arrays read as Python sequences, and its kind codes as ``SiteKind``s,
without copying (a memoryview over each column's bytes)."""

from __future__ import annotations

from collections.abc import Collection
from functools import lru_cache
from typing import TYPE_CHECKING

from shardconv.scan.sites import SiteKind

if TYPE_CHECKING:
    from shardconv._native import Scan

NONE = 0xFFFF_FFFF
_KINDS = tuple(SiteKind)
_WIDE = frozenset({"start", "end"})
BROKEN = 4 | 8 | 16  # the ``flags`` bits of a site the scan could not read whole (unfinished, undecodable, not UTF-8)


def kind_of(code: int) -> SiteKind:
    """The ``SiteKind`` a native kind code stands for (codes are the enum's declaration order)."""
    return _KINDS[code]


def kind_code(kind: SiteKind) -> int:
    """The native code of ``kind`` (as ``Scan.value_kinds`` holds it)."""
    return _KINDS.index(kind)


def kind_flags(scan: Scan, kinds: Collection[SiteKind]) -> bytes:
    """Per distinct value (index it by value id), 1 where its kind is one of ``kinds``, else 0: read off
    the scan's kind bytes at C speed, not tuple by tuple."""
    return scan.value_kinds.translate(_flag_table(frozenset(kinds)))


@lru_cache(maxsize=64)
def _flag_table(kinds: frozenset[SiteKind]) -> bytes:
    """The translation table ``kind_flags`` reads the kind bytes through (each reader asks for a few sets of
    kinds, file after file)."""
    return bytes(k in kinds for k in _KINDS).ljust(256, b"\0")


def values_of_kind(scan: Scan, kinds: Collection[SiteKind]) -> set[int]:
    """The distinct values whose kind is one of ``kinds`` (few, among many: headers, meshes, markers)."""
    flags, found = kind_flags(scan, kinds), set()
    i = flags.find(1)
    while i >= 0:
        found.add(i)
        i = flags.find(1, i + 1)
    return found


def site_column(scan: Scan, name: str) -> memoryview:
    """One per-site column: u64 for ``start`` / ``end``, u32 for the others (``NONE``: no value)."""
    return memoryview(scan.columns[name]).cast("Q" if name in _WIDE else "I")


def sites_of(scan: Scan, values: Collection[int], column: str = "value", within: range | None = None) -> list[int]:
    """The sites (``within`` a range of them, else all) whose ``column`` holds any of ``values``, in order,
    found by the core in one pass over the column (a few among many sites: module headers, meshes, one
    value's name) rather than by reading every site."""
    span = (0, len(scan.columns[column]) // 4) if within is None else (within.start, within.stop)
    return scan.sites_of(list(values), column, span)


__all__ = ["BROKEN", "NONE", "kind_code", "kind_flags", "kind_of", "site_column", "sites_of", "values_of_kind"]
