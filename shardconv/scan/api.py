"""The library's window on the scan floor: every sharding-related value of a dump as a typed ``Site``,
parsed, with the tensor type it annotates, its value's name and where it sits, for debug tools."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import KW_ONLY
from typing import TYPE_CHECKING

from shardconv.core.errors import ShardingError
from shardconv.core.records import record
from shardconv.scan.native import iter_sites, scan_bytes
from shardconv.scan.pieces import placed_scans
from shardconv.scan.sites import RECORD_KINDS, Shape, SiteKind, ValueSite
from shardconv.scan.values import ParsedValue, site_value

if TYPE_CHECKING:
    from shardconv._native import Scan


@record
class Site:
    """One value in a dump. ``line``/``col`` are 1-based (columns in bytes); ``start``/``end`` is its byte
    span in the file; ``value`` is the parsed sharding, mesh, ... (None, with ``error``, when it does not
    parse); ``name`` the value it annotates (``%x``, ``%arg0``, ``result[0]``, ``@mesh``, ``module``)."""

    _: KW_ONLY
    kind: SiteKind
    attribute: str  # where the value is written: "sharding=", "mhlo.sharding", "sdy.sharding", ...
    text: str
    value: ParsedValue | None
    error: ShardingError | None
    name: str | None
    shapes: tuple[Shape | None, ...] | None  # the annotated tensor type(s), one per result
    line: int
    col: int
    end_line: int
    end_col: int
    start: int
    end: int
    function: str | None  # the MLIR function, or HLO computation, it sits in
    op: str | None  # the op defining the value

    def static_shape(self, i: int = 0) -> tuple[int, ...] | None:
        """The shape of result ``i``, when its type gives every dim (None for a dynamic dim)."""
        shapes = self.shapes or ()
        s = shapes[i] if i < len(shapes) else None
        return None if s is None or any(d is None for d in s) else tuple(d for d in s if d is not None)


def scan_text(text: str | bytes, *, path: str = "<text>") -> Iterator[Site]:
    """The sites of an in-memory dump, in file order; the text is scanned at the first ``next()``.

    >>> import shardconv as sc
    >>> [(s.name, str(s.value)) for s in sc.scan_text('%p = f32[8]{0} parameter(0), sharding={devices=[2]<=[2]}')]
    [('%p', '{devices=[2]<=[2]}')]
    """
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    return _sites(map(scan_bytes, [data]), path)


def scan_path(path: str) -> Iterator[Site]:
    """The sites of a dump file (``-``: standard input), read in one native pass; OSError when it cannot
    be read. A long file is read a piece of whole dumps or HLO modules at a time, so memory holds one
    piece's table of sites, whatever the file's size; each ``Site`` is built as it is reached."""
    return _sites(placed_scans(path), path)


def _sites(scans: Iterable[Scan], path: str) -> Iterator[Site]:
    """Every value site but module headers and Shardy's propagation records (``explain`` reads those), of
    each scan in turn (scanned at the first ``next()``)."""
    for scan in scans:
        for s in iter_sites(scan, path):
            if s.kind is not SiteKind.MODULE_START and s.kind not in RECORD_KINDS:
                yield _site(s)


def _site(s: ValueSite) -> Site:
    value, error = site_value(s)
    return Site(
        kind=s.kind, attribute=s.site, text=s.text, value=value, error=error, name=s.value, shapes=s.shapes,
        line=s.line, col=s.col, end_line=s.end_line, end_col=s.end_col, start=s.start, end=s.end,
        function=s.function if s.function is not None else s.computation, op=s.op,
    )


__all__ = ["Site", "scan_path", "scan_text"]
