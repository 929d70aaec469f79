"""The scan floor's contract: one native scan read through named columns and records, never its raw
tuples. Every reader above ``scan/`` (check, trace, explain, outputs, server) is given these views;
the native ``Scan`` stays an opaque handle to them (``tests/scan/test_floor_private.py``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from shardconv.scan.columns import NONE, kind_code, kind_flags, kind_of, site_column, sites_of, values_of_kind
from shardconv.scan.sites import Shape, SiteKind
from shardconv.text.layered import StringEncoding

if TYPE_CHECKING:
    from shardconv._native import Follower as Follower
    from shardconv._native import Names as Names
    from shardconv._native import Scan as Scan
    from shardconv._native import Texts, _Maybe, _SeenAt, _Step

    Maybe = _Maybe  # the follower's answers, as trace reads them
    SeenAt = _SeenAt
    Step = _Step


class Value(NamedTuple):
    """One distinct value: its kind, the attribute or syntax it came from, its bytes in the file, its
    decoded text, a binary OpSharding it holds, and the string escapes it sat in."""

    kind: SiteKind
    site: str
    raw: bytes
    text: str
    data: bytes | None
    encoding: StringEncoding


class Scope(NamedTuple):
    """A function (``kind`` "func") or HLO computation (``"computation"``), and whether it is the entry."""

    name: str
    kind: str
    entry: bool


class Group(NamedTuple):
    """Distinct (module, value, shapes, name) of ``every_site=False``'s sites: its first site, and how many."""

    module: int
    value: int
    shapes: int
    name: int
    first_site: int
    sites: int


class Span(NamedTuple):
    """A grouped site's place: its group, byte span and line."""

    group: int
    start: int
    end: int
    line: int


class Marker(NamedTuple):
    """A ``shardconv: ignore[...]`` comment: its place, the text between its brackets, its line as far as
    read, and its column in that line."""

    line: int
    col: int
    inside: bytes
    source: bytes
    source_col: int


class Read(NamedTuple):
    """A distinct (value, shapes, op) a site has (``names=True``): each an index, or ``NONE``."""

    value: int
    shapes: int
    op: int


class SiteColumns:
    """The per-site columns, one named memoryview each (``NONE``: no value); ``key`` and ``read`` are
    empty unless the scan was asked for ``names``."""

    def __init__(self, scan: Scan) -> None:
        have = scan.columns
        empty = memoryview(b"").cast("I")

        def col(name: str) -> memoryview:
            return site_column(scan, name) if name in have else empty

        self.value, self.name, self.shapes, self.scope, self.op = (
            col(c) for c in ("value", "name", "shapes", "scope", "op")
        )
        self.module, self.line, self.col, self.end_line, self.end_col = (
            col(c) for c in ("module", "line", "col", "end_line", "end_col")
        )
        self.target, self.param, self.flags, self.start, self.end = (
            col(c) for c in ("target", "param", "flags", "start", "end")
        )
        self.key, self.read = col("key"), col("read")


