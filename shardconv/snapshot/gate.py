"""``diff BASELINE DUMP``: a dump snapshotted and held against the entries its baseline keeps for it,
reported with both grids of every moved value; ``--update`` rewrites the baseline in one atomic write."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import KW_ONLY
from typing import Any

from shardconv.core.records import record
from shardconv.snapshot.baseline import BaselineError, load, render
from shardconv.snapshot.compare import Change, compare, entry_placement
from shardconv.snapshot.take import Entry, dump_entries
from shardconv.text.atomic import write_atomic
from shardconv.ui.tiles import placement_text


@record
class Verdict:
    """A dump held against its baseline: the baseline's name for it, the changes, what the baseline holds
    of other dumps (kept by ``--update``) and the dump's own entries."""

    _: KW_ONLY
    baseline: str
    dump: str
    label: str
    changes: tuple[Change, ...]
    others: tuple[Entry, ...]
    entries: tuple[Entry, ...]

    @property
    def failing(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.failing)


def against_baseline(baseline: str, dump: str) -> Verdict:
    """``dump`` against ``baseline``: a baseline of one dump is that dump's, whatever its path; one of
    several names the dump by the path it was snapshotted as."""
    (verdict,) = against_baseline_all(baseline, [dump], every=False)
    return verdict


def against_baseline_all(baseline: str, dumps: Sequence[str], *, every: bool = True) -> list[Verdict]:
    """Each of ``dumps`` against ``baseline``, read once: a baseline of one dump holds one dump named
    any way; one of several, each dump by the path it was snapshotted as. BaselineError when a dump has
    no entries there, or (``every``) the baseline holds dumps not given."""
    held = load(baseline)
    labels = sorted({e.dump for e in held})
    if len(labels) == 1 and len(dumps) == 1:
        named = {dumps[0]: labels[0]}
    else:
        named = {d: _label(baseline, d, labels) for d in dumps}
    left = sorted(set(labels) - set(named.values()))
    if every and left:
        raise BaselineError(f"{baseline} holds dumps not given: {', '.join(left)}")
    verdicts = []
    for dump, label in named.items():
        entries = tuple(dump_entries(dump, label))
        mine = [e for e in held if e.dump == label]
        verdicts.append(Verdict(
            baseline=baseline, dump=dump, label=label, changes=tuple(compare(mine, entries)),
            others=tuple(e for e in held if e.dump != label), entries=entries,
        ))
    return verdicts


def _label(baseline: str, dump: str, labels: Sequence[str]) -> str:
    for label in labels:
        if label == dump or os.path.normpath(label) == os.path.normpath(dump):
            return label
    if not labels:
        return dump
    raise BaselineError(f"{baseline} holds no dump {dump!r}; it holds: {', '.join(labels)}")


def update(v: Verdict) -> None:
    """Rewrite the baseline with the dump's entries (those of its other dumps kept), atomically."""
    write_atomic(v.baseline, render([*v.others, *v.entries]))


def report_text(v: Verdict, *, width: int) -> str:
    """Every change, each moved value with its grid in the baseline and now, and a summary line."""
    lines: list[str] = []
    for c in v.changes:
        lines.append(f"{v.dump}: {c.value}: {_what(c)}")
        for side, e in (("baseline", c.old), ("now", c.new)):
            if e is not None:
                said = e.placement if e.placement is not None else f"no placement ({e.error})"
                lines.append(f"  {side + ':':<10}{e.sharding}" + (f"  = {said}" if said != e.sharding else ""))
        if c.change == "placement":
            for side, e in (("baseline", c.old), ("now", c.new)):
                p = entry_placement(e) if e is not None else None
                if p is not None:
                    lines += [f"  {side}:", *("    " + row for row in placement_text(p, width=width - 4).split("\n"))]
    failing = len(v.failing)
    verdict = "every placement as in the baseline"
    if failing:
        verdict = f"{failing} value(s) moved, gained or lost their sharding"
    respelled = f"; {len(v.changes) - failing} respelled" if len(v.changes) > failing else ""
    lines.append(f"{v.dump} against {v.baseline}: {verdict}{respelled}")
    return "\n".join(lines)


def _what(c: Change) -> str:
    return {
        "placement": "placement changed",
        "added": "sharded now, not in the baseline",
        "removed": "in the baseline, no longer sharded",
        "mesh": "same placement, other mesh",
        "spelling": "same placement, respelled",
    }[c.change]


def report_json(v: Verdict) -> dict[str, Any]:
    return {
        "baseline": v.baseline, "dump": v.dump, "label": v.label, "failed": bool(v.failing),
        "changes": [
            {"value": c.value, "change": c.change, "baseline": _entry_json(c.old), "now": _entry_json(c.new)}
            for c in v.changes
        ],
    }


def _entry_json(e: Entry | None) -> dict[str, Any] | None:
    if e is None:
        return None
    return {
        "sharding": e.sharding, "mesh": e.mesh, "placement": e.placement, "devices": e.devices,
        "shape": None if e.shape is None else list(e.shape), "error": e.error,
    }


__all__ = ["Verdict", "against_baseline", "against_baseline_all", "report_json", "report_text", "update"]
