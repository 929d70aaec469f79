"""Fixes as edits: the rewrites rules ask for, turned into byte-span edits of the file from the one scan
that found them (the scan keeps every grouped site's span), so nothing reads the file again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from shardconv.check.diagnostics import CheckFinding, Rewrite, SpanEdit
from shardconv.scan.columns import kind_of
from shardconv.text.layered import StringEncoding, encode_layered

if TYPE_CHECKING:
    from shardconv._native import Scan


def with_edits(findings: Sequence[CheckFinding], scan: Scan) -> list[CheckFinding]:
    """``findings`` with each fix's edits filled in from ``scan``."""
    rewrites = [r for f in findings if f.fix is not None for r in f.fix.rewrites]
    if not rewrites:
        return list(findings)
    spans = _spans(scan, rewrites)
    out: list[CheckFinding] = []
    for f in findings:
        if f.fix is not None:
            edits = tuple(e for r in f.fix.rewrites for e in spans.get(r, ()))
            f = replace(f, fix=replace(f.fix, edits=edits))
        out.append(f)
    return out


def _spans(scan: Scan, rewrites: Sequence[Rewrite]) -> dict[Rewrite, list[SpanEdit]]:
    """Each rewrite's edits: one per site of its module whose value it names (unchanged bytes give none)."""
    by_value: dict[tuple[str, bytes], list[int]] = {}
    for i, (kind, _, _, text, _, _) in enumerate(scan.values):
        by_value.setdefault((kind_of(kind).value, text), []).append(i)
    wanted: dict[tuple[int, int], tuple[Rewrite, bytes]] = {}
    for r in rewrites:
        for v in by_value.get((r.kind, r.old), ()):
            raw, enc = scan.values[v][2], StringEncoding(*scan.values[v][5])
            if enc.outer == "whole":
                continue
            new = encode_layered(r.new, enc) if enc.outer != "none" else r.new
            if new != raw:
                wanted[(r.module, v)] = (r, new)
    out: dict[Rewrite, list[SpanEdit]] = {}
    if not wanted:
        return out
    of_group = {g: (m, v) for g, (m, v, *_) in enumerate(scan.groups) if (m, v) in wanted}
    for g, start, end, line in scan.spans(list(of_group)):
        m, v = of_group[g]
        r, new = wanted[(m, v)]
        out.setdefault(r, []).append(SpanEdit(start=start, end=end, old=scan.values[v][2], new=new, line=line))
    return out


__all__ = ["with_edits"]
