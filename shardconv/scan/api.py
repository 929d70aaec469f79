"""The library's window on the scan floor: every sharding-related value of a dump as a typed ``Site``,
parsed, with the tensor type it annotates, its value's name and where it sits, for debug tools."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import KW_ONLY
from itertools import chain, count
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from shardconv.core.errors import ShardingError
from shardconv.core.records import maker, record
from shardconv.scan.columns import BROKEN
from shardconv.scan.native import scan_bytes, site_at
from shardconv.scan.pieces import placed_scans
from shardconv.scan.sites import RECORD_KINDS, Shape, SiteKind
from shardconv.scan.table import Value, table
from shardconv.scan.values import ParsedValue, parse_value, site_value

if TYPE_CHECKING:
    from shardconv._native import Scan

T = TypeVar("T")


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
    each scan in turn (scanned at the first ``next()``), chained without a generator of its own between."""
    return chain.from_iterable(_scan_sites(scan, path) for scan in scans)


_HIDDEN = frozenset({SiteKind.MODULE_START, *RECORD_KINDS})


def _scan_sites(scan: Scan, path: str) -> Iterator[Site]:
    """The public sites of one scan, read column by column: each distinct value parsed once, each site's
    record filled in one step (``maker``), so a site costs little more than the scan made it for."""
    t = table(scan)
    c = t.col
    hidden = t.flagged(_HIDDEN)
    values: list[_Shared | None] = [None] * t.value_count()
    rows = zip(
        count(), c.value, _looked_up(c.name, list(t.names)), _looked_up(c.shapes, t.all_shapes()),
        _looked_up(c.scope, [s.name for s in t.all_scopes()]), _looked_up(c.op, t.ops),
        c.line, c.col, c.end_line, c.end_col, c.start, c.end, c.flags,
    )
    for i, v, name, shapes, function, op, line, col, end_line, end_col, start, end, flags in rows:
        if hidden[v]:
            continue
        got = values[v]
        if got is None:
            got = values[v] = _shared(t.value(v))
        kind, attribute, text, value, error = got
        if flags & BROKEN:  # (rare) the scan could not read it whole: ``site_value`` says why, never a value
            value, error = site_value(site_at(scan, i, path))
        yield _make_site(kind, attribute, text, value, error, name, shapes, line, col, end_line, end_col, start, end,
                         function, op)


_make_site = maker(Site)


class _Shared(NamedTuple):
    """What every site of a distinct value shares: its kind, attribute and text, parsed."""

    kind: SiteKind
    attribute: str
    text: str
    value: ParsedValue | None
    error: ShardingError | None


def _shared(v: Value) -> _Shared:
    return _Shared(v.kind, v.site, v.text, *parse_value(v.kind, v.text, v.data))


def _looked_up(column: memoryview, entries: Sequence[T]) -> Iterator[T | None]:
    """Each entry of ``column`` (indices into ``entries``, ``NONE`` for none) as what it indexes, or None:
    ``NONE`` read as a signed -1 picks the None put after the last entry."""
    return map([*entries, None].__getitem__, column.cast("B").cast("i"))


__all__ = ["Site", "scan_path", "scan_text"]
