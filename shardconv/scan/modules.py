"""Modules: a scan's distinct values folded per module, each parsed once, with where it first occurs
and how often it does. ``signature`` is the one definition of "the same value" every later stage uses."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import KW_ONLY, replace
from typing import TYPE_CHECKING

from shardconv.core.errors import ShardingError
from shardconv.core.model import Mesh
from shardconv.core.records import record
from shardconv.scan.columns import kind_of, site_column, values_of_kind
from shardconv.scan.native import site_at
from shardconv.scan.sites import SiteKind, ValueSite
from shardconv.scan.values import ParsedValue, parse_value

if TYPE_CHECKING:
    from shardconv._native import Scan

Signature = tuple[object, ...]
# What a module holds, as the scan's ids: its groups (value, tensor types, name where it counts, and a
# num_partitions header's line) and its pairs. Two modules with one key get one verdict from every rule.
ModuleKey = tuple[object, ...]
NAMED_KINDS = frozenset(
    {SiteKind.SDY_MESH, SiteKind.STABLEHLO_MESH, SiteKind.COLLECTIVE_MESH, SiteKind.COLLECTIVE_AXES}
)


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
    key: ModuleKey | None = None  # None for a module with expected-error markers (never passed over)
    passed_over: bool = False  # its values were not built: ``skip`` knew its key
    unbuilt: int = 0  # how many distinct values a passed-over module holds

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
    scan: Scan, path: str, skip: Callable[[ModuleKey], bool] = lambda key: False
) -> Iterator[ModuleValues]:
    """The modules of one scanned file, in order (always at least one, if empty). A module whose key
    ``skip`` says yes to comes ``passed_over``, its values not built (a pass log's copies of a module)."""
    count = max(1, scan.modules)
    first: list[dict[Signature, int]] = [{} for _ in range(count)]  # signature -> first site
    counts: list[dict[Signature, int]] = [{} for _ in range(count)]
    keys: list[list[object]] = [[] for _ in range(count)]
    of_group: list[Signature] = []
    ranks = [tuple(len(s) for s in shapes) for shapes in scan.shapes]
    by_parts: dict[tuple[int, int, int], Signature] = {}  # a pass log repeats its groups module after module
    for module, v, shapes, name, at, n in scan.groups:
        sig = by_parts.get((v, shapes, name))
        if sig is None:
            kind, attr, _, text, data, _ = scan.values[v]
            sig = by_parts[v, shapes, name] = (
                kind_of(kind),
                attr,
                text.decode("utf-8", "surrogateescape"),
                data,
                ranks[shapes] if shapes < len(ranks) else None,
                scan.names[name] if name < len(scan.names) else None,
            )
        of_group.append(sig)
        seen = first[module].get(sig)
        first[module][sig] = at if seen is None else min(seen, at)
        counts[module][sig] = counts[module].get(sig, 0) + n
        header = scan.line_texts.get(at) if sig[0] is SiteKind.NUM_PARTITIONS else None
        keys[module].append((v, shapes, name, header))
    expected = _expected_lines(scan, count)
    pairs: list[dict[tuple[Signature, Signature], int]] = [{} for _ in range(count)]
    for module, h, s, n in scan.pairs:
        key = (of_group[h], of_group[s])
        pairs[module][key] = pairs[module].get(key, 0) + n
    for index in range(count):
        total = sum(counts[index].values())
        mkey = None if expected[index] else (tuple(keys[index]), tuple(pairs[index]))
        if mkey is not None and skip(mkey):
            yield ModuleValues(
                index=index,
                values=(),
                pairs=(),
                expected_lines=expected[index],
                total=total,
                key=mkey,
                passed_over=True,
                unbuilt=len(first[index]),
            )
            continue
        parsed: dict[Signature, DistinctValue] = {}
        for sig, i in sorted(first[index].items(), key=lambda item: item[1]):
            site = site_at(scan, i, path)
            value, err = parse_value(site.kind, site.text, site.data)
            parsed[sig] = DistinctValue(site, counts[index][sig], value, err)
        held = tuple(ValuePair(parsed[h], parsed[s], n) for (h, s), n in pairs[index].items())
        yield ModuleValues(
            index=index,
            values=tuple(parsed.values()),
            pairs=held,
            expected_lines=expected[index],
            total=total,
            key=mkey,
        )


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