class Table:
    """One scan's sites and distinct values, typed: columns by name, each distinct value decoded once
    as a ``Value``, and its other tables as records."""

    def __init__(self, scan: Scan) -> None:
        self._scan = scan
        self.lines = scan.lines
        self.size = scan.size
        self.names: Texts = scan.names  # value names: "%x", "arg0", "result[1]", "@mesh", "module"
        self.ops: list[str] = scan.ops  # defining ops: "parameter", "stablehlo.add", ...
        self.keys: Texts = scan.keys  # what trace follows a value by (``names=True``)
        self.kind_codes = scan.value_kinds  # each distinct value's kind code, one byte per value
        self._values: list[Value | None] = []  # filled on the first ``value``: a reader may ask for none
        self._scopes: list[Scope] | None = None

    @cached_property
    def col(self) -> SiteColumns:
        """The per-site columns, made on first use: a reader of the suppressions or values alone (one
        small file's check) reads none."""
        return SiteColumns(self._scan)

    @property
    def sites(self) -> int:
        """How many site rows the scan holds."""
        return len(self._scan.columns.get("line", b"")) // 4

    def root_sites(self, within: range) -> list[int]:
        """The sites (``within`` a range) of the entry's ROOT, which trace keys ``result`` (``names=True``)."""
        key = self._scan.result_key
        return [] if key == NONE else sites_of(self._scan, (key,), "key", within)

    def holds(self, scan: Scan) -> bool:
        """Whether this table is ``scan``'s."""
        return self._scan is scan

    def value(self, v: int) -> Value:
        """Distinct value ``v``, decoded on first use."""
        if not self._values:
            self._values = [None] * len(self._scan.values)
        got = self._values[v]
        if got is None:
            kind, site, raw, text, data, enc = self._scan.values[v]
            got = Value(kind_of(kind), site, raw, text.decode("utf-8", "surrogateescape"), data, StringEncoding(*enc))
            self._values[v] = got
        return got

    def value_count(self) -> int:
        return len(self._scan.values)

    def shape(self, sh: int) -> tuple[Shape, ...] | None:
        """The annotated tensor types ``sh`` stands for (None for ``NONE``)."""
        return None if sh == NONE else self._scan.shapes[sh]

    def all_shapes(self) -> list[tuple[Shape, ...]]:
        """Every distinct annotated tensor-type tuple, indexed by the ``shapes`` column."""
        return self._scan.shapes

    def op(self, o: int) -> str | None:
        return None if o == NONE else self._scan.ops[o]

    def name(self, n: int) -> str | None:
        return None if n == NONE else self._scan.names[n]

    def all_scopes(self) -> list[Scope]:
        """Every function and HLO computation, indexed by the ``scope`` column."""
        if self._scopes is None:
            self._scopes = [Scope(*s) for s in self._scan.scopes]
        return self._scopes

    def scope(self, s: int) -> Scope | None:
        return None if s == NONE else self.all_scopes()[s]

    def read(self, r: int) -> Read:
        return Read(*self._scan.reads[r])

    def read_count(self) -> int:
        return len(self._scan.reads)

    def kept_line(self, i: int) -> bytes:
        """The physical line the scan kept for site ``i`` (b"" when it kept none)."""
        return self._scan.line_texts.get(i, b"")

    def kept_from(self, i: int) -> int:
        """The byte of site ``i``'s line its kept text starts at (a long line kept in part)."""
        return self._scan.line_cuts.get(i, 0)

    def flagged(self, kinds: Collection[SiteKind]) -> bytes:
        """Per distinct value, 1 where its kind is one of ``kinds`` (see ``columns.kind_flags``)."""
        return kind_flags(self._scan, kinds)

    def of_kind(self, kinds: Collection[SiteKind]) -> set[int]:
        """The distinct values whose kind is one of ``kinds``."""
        return values_of_kind(self._scan, kinds)

    def sites_holding(self, values: Collection[int], column: str = "value", within: range | None = None) -> list[int]:
        """The sites (``within`` a range) whose ``column`` holds any of ``values``, found natively."""
        return sites_of(self._scan, values, column, within)

    def segment_digest(self, s: int) -> int | None:
        """The hash of segment ``s``'s text after its header (``names=True``); None past the last."""
        digests = self._scan.digests
        return digests[s] if s < len(digests) else None

    def definitions(self, segments: Sequence[int]) -> Names:
        """What ``segments`` define together (a later one wins)."""
        return self._scan.defined_in(list(segments))

    def group_rows(self) -> list[Group]:
        return [Group(*g) for g in self._scan.groups]

    def group_spans(self, groups: Sequence[int]) -> list[Span]:
        """Every grouped site's place whose group is in ``groups``, in report order."""
        return [Span(*s) for s in self._scan.spans(list(groups))]

    def markers(self) -> list[Marker]:
        """The suppression comments, in file order."""
        return [Marker(*m) for m in self._scan.suppressions]


_last: Table | None = None


def table(scan: Scan) -> Table:
    """The typed view of ``scan`` (the last one asked for is kept: its sites are read in turn)."""
    global _last
    if _last is None or not _last.holds(scan):
        _last = Table(scan)
    return _last


__all__ = ["NONE", "Group", "Marker", "Read", "Scope", "SiteColumns", "Span", "Table", "Value", "kind_code", "table"]
