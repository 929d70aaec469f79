"""Fixes as edits: the rewrites rules ask for, turned into byte-span edits of the file from the one scan
that found them (the scan keeps every grouped site's span), so nothing reads the file again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from shardconv.check.diagnostics import CheckFinding, Rewrite, SpanEdit
from shardconv.scan.table import table
from shardconv.text.layered import encode_layered

if TYPE_CHECKING:
    from shardconv.scan.table import Scan


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
    t = table(scan)
    by_value: dict[tuple[str, bytes], list[int]] = {}
    for v in range(t.value_count()):
        value = t.value(v)
        by_value.setdefault((value.kind.value, value.text.encode("utf-8", "surrogateescape")), []).append(v)
    wanted: dict[tuple[int, int], tuple[Rewrite, bytes]] = {}
    for r in rewrites:
        for v in by_value.get((r.kind, r.old), ()):
            value = t.value(v)
            if value.encoding.outer == "whole":
                continue
            new = encode_layered(r.new, value.encoding) if value.encoding.outer != "none" else r.new
            if new != value.raw:
                wanted[(r.module, v)] = (r, new)
    out: dict[Rewrite, list[SpanEdit]] = {}
    if not wanted:
        return out
    of_group = {g: (row.module, row.value) for g, row in enumerate(t.group_rows()) if (row.module, row.value) in wanted}
    for span in t.group_spans(list(of_group)):
        m, v = of_group[span.group]
        r, new = wanted[(m, v)]
        out.setdefault(r, []).append(
            SpanEdit(start=span.start, end=span.end, old=t.value(v).raw, new=new, line=span.line)
        )
    return out


__all__ = ["with_edits"]
