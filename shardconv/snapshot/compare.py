"""A dump against its baseline, value by value: a moved placement, a value gained or lost fail the gate;
a new spelling or mesh of the same placement does not."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY

from shardconv.core.errors import ShardingError
from shardconv.core.placement import Placement, placement, placement_key
from shardconv.core.records import record
from shardconv.formats.hlo.read import parse_hlo
from shardconv.snapshot.take import Entry

FAILING = frozenset({"placement", "added", "removed"})


@record
class Change:
    """How one value differs from its baseline: ``placement`` (its data moved), ``added`` / ``removed``
    (a value the baseline does not hold / no longer sharded), ``mesh`` or ``spelling`` (same placement)."""

    _: KW_ONLY
    value: str
    change: str
    old: Entry | None
    new: Entry | None

    @property
    def failing(self) -> bool:
        return self.change in FAILING


def compare(old: Sequence[Entry], new: Sequence[Entry]) -> list[Change]:
    """The changes from ``old`` to ``new`` (one dump's entries each), sorted by value."""
    before = {e.value: e for e in old}
    after = {e.value: e for e in new}
    out: list[Change] = []
    for key in sorted(before.keys() | after.keys()):
        a, b = before.get(key), after.get(key)
        what = "added" if a is None else "removed" if b is None else _change(a, b)
        if what is not None:
            out.append(Change(value=key, change=what, old=a, new=b))
    return out


def _change(a: Entry, b: Entry) -> str | None:
    pa, pb = entry_placement(a), entry_placement(b)
    if (pa is None) != (pb is None) or (pa is None and a.error != b.error):
        return "placement"
    if pa is not None and pb is not None and placement_key(pa) != placement_key(pb):
        return "placement"
    if a.mesh != b.mesh:
        return "mesh"
    return "spelling" if a.sharding != b.sharding else None


def entry_placement(e: Entry) -> Placement | None:
    """The tiles and devices an entry's placement string stands for (with slices when its shape is
    known); None when it has none or it does not parse."""
    if e.placement is None:
        return None
    shape = e.shape if e.shape is not None and all(d is not None for d in e.shape) else None
    try:
        hlo = parse_hlo(e.placement, num_devices=e.devices)
        return placement(
            hlo, shape=tuple(d for d in shape if d is not None) if shape is not None else None,
            num_devices=e.devices, rank=len(e.shape) if e.shape is not None else None,
        )
    except ShardingError:
        return None


__all__ = ["FAILING", "Change", "compare", "entry_placement"]
