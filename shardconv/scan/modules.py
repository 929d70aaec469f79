"""Modules: a scan's distinct values folded per module, each parsed once, with where it first occurs
and how often it does. ``signature`` is the one definition of "the same value" every later stage uses."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import KW_ONLY, field, replace
from itertools import groupby
from math import prod
from operator import itemgetter
from typing import TYPE_CHECKING

from shardconv.core.errors import ShardingError
from shardconv.core.model import Mesh
from shardconv.core.records import record
from shardconv.scan.columns import kind_of, site_column, values_of_kind
from shardconv.scan.native import site_at
from shardconv.scan.sites import Shape, SiteKind, ValueSite
from shardconv.scan.values import ParsedValue, site_value

if TYPE_CHECKING:
    from shardconv._native import Scan

Signature = tuple[object, ...]
# What a module holds, as the scan's ids: its groups (value, tensor types, name where it counts, and a
# num_partitions header's line) and its pairs. Two modules with one key get one verdict from every rule.
# A scan of one module keys it by content instead (``ModuleContent``), which holds across scans.
ModuleKey = tuple[object, ...]
NAMED_KINDS = frozenset(
    {
        SiteKind.SDY_MESH, SiteKind.STABLEHLO_MESH, SiteKind.COLLECTIVE_MESH, SiteKind.COLLECTIVE_AXES,
        SiteKind.SHARD_GRID, SiteKind.SHARD_SHARDING,
    }
)


@record
class ModuleContent:
    """The key of a scan's only module, by what it holds rather than the scan's ids, so that it holds
    across files and pieces (XLA's per-pass files of a module the pass left alone): per group its value,
    tensor types, name where it counts, and its first site's op and flags; the header lines; the pairs.
    ``largest`` as ``ModuleValues.largest``: a rule about a tensor's bytes also reads its line."""

    groups: tuple[tuple[object, ...], ...]
    headers: tuple[tuple[int, bytes | None], ...]
    pairs: bytes
    largest: int


def signature(site: ValueSite) -> Signature:
    """Two sites with one signature hold the same value on the same tensor type in the same role, so
    every rule gives them the same verdict (a mesh's name is part of it; an SSA name is not)."""
    return (site.kind, site.site, site.text, site.data, site.ranks, site.value if site.kind in NAMED_KINDS else None)


@record
class DistinctValue:
    site: ValueSite  # where it first occurs
    count: int
    value: ParsedValue | None
    error: ShardingError | None


@record
class ValuePair:
    """The HLO and the sdy sharding one value carries on one line (they must agree)."""

    hlo: DistinctValue
    sdy: DistinctValue
    count: int


@record
class ModuleValues:
    """One module's distinct values in order of first occurrence; meshes reset at every module."""

    _: KW_ONLY
    index: int
    values: tuple[DistinctValue, ...]
    pairs: tuple[ValuePair, ...]
    expected_lines: frozenset[int]
    total: int
    key: ModuleKey | ModuleContent | None = None  # None for a module with expected-error markers (never passed over)
    passed_over: bool = False  # its values were not built: ``known`` knew its key
    unbuilt: int = 0  # how many distinct values a passed-over module holds
    # what ``sites_by_type`` reads: the file's signatures (and its scan), this module's span of its
    # groups, the file's path
    signatures: _Signatures | None = field(default=None, compare=False, repr=False)
    groups: tuple[int, int] = field(default=(0, 0), compare=False, repr=False)
    path: str = field(default="", compare=False, repr=False)

    typed: dict[Signature, list[tuple[int, int]]] = field(default_factory=dict, compare=False, repr=False)
    largest: int | None = None  # the element count of the largest tensor a value annotates (None: unknown)

    def sites_by_type(
        self, dv: DistinctValue, wanted: Callable[[tuple[Shape | None, ...]], bool] = lambda shapes: True
    ) -> Iterator[ValueSite]:
        """The first site of each further tensor type (that ``wanted`` says yes to) holding ``dv``'s value:
        ``values`` keeps one site per value and rank, and a rule about a tensor's bytes reads every shape."""
        if self.signatures is None:
            return
        scan, known = self.signatures.scan, self.signatures.scan.shapes
        if not self.typed:  # one pass over the module's groups, on the first call
            for _, v, shapes, name, at, _ in scan.groups[slice(*self.groups)]:
                if shapes < len(known):
                    self.typed.setdefault(self.signatures.of(v, shapes, name), []).append((shapes, at))
        first: dict[int, int] = {}
        for shapes, at in self.typed.get(signature(dv.site), ()):
            first[shapes] = min(at, first.get(shapes, at))
        for shapes, at in sorted(first.items(), key=lambda item: item[1]):
            if known[shapes] != dv.site.shapes and wanted(known[shapes]):
                yield site_at(scan, at, self.path)

    @property
    def distinct(self) -> int:
        return len(self.values) + self.unbuilt


def named_mesh(site: ValueSite, value: ParsedValue | None) -> Mesh | None:
    """The mesh a ``sdy.mesh`` declaration site declares, named as declared (None for any other site,
    an inline ``#sdy.mesh<...>`` or one that does not parse)."""
    name = site.mesh_name
    if site.kind is not SiteKind.SDY_MESH or name is None or not isinstance(value, Mesh):
        return None
    return replace(value, name=name)


def module_values(
    scan: Scan, path: str, known: Callable[[ModuleKey | ModuleContent], int | None] = lambda key: None
) -> Iterator[ModuleValues]:
    """The modules of one scanned file, in order (always at least one, if empty). A module whose key
    ``known`` gives a count for (how many distinct values it holds: the caller built it before, a pass
    log's copies of a module, a per-pass file's module met in an earlier file) comes ``passed_over``, its
    values not built."""
    count = max(1, scan.modules)
    groups, pairs = scan.groups, scan.pairs
    group_spans, pair_spans = _module_spans(groups, count), _module_spans(pairs, count)
    header_values = values_of_kind(scan, (SiteKind.NUM_PARTITIONS,))
    headers = [i for i, g in enumerate(groups) if g[1] in header_values] if header_values else []
    expected = _expected_lines(scan, count)
    signatures = _Signatures(scan)
    for index in range(count):
        lo, hi = group_spans[index]
        mine = groups[lo:hi]
        total = sum(map(_COUNT, mine))
        mkey: ModuleKey | ModuleContent | None = None
        if not expected[index]:
            mkey = _module_key(scan, (lo, hi), pair_spans[index], headers)
            if count == 1:
                mkey = _content(scan, signatures, mkey, mine)
        unbuilt = known(mkey) if mkey is not None else None
        if unbuilt is not None:
            yield ModuleValues(
                index=index, values=(), pairs=(), expected_lines=expected[index], total=total, key=mkey,
                passed_over=True, unbuilt=unbuilt,
            )
            continue
        first, counts = signatures.firsts(mine)
        parsed: dict[Signature, DistinctValue] = {}
        for sig, i in sorted(first.items(), key=lambda item: item[1]):
            site = site_at(scan, i, path)
            value, err = site_value(site)
            parsed[sig] = DistinctValue(site, counts[sig], value, err)
        held: dict[tuple[Signature, Signature], int] = {}
        for _, h, s, n in pairs[slice(*pair_spans[index])]:
            key = (signatures.of_group(h), signatures.of_group(s))
            held[key] = held.get(key, 0) + n
        yield ModuleValues(
            index=index,
            values=tuple(parsed.values()),
            pairs=tuple(ValuePair(parsed[h], parsed[s], n) for (h, s), n in held.items()),
            expected_lines=expected[index],
            total=total,
            key=mkey,
            signatures=signatures,
            groups=(lo, hi),
            largest=mkey.largest if isinstance(mkey, ModuleContent) else signatures.largest(mine),
            path=path,
        )


_COUNT = itemgetter(5)


def _module_spans(rows: Sequence[tuple[int, ...]], count: int) -> list[tuple[int, int]]:
    """Per module, the slice of ``rows`` (groups or pairs, in module order, module first) it holds."""
    spans, at = [(0, 0)] * count, 0
    for module, run in groupby(map(itemgetter(0), rows)):
        n = sum(1 for _ in run)
        if module < count:
            spans[module] = (at, at + n)
        at += n
    return spans


def _module_key(scan: Scan, groups: tuple[int, int], pairs: tuple[int, int], headers: Sequence[int]) -> ModuleKey:
    """What a module holds, as the scan's ids, sliced from the scan's key bytes (C speed): equal keys mean
    equal groups in equal order, equal ``num_partitions`` header lines and equal pairs."""
    (lo, hi), (plo, phi) = groups, pairs
    held = headers[bisect_left(headers, lo) : bisect_left(headers, hi)]
    header_lines = tuple((i - lo, scan.line_texts.get(scan.groups[i][4])) for i in held)
    return (scan.group_keys[12 * lo : 12 * hi], header_lines, scan.pair_keys[8 * plo : 8 * phi])


def _content(scan: Scan, signatures: _Signatures, key: ModuleKey, mine: Sequence[tuple[int, ...]]) -> ModuleContent:
    """``key`` (a module's key as the scan's ids) by content: each group's parts as text, with its first
    site's op and flags, which the rules read of the site that stands for the group."""
    ops, flags, op_names = site_column(scan, "op"), site_column(scan, "flags"), scan.ops
    _, headers, pairs = key
    assert isinstance(headers, tuple) and isinstance(pairs, bytes)
    return ModuleContent(
        groups=tuple(
            (signatures.content(v, sh, n), op_names[ops[at]] if ops[at] < len(op_names) else None, flags[at])
            for _, v, sh, n, at, _ in mine
        ),
        headers=headers,
        pairs=pairs,
        largest=signatures.largest(mine),
    )


class _Signatures:
    """Each group's ``signature``, made once per distinct (value, tensor types, name): a pass log repeats
    its groups module after module."""

    def __init__(self, scan: Scan) -> None:
        self.scan = scan
        # the element count of the largest tensor each tensor-types entry holds (0: none known)
        self.sizes = [max((prod(d or 0 for d in s) for s in ss if s is not None), default=0) for ss in scan.shapes]
        self.by_parts: dict[tuple[int, int, int], Signature] = {}
        self.contents: dict[tuple[int, int, int], tuple[object, ...]] = {}

    def of(self, v: int, shapes: int, name: int) -> Signature:
        sig = self.by_parts.get((v, shapes, name))
        if sig is None:
            scan = self.scan
            kind, attr, _, text, data, _ = scan.values[v]
            sig = self.by_parts[v, shapes, name] = (
                kind_of(kind),
                attr,
                text.decode("utf-8", "surrogateescape"),
                data,
                tuple(len(s) for s in scan.shapes[shapes]) if shapes < len(scan.shapes) else None,
                scan.names[name] if name < len(scan.names) else None,
            )
        return sig

    def content(self, v: int, shapes: int, name: int) -> tuple[object, ...]:
        """A group's value, tensor types and name as themselves, not the scan's ids (``ModuleContent``)."""
        got = self.contents.get((v, shapes, name))
        if got is None:
            scan = self.scan
            got = self.contents[v, shapes, name] = (
                scan.values[v],
                scan.shapes[shapes] if shapes < len(scan.shapes) else None,
                scan.names[name] if name < len(scan.names) else None,
            )
        return got

    def largest(self, mine: Sequence[tuple[int, ...]]) -> int:
        """The element count of the largest tensor the groups ``mine`` annotate (0: none known)."""
        return max((self.sizes[g[2]] for g in mine if g[2] < len(self.sizes)), default=0)

    def of_group(self, group: int) -> Signature:
        _, v, shapes, name, _, _ = self.scan.groups[group]
        return self.of(v, shapes, name)

    def firsts(self, mine: Sequence[tuple[int, ...]]) -> tuple[dict[Signature, int], dict[Signature, int]]:
        """A module's signatures: the first site and the count of each."""
        first: dict[Signature, int] = {}
        counts: dict[Signature, int] = {}
        for _, v, shapes, name, at, n in mine:
            sig = self.of(v, shapes, name)
            seen = first.get(sig)
            first[sig] = at if seen is None else min(seen, at)
            counts[sig] = counts.get(sig, 0) + n
        return first, counts


def _expected_lines(scan: Scan, count: int) -> list[frozenset[int]]:
    """Per module, the lines lit ``expected-error`` markers point at (read only when the file has any)."""
    marker = values_of_kind(scan, (SiteKind.EXPECTED_ERROR,))
    out: list[set[int]] = [set() for _ in range(count)]
    if marker:
        values, modules, targets = (site_column(scan, c) for c in ("value", "module", "target"))
        for v, m, t in zip(values, modules, targets):
            if v in marker and m < count:
                out[m].add(t)
    return [frozenset(s) for s in out]


__all__ = [
    "NAMED_KINDS", "DistinctValue", "ModuleKey", "ModuleValues", "Signature", "ValuePair",
    "module_values", "named_mesh", "signature",
]
