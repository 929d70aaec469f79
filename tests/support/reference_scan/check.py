"""``check`` as it ran on the reference scanner: its sites, folded by its dedup, through the product's
rules, with its suppression scanner. What the native pipeline must report, finding for finding."""

from __future__ import annotations

import io

from shardconv.check.context import CheckOptions
from shardconv.check.diagnostics import FileReport, Skipped
from shardconv.check.evaluate import dropped, module_findings, position
from shardconv.check.stages import stage_of_name
from shardconv.check.suppress import apply_suppressions
from support.reference_scan.dedup import modules
from support.reference_scan.lines import ReadOptions, read_sites
from support.reference_scan.suppress import SuppressionScanner


def reference_report(data: bytes, path: str, opts: CheckOptions, read: ReadOptions | None = None) -> FileReport | Skipped:
    stream = SuppressionScanner(io.BytesIO(data))  # type: ignore[arg-type]
    kind, sites = read_sites(stream, path, read or ReadOptions())
    if kind.skipped:
        return Skipped(path, kind.reason)
    counts: dict[str, int] = {}
    stage = stage_of_name(path)
    found = []
    total = distinct = 0
    for module in modules(sites):
        total += module.total
        distinct += len(module.values)
        more, counts = module_findings(path, module, opts, stage, counts)  # type: ignore[arg-type]
        found.extend(more)
    found.sort(key=position)
    kept = apply_suppressions(found, stream.found, path, report_unused=opts.report_unused)  # type: ignore[arg-type]
    kept = [f for f in kept if f.rule not in opts.ignore]
    return FileReport(
        path=path,
        kind=kind.kind,
        findings=tuple(kept),
        values=total,
        distinct=distinct,
        dropped=dropped(counts, opts.max_per_rule),
    )


__all__ = ["reference_report"]
