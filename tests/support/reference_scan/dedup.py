"""Dedup: folds a file's stream of sites into its modules, each distinct (value, tensor type) pair
once with the place it first occurs and how often it does, parsed once. ``signature`` is the one
definition of "the same value" every later stage relies on."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from shardconv.scan.values import parse_value
from shardconv.scan.modules import DistinctValue, ModuleValues, Signature, ValuePair, signature
from shardconv.scan.sites import SiteKind, ValueSite
from support.reference_scan.repeats import RepeatedSites, SiteStream

_HLO_PAIR_SITES = frozenset({"sharding=", "mhlo.sharding"})
_SDY_PAIR_SITES = frozenset({"xla.sdy.sharding", "sdy.sharding"})


class _Module:
    def __init__(self, index: int) -> None:
        self.index = index
        self.first: dict[Signature, ValueSite] = {}
        self.counts: dict[Signature, int] = {}
        self.pairs: dict[tuple[Signature, Signature], int] = {}
        self.expected: set[int] = set()
        self.total = 0
        self.last: dict[int, tuple[ValueSite, Signature]] = {}  # by identity: the site is held, so ids stay unique

    def add(self, site: ValueSite, times: int = 1) -> Signature:
        self.total += times
        seen = self.last.get(id(site))
        if seen is not None and seen[0] is site:  # the extractor handed the same site again (a repeat)
            sig = seen[1]
        else:
            sig = signature(site)
            if len(self.last) >= 1 << 14:
                self.last.clear()
            self.last[id(site)] = (site, sig)
        n = self.counts.get(sig)
        if n is None:
            self.first[sig] = site
            self.counts[sig] = times
        else:
            self.counts[sig] = n + times
        return sig

    def freeze(self) -> ModuleValues:
        parsed: dict[Signature, DistinctValue] = {}
        for sig, site in self.first.items():
            value, err = parse_value(site.kind, site.text, site.data)
            parsed[sig] = DistinctValue(site, self.counts[sig], value, err)
        pairs = tuple(ValuePair(parsed[h], parsed[s], n) for (h, s), n in self.pairs.items())
        return ModuleValues(
            index=self.index,
            values=tuple(parsed.values()),
            pairs=pairs,
            expected_lines=frozenset(self.expected),
            total=self.total,
        )


@dataclass
class Numbering:
    """Where the module numbering stands: a module header starts a new module once the current one
    holds anything. ``used`` is how far a later part of the same file starts numbering on from."""

    index: int = 0
    filled: bool = False

    @property
    def used(self) -> int:
        return self.index + self.filled


def numbered(sites: Iterable[SiteStream], at: Numbering | None = None) -> Iterator[tuple[int, SiteStream]]:
    """Each site with the index of its module; module headers themselves are dropped. ``--fix`` numbers
    modules the same way. The numbering starts where ``at`` stands and, once the sites run out, ``at``
    holds where it ended."""
    index, filled = (at.index, at.filled) if at is not None else (0, False)
    for site in sites:
        if isinstance(site, RepeatedSites):
            yield index, site
            continue
        if site.kind is SiteKind.MODULE_START:
            if filled:
                index, filled = index + 1, False
            continue
        filled = True
        yield index, site
    if at is not None:
        at.index, at.filled = index, filled


def modules(sites: Iterable[SiteStream], at: Numbering | None = None) -> Iterator[ModuleValues]:
    """The modules of one file, each as soon as the next one starts (``at``: as for ``numbered``)."""
    mod = _Module(0)
    line = -1
    on_line: dict[str | None, dict[str, Signature]] = {}
    for index, site in numbered(sites, at):
        if isinstance(site, RepeatedSites):  # plain lines: never paired, never a module header
            for s, n in site.counts:
                mod.add(s, n)
            continue
        if site.line != line:
            _pair(mod, on_line)
            on_line, line = {}, site.line
        if index != mod.index:
            yield mod.freeze()
            mod = _Module(index)
        if site.kind is SiteKind.EXPECTED_ERROR:
            if site.target_line is not None:
                mod.expected.add(site.target_line)
            continue
        sig = mod.add(site)
        if site.kind is SiteKind.HLO and site.site in _HLO_PAIR_SITES:
            on_line.setdefault(site.value, {})["hlo"] = sig
        elif site.kind in (SiteKind.SDY_SHARDING, SiteKind.SDY_PER_VALUE) and site.site in _SDY_PAIR_SITES:
            on_line.setdefault(site.value, {})["sdy"] = sig
    _pair(mod, on_line)
    yield mod.freeze()


def joined(a: ModuleValues, b: ModuleValues) -> ModuleValues:
    """One module read in two parts (a file cut inside it): ``a``'s values, then ``b``'s new ones, each
    counted over both, as one pass over the whole module gives them."""
    merged: dict[Signature, DistinctValue] = {signature(v.site): v for v in a.values}
    for v in b.values:
        sig = signature(v.site)
        old = merged.get(sig)
        merged[sig] = v if old is None else replace(old, count=old.count + v.count)
    counts: dict[tuple[Signature, Signature], int] = {}
    for p in (*a.pairs, *b.pairs):
        key = (signature(p.hlo.site), signature(p.sdy.site))
        counts[key] = counts.get(key, 0) + p.count
    pairs = tuple(ValuePair(merged[h], merged[s], n) for (h, s), n in counts.items())
    return ModuleValues(
        index=a.index,
        values=tuple(merged.values()),
        pairs=pairs,
        expected_lines=a.expected_lines | b.expected_lines,
        total=a.total + b.total,
    )


def _pair(mod: _Module, on_line: dict[str | None, dict[str, Signature]]) -> None:
    for entry in on_line.values():
        if "hlo" in entry and "sdy" in entry:
            key = (entry["hlo"], entry["sdy"])
            mod.pairs[key] = mod.pairs.get(key, 0) + 1


__all__ = [
    "DistinctValue",
    "ModuleValues",
    "Numbering",
    "Signature",
    "ValuePair",
    "joined",
    "modules",
    "numbered",
    "signature",
]
