"""Parts: a file's report put together from the reports of its parts (``split``), read by one worker
each. A module cut in two is joined before the rules see it; the per-rule cap, the suppressions and
the module numbers of fixes apply to the file as a whole, so the report is the one a single pass gives."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import accumulate
from typing import BinaryIO, cast

from shardconv.check.context import CheckOptions
from shardconv.check.dedup import ModuleValues, Numbering, joined, modules
from shardconv.check.diagnostics import CheckFinding, FileReport, Skipped
from shardconv.check.evaluate import RuleCap, module_findings, position
from shardconv.check.lines import ReadOptions, read_sites
from shardconv.check.sites import FileKind
from shardconv.check.split import WHOLE, Part, PartReader
from shardconv.check.suppress import Suppression, SuppressionScanner, apply_suppressions

# A part's findings, in order: those of whole modules (a tuple), and the modules cut by a part boundary
# (checked once joined with the rest of them).
Segment = tuple[CheckFinding, ...] | ModuleValues


@dataclass(frozen=True)
class PartReport:
    """What one part of a file gives, before the file's parts are put together."""

    kind: FileKind
    segments: tuple[Segment, ...]
    total: int  # values and distinct values of its whole modules
    distinct: int
    dropped: int
    suppressions: tuple[Suppression, ...]
    modules: int  # module numbers used: the part after numbers its modules on from here
    opens_inside: bool  # its first module began in the part before


def part_report(
    f: BinaryIO,
    path: str,
    opts: CheckOptions,
    part: Part = WHOLE,
    read: ReadOptions | None = None,
    on_read: Callable[[int], None] | None = None,
) -> PartReport:
    """Check ``part`` of the stream ``f`` (``WHOLE``: all of it, from where it stands)."""
    inner: BinaryIO = f if part == WHOLE else cast(BinaryIO, PartReader(f, part.start, part.end))
    stream = SuppressionScanner(inner, on_read, part.resume.line if part.resume is not None else 1)
    kind, sites = read_sites(stream, path, read or ReadOptions(), part.resume)
    if kind.skipped:
        return PartReport(kind, (), 0, 0, 0, (), 0, part.opens_inside)
    at, cap = Numbering(filled=part.opens_inside), RuleCap(opts.max_per_rule)  # a cut module holds values
    segments: list[Segment] = []
    found: list[CheckFinding] = []
    total = distinct = 0

    def take(module: ModuleValues, cut: bool) -> None:
        nonlocal total, distinct
        if cut:
            if found:
                segments.append(tuple(found))
                found.clear()
            segments.append(module)
        else:
            total += module.total
            distinct += len(module.values)
            found.extend(module_findings(path, module, opts, cap))

    first: ModuleValues | None = None
    held: ModuleValues | None = None  # the module before: the last one is known only at the end
    for module in modules(sites, at):
        if held is not None:
            take(held, held is first and part.opens_inside)
        if first is None:
            first = module
        held = module
    assert held is not None  # there is always a module, if an empty one
    take(held, (held is first and part.opens_inside) or part.ends_inside)
    if found:
        segments.append(tuple(found))
    used = at.index if part.ends_inside else at.used  # a module cut in two is numbered once
    return PartReport(
        kind, tuple(segments), total, distinct, cap.dropped, tuple(stream.found), used, part.opens_inside
    )


def file_report(path: str, opts: CheckOptions, parts: Sequence[PartReport]) -> FileReport | Skipped:
    """One file's report from its parts, in file order."""
    kind = parts[0].kind
    if kind.skipped:
        return Skipped(path, kind.reason)
    cap = RuleCap(opts.max_per_rule)
    found: list[CheckFinding] = []
    total, distinct = sum(p.total for p in parts), sum(p.distinct for p in parts)
    cut: ModuleValues | None = None  # a module cut by part boundaries, joined so far

    def check_cut() -> None:
        nonlocal cut, total, distinct
        if cut is not None:
            total += cut.total
            distinct += len(cut.values)
            found.extend(module_findings(path, cut, opts, cap))
            cut = None

    for p, first_module in zip(parts, accumulate((p.modules for p in parts), initial=0)):
        for i, seg in enumerate(p.segments):
            continued = i == 0 and p.opens_inside and cut is not None  # the rest of the module cut before
            if not continued:
                check_cut()
            if isinstance(seg, ModuleValues):
                seg = replace(seg, index=seg.index + first_module)
                cut = joined(cut, seg) if continued and cut is not None else seg
            else:
                found.extend(_renumbered(f, first_module) for f in seg if cap.admit(f.rule))
    check_cut()
    found.sort(key=position)
    suppressions = [s for p in parts for s in p.suppressions]
    kept = apply_suppressions(found, suppressions, path, report_unused=opts.report_unused)
    dropped = sum(p.dropped for p in parts) + cap.dropped
    return FileReport(path, kind.kind, tuple(f for f in kept if f.rule not in opts.ignore), total, distinct, dropped)


def _renumbered(f: CheckFinding, first_module: int) -> CheckFinding:
    """``f`` of a part whose modules are numbered from ``first_module`` on in the file (for ``--fix``)."""
    if f.fix is None or not first_module:
        return f
    rewrites = tuple(replace(r, module=r.module + first_module) for r in f.fix.rewrites)
    return replace(f, fix=replace(f.fix, rewrites=rewrites))


__all__ = ["PartReport", "Segment", "file_report", "part_report"]
